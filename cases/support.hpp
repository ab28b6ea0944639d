// RAII helpers cases share: primary context, buffers, modules, streams, events, launches.
// Destructors never throw: they use the unchecked (.raw) calls and ignore the result.
#pragma once

#include "harness/driver/driver.hpp"
#include "harness/framework/case_context.hpp"
#include "harness/framework/requirements.hpp"

#include <cstdint>
#include <exception>
#include <initializer_list>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace cuparity::cases {

/// The CUresult of a raw driver call as an int, for an observation (`d.cuX.raw(...)` in a lambda).
template <class F> int code_of(F &&call) {
  return static_cast<int>(call());
}

using E = entry_id;

// What the helpers below call, for the registration lines' uses(): a case that uses a helper
// declares its needs (harness/framework/requirements.hpp), so the requirement check and the
// undeclared-call check see the helper's calls as the case's own.

/// make_current: cuCtxSetCurrent, or cuCtxPushCurrent with cuCtxPopCurrent where the binding
/// lacks it (Numba's table).
[[nodiscard]] entry_need current_need();
/// primary_context: cuInit, cuDeviceGet, cuCtxGetCurrent, the primary context's retain and
/// release, and current_need().
[[nodiscard]] const std::vector<entry_need> &primary_context_needs();
/// device_buffer: cuMemAlloc, cuMemFree.
[[nodiscard]] const std::vector<entry_need> &buffer_needs();
/// loaded_module and its function(): cuModuleLoadData (or cuModuleLoadDataEx where the binding
/// lacks it), cuModuleUnload, cuModuleGetFunction.
[[nodiscard]] const std::vector<entry_need> &module_needs();
/// stream: cuStreamCreate, cuStreamDestroy.
[[nodiscard]] const std::vector<entry_need> &stream_needs();
/// event: cuEventCreate, cuEventDestroy.
[[nodiscard]] const std::vector<entry_need> &event_needs();
/// set_words with a value whose four bytes are equal: cuMemsetD32, or cuMemsetD8.
[[nodiscard]] entry_need words_need();

struct dim3 {
  unsigned int x = 1, y = 1, z = 1;
};

/// Runs `body` on a new host thread and waits for it. What it throws is rethrown here: an
/// exception escaping a thread would end the whole cell (std::terminate), as a function missing
/// from a captured map did on the H200 (context.current.per_thread, SIGABRT).
template <class F> void on_new_thread(F &&body) {
  std::exception_ptr error;
  std::thread t([&] {
    try {
      body();
    } catch (...) {
      error = std::current_exception();
    }
  });
  t.join();
  if (error)
    std::rethrow_exception(error);
}

/// Makes `ctx` current for this thread with cuCtxSetCurrent, or, where the binding under test does
/// not bind it (Numba's table has only push and pop), with cuCtxPushCurrent, as that package
/// would. Sets `pushed` to say which; returns the call's result.
CUresult make_current(driver &d, CUcontext ctx, bool &pushed);

/// Retains a device's primary context and makes it current for this thread; undoes both. A scope
/// guard, not a handle owner: it is neither copied nor moved, as the current context it restores
/// belongs to the thread's scope.
class primary_context {
public:
  explicit primary_context(driver &d, int ordinal = 0);
  ~primary_context();
  primary_context(const primary_context &) = delete;
  primary_context &operator=(const primary_context &) = delete;
  [[nodiscard]] CUcontext get() const noexcept { return m_ctx; }
  [[nodiscard]] CUdevice device() const noexcept { return m_dev; }
  /// Releases the retain now and returns the driver's answer (the destructor then releases
  /// nothing): for a case whose answer is an observation, after cuDevicePrimaryCtxReset.
  [[nodiscard]] CUresult release_now();

private:
  driver &m_driver;
  bool m_retained = true;
  CUdevice m_dev = 0;
  CUcontext m_ctx = nullptr;
  CUcontext m_previous = nullptr;
  bool m_pushed = false; ///< made current with cuCtxPushCurrent (the binding has no SetCurrent)
};

/// The handle owners below are move-only (cuda-api-wrappers' rule): a handle has one owner, and
/// moving it leaves the source empty, so no handle is released twice.
class device_buffer {
public:
  device_buffer(driver &d, std::size_t bytes);
  ~device_buffer() { release_nothrow(); }
  device_buffer(const device_buffer &) = delete;
  device_buffer &operator=(const device_buffer &) = delete;
  /// Move-only: the handle goes with the object and the source owns nothing.
  device_buffer(device_buffer &&other) noexcept
      : m_driver(other.m_driver), m_ptr(std::exchange(other.m_ptr, CUdeviceptr{})),
        m_size(other.m_size) {}
  device_buffer &operator=(device_buffer &&other) noexcept;
  /// Ends the handle now, through its clean-up call (a failure is kept for the case runner,
  /// never thrown), and owns nothing after; the destructor calls it.
  void release_nothrow() noexcept;
  [[nodiscard]] CUdeviceptr get() const noexcept { return m_ptr; }
  [[nodiscard]] std::size_t size() const noexcept { return m_size; }
  /// For passing as a kernel argument (kernelParams wants a pointer to the value).
  [[nodiscard]] CUdeviceptr *arg() noexcept { return &m_ptr; }

private:
  driver *m_driver;
  CUdeviceptr m_ptr = 0;
  std::size_t m_size = 0;
};

/// Bytes of a module image made at run time (NVRTC, a linker), as opposed to an embedded one.
struct image_bytes {
  const void *data;
};

/// A module loaded from a registered kernel image ("basic.cubin", "basic.ptx", "basic.fatbin":
/// the one for this process's device, harness/framework/device_architecture.hpp) or from image
/// bytes. (Not a `const void*` overload: a string literal would silently pick it.) Named
/// loaded_module, not module: `module` is a C++20 keyword (clang-format mangles it).
class loaded_module {
public:
  loaded_module(driver &d, std::string_view embedded_image);
  loaded_module(driver &d, image_bytes image);
  /// Loads with cuModuleLoadDataEx and JIT options (a log buffer, as Numba passes), always.
  loaded_module(driver &d, std::string_view embedded_image, std::vector<CUjit_option> options,
                std::vector<void *> values);
  ~loaded_module() { release_nothrow(); }
  loaded_module(const loaded_module &) = delete;
  loaded_module &operator=(const loaded_module &) = delete;
  /// Move-only: the handle goes with the object and the source owns nothing.
  loaded_module(loaded_module &&other) noexcept
      : m_driver(other.m_driver), m_mod(std::exchange(other.m_mod, CUmodule{})) {}
  loaded_module &operator=(loaded_module &&other) noexcept;
  /// Ends the handle now, through its clean-up call (a failure is kept for the case runner,
  /// never thrown), and owns nothing after; the destructor calls it.
  void release_nothrow() noexcept;
  [[nodiscard]] CUfunction function(const char *name) const;
  [[nodiscard]] CUmodule get() const noexcept { return m_mod; }

private:
  driver *m_driver;
  CUmodule m_mod = nullptr;
};

class stream {
public:
  explicit stream(driver &d, unsigned int flags = CU_STREAM_DEFAULT);
  stream(driver &d, unsigned int flags, int priority);
  ~stream() { release_nothrow(); }
  stream(const stream &) = delete;
  stream &operator=(const stream &) = delete;
  /// Move-only: the handle goes with the object and the source owns nothing.
  stream(stream &&other) noexcept
      : m_driver(other.m_driver), m_stream(std::exchange(other.m_stream, CUstream{})) {}
  stream &operator=(stream &&other) noexcept;
  /// Ends the handle now, through its clean-up call (a failure is kept for the case runner,
  /// never thrown), and owns nothing after; the destructor calls it.
  void release_nothrow() noexcept;
  [[nodiscard]] CUstream get() const noexcept { return m_stream; }

private:
  driver *m_driver;
  CUstream m_stream = nullptr;
};

class event {
public:
  explicit event(driver &d, unsigned int flags = CU_EVENT_DEFAULT);
  ~event() { release_nothrow(); }
  event(const event &) = delete;
  event &operator=(const event &) = delete;
  /// Move-only: the handle goes with the object and the source owns nothing.
  event(event &&other) noexcept
      : m_driver(other.m_driver), m_event(std::exchange(other.m_event, CUevent{})) {}
  event &operator=(event &&other) noexcept;
  /// Ends the handle now, through its clean-up call (a failure is kept for the case runner,
  /// never thrown), and owns nothing after; the destructor calls it.
  void release_nothrow() noexcept;
  [[nodiscard]] CUevent get() const noexcept { return m_event; }

private:
  driver *m_driver;
  CUevent m_event = nullptr;
};

/// Sets `count` 32-bit words at `p` to `value` (cuMemsetD32). Where the binding under test does
/// not bind cuMemsetD32 (Numba 0.68's table has only cuMemsetD8) and the four bytes of `value` are
/// equal, it sets the bytes with cuMemsetD8, as that package would; otherwise the not-bound error
/// stands and the case is not supported.
void set_words(driver &d, CUdeviceptr p, unsigned int value, std::size_t count);

/// cuLaunchKernel with kernelParams built from pointers to the argument values.
void launch(driver &d, CUfunction f, dim3 grid, dim3 block, unsigned int shared_bytes, CUstream s,
            std::initializer_list<void *> args);

/// How long the spin kernel occupies a stream where a case needs work still running (ordering
/// between streams is observed without a clock: cases/stream_cases.cpp).
inline constexpr unsigned long long spin_ns = 50'000'000ULL;

/// FNV-1a over bytes: a checksum that is the same in every cell for the same data.
[[nodiscard]] std::uint64_t checksum(const void *data, std::size_t bytes);

/// The compute capability as "9.0".
[[nodiscard]] std::string compute_capability(driver &d, CUdevice dev);

} // namespace cuparity::cases
