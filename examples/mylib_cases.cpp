// Suite `mylib` of an example project: one case and its registration line. Any suite name that
// follows the id rules (suite.group.name of [a-z0-9_]) registers beside cuparity's own.
#include "harness/driver/driver.hpp"
#include "harness/suite/case_context.hpp"
#include "harness/suite/case_registry.hpp"

#include <cstdint>
#include <numeric>
#include <vector>

namespace mylib {
namespace {

using cuparity::entry_id;

/// Device 0's primary context, retained while this lives.
class retained_primary_context {
public:
  explicit retained_primary_context(cuparity::driver &d) : m_driver(d) {
    d.cuDeviceGet(&m_dev, 0);
    d.cuDevicePrimaryCtxRetain(&m_ctx, m_dev);
  }
  ~retained_primary_context() { (void)m_driver.cuDevicePrimaryCtxRelease.raw(m_dev); }
  retained_primary_context(const retained_primary_context &) = delete;
  retained_primary_context &operator=(const retained_primary_context &) = delete;
  [[nodiscard]] CUcontext get() const noexcept { return m_ctx; }

private:
  cuparity::driver &m_driver;
  CUdevice m_dev = 0;
  CUcontext m_ctx = nullptr;
};

/// A context current on this thread while this lives. Pushed, not set: Numba's internal binding
/// has cuCtxPushCurrent and cuCtxPopCurrent but not cuCtxSetCurrent, and a case runs under both
/// bindings. Destructors never throw: they make unchecked (.raw) calls.
class pushed_context {
public:
  pushed_context(cuparity::driver &d, CUcontext ctx) : m_driver(d) { d.cuCtxPushCurrent(ctx); }
  ~pushed_context() {
    CUcontext popped = nullptr;
    (void)m_driver.cuCtxPopCurrent.raw(&popped);
  }
  pushed_context(const pushed_context &) = delete;
  pushed_context &operator=(const pushed_context &) = delete;

private:
  cuparity::driver &m_driver;
};

class device_memory {
public:
  device_memory(cuparity::driver &d, std::size_t bytes) : m_driver(d) {
    d.cuMemAlloc(&m_ptr, bytes);
  }
  ~device_memory() { (void)m_driver.cuMemFree.raw(m_ptr); }
  device_memory(const device_memory &) = delete;
  device_memory &operator=(const device_memory &) = delete;
  [[nodiscard]] CUdeviceptr get() const noexcept { return m_ptr; }

private:
  cuparity::driver &m_driver;
  CUdeviceptr m_ptr = 0;
};

/// The case: a checked facade call that fails throws a driver_error naming the call (outcome
/// `fail`; out of memory is `resource_error`); expect() fails the case with its message;
/// observe() records what every cell of a semantic group must agree on.
void memory_roundtrip(cuparity::case_context &ctx) {
  cuparity::driver &d = ctx.drv();
  d.cuInit(0);
  const retained_primary_context primary(d);
  const pushed_context current(d, primary.get());
  std::vector<std::uint32_t> sent(std::size_t{1} << 16);
  std::iota(sent.begin(), sent.end(), 0u);
  const std::size_t bytes = sent.size() * sizeof sent[0];
  device_memory buffer(d, bytes);
  d.cuMemcpyHtoD(buffer.get(), sent.data(), bytes);
  std::vector<std::uint32_t> back(sent.size());
  d.cuMemcpyDtoH(back.data(), buffer.get(), bytes);
  ctx.expect(back == sent, "the words copied back differ from those sent");
  ctx.observe("words", back.size());
  ctx.observe("last_word", back.back());
}

} // namespace

// ---- KERNEL REGISTRATION GOES HERE (issue 26): once the suite layer's kernel-image registry
// exists, this file registers the project's own kernel image by name (built by CMakeLists.txt's
// marked spot), and a case launches it after loading it by that name.

// The registration line: id, one line of what is checked, the body; then every driver function
// the body calls (checked before the body runs: a binding that lacks one makes the case
// not_supported, and a call the list does not name is an error; docs/verdicts.md).
CUPARITY_CASE_FILE(register_mylib_cases) {
  registry
      .add({"mylib.memory.roundtrip", "64 Ki words to the device and back, unchanged",
            memory_roundtrip})
      .uses({entry_id::cuInit, entry_id::cuDeviceGet, entry_id::cuDevicePrimaryCtxRetain,
             entry_id::cuDevicePrimaryCtxRelease, entry_id::cuCtxPushCurrent,
             entry_id::cuCtxPopCurrent, entry_id::cuMemAlloc, entry_id::cuMemFree,
             entry_id::cuMemcpyHtoD, entry_id::cuMemcpyDtoH});
}

} // namespace mylib
