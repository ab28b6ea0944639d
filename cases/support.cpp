// RAII helpers for cases (see support.hpp).
#include "cases/support.hpp"

#include "harness/framework/device_architecture.hpp"

#include <utility>
#include <vector>

namespace cuparity::cases {

entry_need current_need() {
  return {{E::cuCtxSetCurrent}, {E::cuCtxPushCurrent, E::cuCtxPopCurrent}};
}

const std::vector<entry_need> &primary_context_needs() {
  static const std::vector<entry_need> needs{E::cuInit,
                                             E::cuDeviceGet,
                                             E::cuCtxGetCurrent,
                                             E::cuDevicePrimaryCtxRetain,
                                             E::cuDevicePrimaryCtxRelease,
                                             current_need()};
  return needs;
}

const std::vector<entry_need> &buffer_needs() {
  static const std::vector<entry_need> needs{E::cuMemAlloc, E::cuMemFree};
  return needs;
}

const std::vector<entry_need> &module_needs() {
  static const std::vector<entry_need> needs{
      entry_need{{E::cuModuleLoadData}, {E::cuModuleLoadDataEx}}, E::cuModuleUnload,
      E::cuModuleGetFunction};
  return needs;
}

const std::vector<entry_need> &stream_needs() {
  static const std::vector<entry_need> needs{E::cuStreamCreate, E::cuStreamDestroy};
  return needs;
}

const std::vector<entry_need> &event_needs() {
  static const std::vector<entry_need> needs{E::cuEventCreate, E::cuEventDestroy};
  return needs;
}

entry_need words_need() {
  return {{E::cuMemsetD32}, {E::cuMemsetD8}};
}

CUresult make_current(driver &d, CUcontext ctx, bool &pushed) {
  pushed = false;
  try {
    return d.cuCtxSetCurrent.raw(ctx);
  } catch (const driver_error &e) {
    if (!e.not_bound())
      throw;
  }
  pushed = true;
  return d.cuCtxPushCurrent.raw(ctx);
}

primary_context::primary_context(driver &d, int ordinal) : m_driver(d) {
  d.cuInit(0);
  d.cuDeviceGet(&m_dev, ordinal);
  d.cuCtxGetCurrent(&m_previous);
  d.cuDevicePrimaryCtxRetain(&m_ctx, m_dev);
  const CUresult r = make_current(d, m_ctx, m_pushed);
  if (r != CUDA_SUCCESS) {
    d.cuDevicePrimaryCtxRelease.cleanup(m_dev);
    d.throw_result(m_pushed ? entry_id::cuCtxPushCurrent : entry_id::cuCtxSetCurrent, r,
                   std::source_location::current());
  }
}

// Destructors never throw: their calls are clean-up calls, whose failures the driver keeps for
// the case runner to report (a failed cuStreamDestroy fails the case rather than vanishing).
primary_context::~primary_context() {
  if (m_pushed) {
    CUcontext popped = nullptr;
    m_driver.cuCtxPopCurrent.cleanup(&popped);
  } else {
    m_driver.cuCtxSetCurrent.cleanup(m_previous);
  }
  if (m_retained)
    m_driver.cuDevicePrimaryCtxRelease.cleanup(m_dev);
}

CUresult primary_context::release_now() {
  m_retained = false;
  return m_driver.cuDevicePrimaryCtxRelease.raw(m_dev);
}

device_buffer::device_buffer(driver &d, std::size_t bytes) : m_driver(&d), m_size(bytes) {
  d.cuMemAlloc(&m_ptr, bytes);
}

void device_buffer::release_nothrow() noexcept {
  if (m_ptr)
    m_driver->cuMemFree.cleanup(std::exchange(m_ptr, {}));
}

device_buffer &device_buffer::operator=(device_buffer &&other) noexcept {
  if (this != &other) {
    release_nothrow();
    m_driver = other.m_driver;
    m_ptr = std::exchange(other.m_ptr, {});
    m_size = other.m_size;
  }
  return *this;
}

loaded_module::loaded_module(driver &d, std::string_view embedded_image)
    : loaded_module(d, image_bytes{kernel_image_for_device(embedded_image).data.data()}) {}

loaded_module::loaded_module(driver &d, image_bytes image) : m_driver(&d) {
  try {
    d.cuModuleLoadData(&m_mod, image.data);
  } catch (const driver_error &e) {
    // A captured package that binds only cuModuleLoadDataEx (Numba's table): load as it would.
    if (!e.not_bound())
      throw;
    d.cuModuleLoadDataEx(&m_mod, image.data, 0, nullptr, nullptr);
  }
}

loaded_module::loaded_module(driver &d, std::string_view embedded_image,
                             std::vector<CUjit_option> options, std::vector<void *> values)
    : m_driver(&d) {
  d.cuModuleLoadDataEx(&m_mod, kernel_image_for_device(embedded_image).data.data(),
                       static_cast<unsigned int>(options.size()), options.data(), values.data());
}

void set_words(driver &d, CUdeviceptr p, unsigned int value, std::size_t count) {
  try {
    d.cuMemsetD32(p, value, count);
  } catch (const driver_error &e) {
    const unsigned int byte = value & 0xFFu;
    if (!e.not_bound() || value != byte * 0x01010101u)
      throw;
    d.cuMemsetD8(p, static_cast<unsigned char>(byte), count * 4);
  }
}

void loaded_module::release_nothrow() noexcept {
  if (m_mod)
    m_driver->cuModuleUnload.cleanup(std::exchange(m_mod, {}));
}

loaded_module &loaded_module::operator=(loaded_module &&other) noexcept {
  if (this != &other) {
    release_nothrow();
    m_driver = other.m_driver;
    m_mod = std::exchange(other.m_mod, {});
  }
  return *this;
}

CUfunction loaded_module::function(const char *name) const {
  CUfunction f = nullptr;
  m_driver->cuModuleGetFunction(&f, m_mod, name);
  return f;
}

stream::stream(driver &d, unsigned int flags) : m_driver(&d) {
  d.cuStreamCreate(&m_stream, flags);
}

stream::stream(driver &d, unsigned int flags, int priority) : m_driver(&d) {
  d.cuStreamCreateWithPriority(&m_stream, flags, priority);
}

void stream::release_nothrow() noexcept {
  if (m_stream)
    m_driver->cuStreamDestroy.cleanup(std::exchange(m_stream, {}));
}

stream &stream::operator=(stream &&other) noexcept {
  if (this != &other) {
    release_nothrow();
    m_driver = other.m_driver;
    m_stream = std::exchange(other.m_stream, {});
  }
  return *this;
}

event::event(driver &d, unsigned int flags) : m_driver(&d) {
  d.cuEventCreate(&m_event, flags);
}

void event::release_nothrow() noexcept {
  if (m_event)
    m_driver->cuEventDestroy.cleanup(std::exchange(m_event, {}));
}

event &event::operator=(event &&other) noexcept {
  if (this != &other) {
    release_nothrow();
    m_driver = other.m_driver;
    m_event = std::exchange(other.m_event, {});
  }
  return *this;
}

void launch(driver &d, CUfunction f, dim3 grid, dim3 block, unsigned int shared_bytes, CUstream s,
            std::initializer_list<void *> args) {
  std::vector<void *> params(args);
  d.cuLaunchKernel(f, grid.x, grid.y, grid.z, block.x, block.y, block.z, shared_bytes, s,
                   params.empty() ? nullptr : params.data(), nullptr);
}

std::uint64_t checksum(const void *data, std::size_t bytes) {
  const auto *p = static_cast<const unsigned char *>(data);
  std::uint64_t h = 1469598103934665603ULL;
  for (std::size_t i = 0; i < bytes; ++i)
    h = (h ^ p[i]) * 1099511628211ULL;
  return h;
}

std::string compute_capability(driver &d, CUdevice dev) {
  int major = 0, minor = 0;
  d.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  d.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  return std::to_string(major) + "." + std::to_string(minor);
}

} // namespace cuparity::cases
