// The Driver facade: the only way cases reach the driver, identical for both backends.
#pragma once

#include "harness/driver/backend.hpp"
#include "harness/driver/cuda_api.hpp"
#include "harness/driver/driver_error.hpp"
#include "harness/driver/entry.hpp"

#include <array>
#include <atomic>
#include <bitset>
#include <memory>
#include <mutex>
#include <source_location>
#include <string>
#include <vector>

namespace cuparity {

class driver;

/// One resolved entry, as recorded in results (the binding map).
struct binding {
  std::string entry;    ///< base name
  int abi_version = 0;  ///< ABI requested / intended
  std::string symbol;   ///< what the backend bound (probed name or dladdr of the pointer)
  std::string exported; ///< dladdr's name for the address ("" when it is not an exported symbol)
  const void *address = nullptr;
  int query_result = -1;  ///< nvidia: cuGetProcAddress_v2 result
  int symbol_status = -1; ///< nvidia: symbolStatus
  bool missing = false;
  std::string missing_reason;
  bool not_bound = false; ///< missing because the binding under test does not bind it (map)
};

namespace detail {

// One callable member per entry. Its operator() has the entry's exact C parameter types (so
// arguments convert as in a direct call) plus a defaulted source_location that records the call
// site without a macro.
template <entry_id Id, class Pfn> class entry_fn;

template <entry_id Id, class... Args> class entry_fn<Id, CUresult(CUDAAPI *)(Args...)> {
public:
  using pointer = CUresult(CUDAAPI *)(Args...);
  explicit entry_fn(driver &d) noexcept : m_driver(d) {}

  /// Checked call: throws driver_error for any result but CUDA_SUCCESS, or a missing function.
  void operator()(Args... args, std::source_location site = std::source_location::current()) const;

  /// Unchecked call: returns the driver's result. Still throws driver_error when the driver
  /// does not provide the function (there is no result to return then).
  [[nodiscard]] CUresult raw(Args... args,
                             std::source_location site = std::source_location::current()) const;

  /// The resolved pointer (resolving on first use); throws driver_error if missing.
  [[nodiscard]] pointer get(std::source_location site = std::source_location::current()) const;

  /// Throws the driver_error a checked call would for `code` (for callers that call a pointer of
  /// this entry themselves, such as the latency probes).
  [[noreturn]] void fail(CUresult code,
                         std::source_location site = std::source_location::current()) const;

  /// A clean-up call (a destructor's): never throws. A result other than CUDA_SUCCESS, or a
  /// function the binding lacks, is kept on the driver (take_cleanup_failures) for the case to
  /// report, since a destructor cannot (cuda-api-wrappers: destructors never throw).
  void cleanup(Args... args,
               std::source_location site = std::source_location::current()) const noexcept;

private:
  driver &m_driver;
};

} // namespace detail

class driver {
public:
  explicit driver(std::unique_ptr<backend> b);
  ~driver();
  driver(const driver &) = delete;
  driver &operator=(const driver &) = delete;

#define CUPARITY_ENTRY(name, abi, params)                                                          \
  detail::entry_fn<entry_id::name, PFN_##name##_v##abi> name{*this};
#include "harness/driver/entries.inl"
#undef CUPARITY_ENTRY

  [[nodiscard]] const class backend &get_backend() const noexcept {
    return *m_backend;
  }
  [[nodiscard]] std::string_view backend_name() const noexcept {
    return m_backend->name();
  }

  /// The pointer for an entry, resolving it on first use (once, thread-safe); nullptr if missing.
  [[nodiscard]] void *address(entry_id id) {
    auto &s = m_slots[static_cast<std::size_t>(id)];
    if (void *p = s.address.load(std::memory_order_acquire)) [[likely]]
      return p;
    return resolve_slow(id);
  }

  /// Resolves every entry now (for the binding map and the audit); returns how many are missing.
  std::size_t resolve_all();

  /// Asks the backend about a function that need not be in the table, without caching it (for
  /// cases that check how a backend reports a name the driver lacks).
  [[nodiscard]] resolution resolve_uncached(const entry_info &e) {
    return m_backend->resolve(e);
  }

  /// What the backend found for an entry, resolving it first.
  [[nodiscard]] const resolution &resolved(entry_id id) {
    (void)address(id);
    return m_slots[static_cast<std::size_t>(id)].result;
  }

  /// While `declared` is set, a call through an entry outside it is remembered (the case's
  /// declaration of what it calls is wrong: harness/framework/requirements.hpp). Null stops
  /// watching.
  void watch_calls(const std::bitset<entry_count> *declared) noexcept {
    m_declared.store(declared, std::memory_order_release);
  }
  /// The entries called outside the declared set since the last take, in table order.
  [[nodiscard]] std::vector<entry_id> take_undeclared_calls();
  /// Called by every checked and unchecked entry call while calls are watched.
  void note_call(entry_id id) noexcept {
    if (const auto *d = m_declared.load(std::memory_order_acquire);
        d && !d->test(static_cast<std::size_t>(id))) [[unlikely]]
      note_undeclared(id);
  }
  [[nodiscard]] bool watching_calls() const noexcept {
    return m_declared.load(std::memory_order_relaxed) != nullptr;
  }

  /// One failed clean-up call: "cuStreamDestroy (cuStreamDestroy_v2) returned
  /// CUDA_ERROR_INVALID_HANDLE at cases/support.cpp:97".
  void note_cleanup_failure(entry_id id, CUresult code, bool missing, std::string handles,
                            const std::source_location &site) noexcept;
  /// The clean-up failures since the last take.
  [[nodiscard]] std::vector<std::string> take_cleanup_failures();

  /// The entries resolved so far, in table order.
  [[nodiscard]] std::vector<binding> binding_map() const;

  /// cuGetErrorName through this backend; a readable stand-in if the driver cannot name it.
  [[nodiscard]] std::string error_name(CUresult code) noexcept;

  /// How many times the backend was asked to resolve (tests prove lazy, once-only resolution).
  [[nodiscard]] std::size_t resolve_count() const noexcept {
    return m_resolve_count.load();
  }

  [[noreturn]] void throw_missing(entry_id id, const std::source_location &site);
  [[noreturn]] void throw_result(entry_id id, CUresult code, const std::source_location &site,
                                 std::string handles = {});

private:
  struct slot {
    std::atomic<void *> address{nullptr};
    std::once_flag once;
    std::atomic<bool> done{false};
    resolution result;
  };

  void *resolve_slow(entry_id id);

  void note_undeclared(entry_id id) noexcept;

  std::unique_ptr<class backend> m_backend;
  std::array<slot, entry_count> m_slots;
  std::atomic<std::size_t> m_resolve_count{0};
  std::atomic<const std::bitset<entry_count> *> m_declared{nullptr};
  std::mutex m_notes_lock; ///< guards the two lists below (calls come from several threads)
  std::bitset<entry_count> m_undeclared;
  std::vector<std::string> m_cleanup_failures;
};

namespace detail {

/// The driver API's handle types by name, so an error names the handle it was about; other
/// argument types have none. CUdeviceptr is unsigned long long, so a rare argument of that type
/// that is not an address (cuGraphInstantiate's flags) would be named as one.
template <class T> inline constexpr const char *handle_type = nullptr;
template <> inline constexpr const char *handle_type<CUcontext> = "CUcontext";
template <> inline constexpr const char *handle_type<CUmodule> = "CUmodule";
template <> inline constexpr const char *handle_type<CUfunction> = "CUfunction";
template <> inline constexpr const char *handle_type<CUstream> = "CUstream";
template <> inline constexpr const char *handle_type<CUevent> = "CUevent";
template <> inline constexpr const char *handle_type<CUlinkState> = "CUlinkState";
template <> inline constexpr const char *handle_type<CUdeviceptr> = "CUdeviceptr";

template <class T> void append_handle(std::string &s, const T &value) {
  if constexpr (handle_type<T> != nullptr)
    s += (s.empty() ? "" : ", ") + handle_text(handle_type<T>, value);
}

/// "CUstream 0x5a, CUevent 0x7b" for a call's handle arguments; "" when it has none (or when
/// describing them failed: this runs in noexcept clean-up calls too).
template <class... Args> std::string handles_text(const Args &...args) noexcept {
  try {
    std::string s;
    (append_handle(s, args), ...);
    return s;
  } catch (...) {
    return {};
  }
}

template <entry_id Id, class... Args>
auto entry_fn<Id, CUresult(CUDAAPI *)(Args...)>::get(std::source_location site) const -> pointer {
  m_driver.note_call(Id);
  void *p = m_driver.address(Id);
  if (!p) [[unlikely]]
    m_driver.throw_missing(Id, site);
  return reinterpret_cast<pointer>(p);
}

template <entry_id Id, class... Args>
CUresult entry_fn<Id, CUresult(CUDAAPI *)(Args...)>::raw(Args... args,
                                                         std::source_location site) const {
  return get(site)(args...);
}

template <entry_id Id, class... Args>
void entry_fn<Id, CUresult(CUDAAPI *)(Args...)>::fail(CUresult code,
                                                      std::source_location site) const {
  m_driver.throw_result(Id, code, site);
}

template <entry_id Id, class... Args>
void entry_fn<Id, CUresult(CUDAAPI *)(Args...)>::operator()(Args... args,
                                                            std::source_location site) const {
  CUresult r = get(site)(args...);
  if (r != CUDA_SUCCESS) [[unlikely]]
    m_driver.throw_result(Id, r, site, handles_text(args...));
}

template <entry_id Id, class... Args>
void entry_fn<Id, CUresult(CUDAAPI *)(Args...)>::cleanup(Args... args,
                                                         std::source_location site) const noexcept {
  m_driver.note_call(Id);
  void *p = nullptr;
  try {
    p = m_driver.address(Id);
  } catch (...) {
    // resolving must not throw; if a backend did, the entry counts as missing
  }
  if (!p) {
    m_driver.note_cleanup_failure(Id, CUDA_ERROR_NOT_FOUND, true, handles_text(args...), site);
    return;
  }
  const CUresult r = reinterpret_cast<pointer>(p)(args...);
  if (r != CUDA_SUCCESS)
    m_driver.note_cleanup_failure(Id, r, false, handles_text(args...), site);
}

} // namespace detail
} // namespace cuparity
