// The effective-behaviour table, fallback, and what each backend binds, on the simulated driver.
#include "harness/driver/binding_audit.hpp"
#include "harness/session/session.hpp"
#include "test_support.hpp"

#include <catch2/catch.hpp>
#include <dlfcn.h>
#include <fstream>

using namespace cuparity;
using test::sim_settings;

namespace {

bool has_warning(const effective_config &c, const std::string &needle) {
  for (const auto &w : c.warnings)
    if (w.find(needle) != std::string::npos)
      return true;
  return false;
}

/// dlsym in the simulated driver, for comparing addresses with what a backend bound.
void *sim_symbol(const char *name) {
  static void *h = dlopen(CUPARITY_SIMDRIVER, RTLD_NOW | RTLD_LOCAL);
  REQUIRE(h);
  return dlsym(h, name);
}

} // namespace

TEST_CASE("every row of the effective-behaviour table", "[session]") {
  struct row {
    const char *use_nv, *numba_ptds, *cp_ptds;
    bool loadable;
    const char *binding;
    bool per_thread;
    const char *warning; // substring, or nullptr for "no warning"
  };
  // docs/configuration.md, "Expected effective behaviour of stream 0"; "any"/"x"/"y" rows
  // expanded.
  const row rows[] = {
      {"0", "0", "0", true, "internal", false, nullptr},
      {"0", "0", "1", true, "internal", false, nullptr},
      {"0", "1", "0", true, "internal", true, nullptr},
      {"0", "1", "1", true, "internal", true, nullptr},
      {"1", "0", "0", true, "nvidia", false, nullptr},
      {"1", "0", "1", true, "nvidia", true, nullptr},
      {"1", "1", "0", true, "nvidia", false, "has no effect with the nvidia binding"},
      {"1", "1", "1", true, "nvidia", true, "has no effect with the nvidia binding"},
      {"1", "0", "1", false, "internal", false, "Falling back to the internal binding"},
      {"1", "1", "0", false, "internal", true, "Falling back to the internal binding"},
  };
  for (const auto &r : rows) {
    INFO("USE_NV=" << r.use_nv << " NUMBA_PTDS=" << r.numba_ptds << " CP_PTDS=" << r.cp_ptds
                   << " loadable=" << r.loadable);
    test::vars v{{var::use_nvidia_binding, r.use_nv},
                 {var::numba_ptds, r.numba_ptds},
                 {var::cuda_python_ptds, r.cp_ptds}};
    if (!r.loadable)
      v[var::nvidia_backend] = "/nonexistent/libcuparity_nvidia.so";
    auto sess = session::open(sim_settings(v));
    const auto &c = sess->config();
    CHECK(c.binding == r.binding);
    CHECK(c.per_thread_default_stream == r.per_thread);
    CHECK(c.simulated);
    if (r.warning) {
      CHECK(c.warnings.size() == 1);
      CHECK(has_warning(c, r.warning));
    } else {
      CHECK(c.warnings.empty());
    }
    if (r.warning && std::string(r.warning).find("no effect") != std::string::npos)
      CHECK(has_warning(c, "CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM=1"));
    CHECK(c.fallback == !r.loadable);
  }
}

TEST_CASE("fallback reasons name the library or the driver concerned", "[session]") {
  SECTION("the backend library is missing") {
    auto sess = session::open(sim_settings(
        {{var::use_nvidia_binding, "1"}, {var::nvidia_backend, "/nonexistent/lib.so"}}));
    CHECK(sess->config().binding == "internal");
    CHECK_THAT(sess->config().fallback_reason, Catch::Contains("/nonexistent/lib.so") &&
                                                   Catch::Contains("CUPARITY_NVIDIA_BACKEND"));
  }
  SECTION("the backend library is not a shared library") {
    std::string junk = std::string(CUPARITY_BIN_DIR) + "/not_a_library.so";
    std::ofstream(junk) << "this is not an ELF file\n";
    auto sess =
        session::open(sim_settings({{var::use_nvidia_binding, "1"}, {var::nvidia_backend, junk}}));
    CHECK(sess->config().fallback);
    CHECK_THAT(sess->config().fallback_reason, Catch::Contains(junk));
  }
  SECTION("the library loads but is not a cuparity backend") {
    auto sess = session::open(
        sim_settings({{var::use_nvidia_binding, "1"}, {var::nvidia_backend, CUPARITY_SIMDRIVER}}));
    CHECK(sess->config().fallback);
    CHECK_THAT(sess->config().fallback_reason, Catch::Contains("cuparity_nvidia_backend_create"));
  }
  SECTION("the driver has no cuGetProcAddress_v2") {
    auto sess =
        session::open(sim_settings({{var::use_nvidia_binding, "1"}}, CUPARITY_SIMDRIVER_LEGACY));
    CHECK(sess->config().binding == "internal");
    CHECK_THAT(sess->config().fallback_reason, Catch::Contains("cuGetProcAddress_v2"));
    CHECK(has_warning(sess->config(), "NUMBA_CUDA_USE_NVIDIA_BINDING=1"));
  }
}

TEST_CASE("a driver that cannot be loaded is a clear error, not a fallback", "[session]") {
  std::string junk = std::string(CUPARITY_BIN_DIR) + "/not_a_driver.so";
  std::ofstream(junk) << "not a driver\n";
  for (const char *use_nv : {"0", "1"}) {
    INFO("USE_NV=" << use_nv);
    CHECK_THROWS_WITH(session::open(sim_settings({{var::use_nvidia_binding, use_nv}}, junk)),
                      Catch::Contains(junk));
  }
}

TEST_CASE("what each backend binds under each PTDS setting", "[session][bind]") {
  struct mode {
    test::vars v;
    bool ptds;
  };
  const mode modes[] = {
      {{{var::numba_ptds, "0"}}, false},
      {{{var::numba_ptds, "1"}}, true},
      {{{var::use_nvidia_binding, "1"}, {var::cuda_python_ptds, "0"}}, false},
      {{{var::use_nvidia_binding, "1"}, {var::cuda_python_ptds, "1"}}, true},
  };
  for (const auto &m : modes) {
    auto sess = session::open(sim_settings(m.v));
    auto &d = sess->drv();
    INFO("binding " << d.backend_name() << " ptds " << m.ptds);
    void *launch = d.address(entry_id::cuLaunchKernel);
    void *htod = d.address(entry_id::cuMemcpyHtoD);
    void *alloc = d.address(entry_id::cuMemAlloc);
    CHECK(launch == sim_symbol(m.ptds ? "cuLaunchKernel_ptsz" : "cuLaunchKernel"));
    CHECK(htod == sim_symbol(m.ptds ? "cuMemcpyHtoD_v2_ptds" : "cuMemcpyHtoD_v2"));
    CHECK(alloc == sim_symbol("cuMemAlloc_v2"));
    // The pins hold in both backends and both modes.
    CHECK(d.address(entry_id::cuCtxSynchronize) == sim_symbol("cuCtxSynchronize"));
    CHECK(d.address(entry_id::cuCtxGetDevice) == sim_symbol("cuCtxGetDevice"));
    auto map = d.binding_map();
    bool found = false;
    for (const auto &b : map)
      if (b.entry == "cuLaunchKernel") {
        found = true;
        CHECK(b.exported == (m.ptds ? "cuLaunchKernel_ptsz" : "cuLaunchKernel"));
      }
    CHECK(found);
  }
}

TEST_CASE("the audit agrees with the driver for both backends in both modes", "[session][audit]") {
  for (const auto &v : {test::vars{}, test::vars{{var::numba_ptds, "1"}},
                        test::vars{{var::use_nvidia_binding, "1"}},
                        test::vars{{var::use_nvidia_binding, "1"}, {var::cuda_python_ptds, "1"}}}) {
    auto sess = session::open(sim_settings(v));
    auto report = audit_bindings(sess->drv());
    INFO(sess->config().binding << " " << report.flag);
    REQUIRE(report.supported);
    CHECK(report.rows.size() == entry_count);
    for (const auto &r : report.rows) {
      INFO(r.entry << " bound " << r.bound_symbol << " driver " << r.expected_symbol);
      CHECK(r.match);
    }
    CHECK(report.mismatches == 0);
  }
}

TEST_CASE("without Numba's pins the audit flags cuCtxSynchronize and cuCtxGetDevice",
          "[session][audit]") {
  session_options unpinned;
  unpinned.disable_pins = true;
  auto sess = session::open(sim_settings({}), unpinned);
  auto report = audit_bindings(sess->drv());
  REQUIRE(report.supported);
  std::vector<std::string> flagged;
  for (const auto &r : report.rows)
    if (!r.match)
      flagged.push_back(r.entry + ":" + r.bound_symbol);
  CHECK(flagged == std::vector<std::string>{"cuCtxGetDevice:cuCtxGetDevice_v2",
                                            "cuCtxSynchronize:cuCtxSynchronize_v2"});
}

TEST_CASE("the audit is not supported on a driver without cuGetProcAddress_v2",
          "[session][audit]") {
  auto sess = session::open(sim_settings({}, CUPARITY_SIMDRIVER_LEGACY));
  auto report = audit_bindings(sess->drv());
  CHECK_FALSE(report.supported);
  CHECK_THAT(report.not_supported_reason, Catch::Contains("cuGetProcAddress_v2"));
}

TEST_CASE("an audit mismatch names what differs: the symbols, or the files behind equal names",
          "[audit]") {
  int a = 0, b = 0;
  audit_row r;
  r.entry = "cuGetProcAddress";
  r.bound = &a;
  r.bound_symbol = "cuGetProcAddress_v2";
  r.bound_library = "/opt/shim/libcuda.so.1";
  r.expected = &b;
  r.expected_symbol = "cuGetProcAddress_v2";
  r.expected_library = "/usr/lib/libcuda.so.580";
  // A forwarding driver handing out the real driver's function: the names agree, the files do not.
  CHECK(mismatch_text(r) ==
        "cuGetProcAddress (bound cuGetProcAddress_v2 in /opt/shim/libcuda.so.1, driver says "
        "cuGetProcAddress_v2 in /usr/lib/libcuda.so.580)");
  r.expected_symbol = "cuGetProcAddress";
  CHECK(mismatch_text(r) ==
        "cuGetProcAddress (bound cuGetProcAddress_v2, driver says cuGetProcAddress)");
  r.expected = nullptr;
  CHECK(mismatch_text(r) == "cuGetProcAddress (bound cuGetProcAddress_v2, driver says nothing)");
  r.bound_symbol.clear();
  CHECK(mismatch_text(r) == "cuGetProcAddress (bound an unnamed address, driver says nothing)");
}
