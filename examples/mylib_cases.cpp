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

/// Device 0's primary context, retained and current on this thread while this lives. Pushed,
/// not set: Numba's internal binding has cuCtxPushCurrent and cuCtxPopCurrent, not
/// cuCtxSetCurrent, and a case must run under both bindings.
class current_primary_context {
public:
  explicit current_primary_context(cuparity::driver &d) : m_driver(d) {
    d.cuInit(0);
    d.cuDeviceGet(&m_dev, 0);
    d.cuDevicePrimaryCtxRetain(&m_ctx, m_dev);
    if (CUresult rc = d.cuCtxPushCurrent.raw(m_ctx); rc != CUDA_SUCCESS) {
      (void)d.cuDevicePrimaryCtxRelease.raw(m_dev);
      d.cuCtxPushCurrent(m_ctx); // again, checked: throws the driver_error that names the call
    }
  }
  ~current_primary_context() {
    CUcontext popped = nullptr;
    (void)m_driver.cuCtxPopCurrent.raw(&popped); // destructors never throw: unchecked calls
    (void)m_driver.cuDevicePrimaryCtxRelease.raw(m_dev);
  }
  current_primary_context(const current_primary_context &) = delete;
  current_primary_context &operator=(const current_primary_context &) = delete;

private:
  cuparity::driver &m_driver;
  CUdevice m_dev = 0;
  CUcontext m_ctx = nullptr;
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

/// The case: checked facade calls throw a driver_error naming the call (an `error` outcome);
/// expect() fails the case; observe() records what every cell of a group must agree on.
void memory_roundtrip(cuparity::case_context &ctx) {
  cuparity::driver &d = ctx.drv();
  current_primary_context primary(d);
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
// the body calls (the facade checks the calls against it, and a binding that lacks one makes the
// case not_supported rather than failed).
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
