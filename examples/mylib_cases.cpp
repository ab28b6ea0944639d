// Suite `mylib` of an example project: one case and its registration line. Any suite name that
// follows the id rules (suite.group.name of [a-z0-9_]) registers beside cuparity's own.
#include "harness/driver/driver.hpp"
#include "harness/framework/case_context.hpp"
#include "harness/framework/case_registry.hpp"
#include "harness/framework/device_architecture.hpp"

#include <algorithm>
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

/// The project's kernel image for this device (the registry picks the cubin of its architecture),
/// loaded while this lives.
class loaded_image {
public:
  loaded_image(cuparity::driver &d, const char *name) : m_driver(d) {
    d.cuModuleLoadData(&m_module, cuparity::kernel_image_for_device(name).data.data());
  }
  ~loaded_image() { (void)m_driver.cuModuleUnload.raw(m_module); }
  loaded_image(const loaded_image &) = delete;
  loaded_image &operator=(const loaded_image &) = delete;
  [[nodiscard]] CUmodule get() const noexcept { return m_module; }

private:
  cuparity::driver &m_driver;
  CUmodule m_module = nullptr;
};

/// The project's own kernel, from its own registered image, fills a buffer.
void kernel_fill(cuparity::case_context &ctx) {
  cuparity::driver &d = ctx.drv();
  d.cuInit(0);
  const retained_primary_context primary(d);
  const pushed_context current(d, primary.get());
  const loaded_image image(d, "mylib_kernels.cubin");
  CUfunction fill = nullptr;
  d.cuModuleGetFunction(&fill, image.get(), "cuparity_fill_u32");
  unsigned long long n = 4096;
  unsigned int value = 0x5eedu;
  device_memory buffer(d, n * sizeof(unsigned int));
  CUdeviceptr out = buffer.get();
  void *args[] = {&out, &value, &n};
  d.cuLaunchKernel(fill, 16, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr);
  d.cuCtxSynchronize();
  std::vector<unsigned int> back(n);
  d.cuMemcpyDtoH(back.data(), out, n * sizeof(unsigned int));
  ctx.expect(std::all_of(back.begin(), back.end(), [&](unsigned int w) { return w == value; }),
             "the kernel left words other than the value it was given");
  ctx.observe("words", back.size());
}

} // namespace

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
  registry
      .add({"mylib.kernel.fill", "the project's own kernel, from its registered image, fills words",
            kernel_fill})
      .uses({entry_id::cuInit, entry_id::cuDeviceGet, entry_id::cuDevicePrimaryCtxRetain,
             entry_id::cuDevicePrimaryCtxRelease, entry_id::cuCtxPushCurrent,
             entry_id::cuCtxPopCurrent, entry_id::cuModuleLoadData, entry_id::cuModuleUnload,
             entry_id::cuModuleGetFunction, entry_id::cuMemAlloc, entry_id::cuMemFree,
             entry_id::cuLaunchKernel, entry_id::cuCtxSynchronize, entry_id::cuMemcpyDtoH});
}

} // namespace mylib
