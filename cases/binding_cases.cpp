// Suite `binding`: the effective configuration, the resolution audit, error shape, missing
// functions and the driver path.
#include "cases/support.hpp"
#include "harness/driver/binding_audit.hpp"
#include "harness/driver/driver_error.hpp"
#include "harness/driver/driver_text.hpp"
#include "harness/framework/case_registry.hpp"

namespace cuparity::cases {
namespace {

/// binding.config.*: observations that describe the configuration itself. The runner does not
/// require them to agree inside a semantic group; it checks them against the matrix's
/// expectations (binding, stream 0, warnings).
void config_effective(case_context &ctx) {
  const auto &c = ctx.config();
  ctx.observe("binding", c.binding);
  ctx.observe("stream0", c.per_thread_default_stream ? "per-thread" : "legacy");
  ctx.observe("fallback", c.fallback);
  ctx.observe("warnings", c.warnings);
  ctx.observe("simulated", c.simulated);
}

void resolve_audit(case_context &ctx) {
  auto report = audit_bindings(ctx.drv());
  // Declared: cuGetProcAddress (the audit's question to the driver), so it is there.
  ctx.expect(report.supported, "the audit could not run: " + report.not_supported_reason);
  std::string mismatches;
  for (const auto &r : report.rows) {
    // The exported name behind the bound address: both backends must land on the same one
    // under equal PTDS settings, so this observation is compared across the semantic group.
    ctx.observe("symbol." + r.entry,
                r.bound       ? (r.expected_symbol.empty() ? r.bound_symbol : r.expected_symbol)
                : r.not_bound ? std::string("not bound")
                              : std::string("missing"));
    if (!r.match && !r.not_bound)
      mismatches += " " + mismatch_text(r);
  }
  ctx.observe("flag", report.flag);
  ctx.expect(report.mismatches == 0, std::to_string(report.mismatches) +
                                         " entries differ from cuGetProcAddress_v2(" + report.flag +
                                         "):" + mismatches);
}

/// Deliberately failing calls give the same code, name and entry through either backend.
void errors_shape(case_context &ctx) {
  driver &d = ctx.drv();
  d.cuInit(0);
  auto record = [&](const std::string &key, auto &&call) {
    try {
      call();
      ctx.fail(key + ": the call was expected to fail");
    } catch (const driver_error &e) {
      ctx.observe(key + ".code", static_cast<int>(e.code()));
      ctx.observe(key + ".name", e.code_name());
      ctx.observe(key + ".entry", e.entry());
      ctx.expect(std::string(e.what()).find(e.entry()) != std::string::npos,
                 "the message names the entry: " + std::string(e.what()));
    }
  };
  // No context is current between cases: the documented answer is CUDA_ERROR_INVALID_CONTEXT.
  record("ctx_synchronize_without_context", [&] { d.cuCtxSynchronize(); });
  record("device_get_bad_ordinal", [&] {
    CUdevice dev;
    d.cuDeviceGet(&dev, 1 << 20);
  });
  record("device_get_attribute_bad", [&] {
    int v;
    d.cuDeviceGetAttribute(&v, static_cast<CUdevice_attribute>(1 << 20), 0);
  });
  const char *name = nullptr;
  ctx.expect(d.cuGetErrorName.raw(static_cast<CUresult>(987654), &name) == CUDA_ERROR_INVALID_VALUE,
             "cuGetErrorName of an unknown code is CUDA_ERROR_INVALID_VALUE");
  // The description of a known code is text, and an unknown code is refused.
  const char *text = nullptr;
  d.cuGetErrorString(CUDA_ERROR_INVALID_VALUE, &text);
  ctx.expect(text != nullptr && *text != '\0', "cuGetErrorString of a known code gave no text");
  ctx.observe("error_string_invalid_value", text ? valid_utf8(text) : std::string());
  ctx.observe("error_string_unknown",
              static_cast<int>(d.cuGetErrorString.raw(static_cast<CUresult>(987654), &text)));
}

/// A function the driver lacks is reported by name, and only when asked for.
void missing_function(case_context &ctx) {
  const entry_info ghost{entry_id::cuInit, "cuparityNoSuchFunction", 2000};
  resolution r = ctx.drv().resolve_uncached(ghost);
  ctx.observe("resolved", r.address != nullptr);
  ctx.expect(r.address == nullptr, "a function no driver has was resolved to " + r.symbol);
  ctx.expect(r.missing_reason.find("cuparityNoSuchFunction") != std::string::npos,
             "the reason names the function: " + r.missing_reason);
}

/// A bad NUMBA_CUDA_DRIVER stops a process cleanly: exit 2, a message naming variable and path.
void driver_path(case_context &ctx) {
  const std::string bad = "/nonexistent/cuparity/libcuda.so.1";
  auto res = ctx.spawn_self({"env"}, {{"NUMBA_CUDA_DRIVER", bad}}, std::chrono::seconds(60));
  ctx.observe("exit_code", res.exit_code);
  ctx.observe("signal", res.signal);
  ctx.expect(res.exited && res.exit_code == 2, "exit code 2 expected, got " +
                                                   std::to_string(res.exit_code) + " / signal " +
                                                   std::to_string(res.signal));
  ctx.expect(res.err.find("NUMBA_CUDA_DRIVER='" + bad + "'") != std::string::npos,
             "the message names the variable and value: " + res.err);
  auto zero = ctx.spawn_self({"env"}, {{"NUMBA_CUDA_DRIVER", "0"}}, std::chrono::seconds(60));
  ctx.observe("zero_exit_code", zero.exit_code);
  ctx.expect(zero.exit_code == 2 && zero.err.find("NUMBA_CUDA_DRIVER=0") != std::string::npos,
             "NUMBA_CUDA_DRIVER=0 disables the driver with a clear message: " + zero.err);
}

} // namespace

CUPARITY_CASE_FILE(register_binding_cases) {
  registry.add({"binding.config.effective", "effective binding, stream-0 mode and warnings",
                config_effective});
  // The audit asks the driver's cuGetProcAddress for every entry (not through the facade: it
  // calls the pointer), so that is what it needs; a package that binds none cannot be audited.
  registry
      .add({"binding.resolve.audit",
            "every bound entry equals the driver's cuGetProcAddress_v2 answer", resolve_audit})
      .uses({E::cuGetProcAddress});
  registry
      .add({"binding.errors.shape", "failing calls give the same code, name and entry",
            errors_shape})
      .uses({E::cuInit, E::cuCtxSynchronize, E::cuDeviceGet, E::cuDeviceGetAttribute,
             E::cuGetErrorName, E::cuGetErrorString});
  registry.add({"binding.resolve.missing_function",
                "a function the driver lacks is reported by name", missing_function});
  registry.add(
      {"binding.driver.path", "a bad NUMBA_CUDA_DRIVER is a clean error (exit 2)", driver_path});
}

} // namespace cuparity::cases
