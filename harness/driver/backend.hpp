// The interface both backends implement: how one entry's function pointer is found.
#pragma once

#include "harness/driver/entry.hpp"

#include <string>
#include <string_view>

namespace cuparity {

/// What a backend found for one entry. The facade keeps one per resolved entry (the binding map).
struct resolution {
  void *address = nullptr;
  /// The exported symbol the backend bound: the probed name (internal) or, for pointers handed
  /// out by cuGetProcAddress (nvidia), the name dladdr reports for the address.
  std::string symbol;
  /// nvidia only: cuGetProcAddress_v2's return code and symbolStatus (-1 where not applicable).
  int query_result = -1;
  int symbol_status = -1;
  /// Why the address is null, in words, when it is.
  std::string missing_reason;
  /// The binding under test binds no such entry at cuparity's ABI (a captured package without it,
  /// or with another ABI of it): a call is not supported there, which is no failure of the driver.
  bool not_bound = false;
  /// The cuGetProcAddress version of the ABI bound when it is not the entry's own (the map
  /// backend binding a process's older ABI of the same signature, older_abis.inl); 0 otherwise.
  int abi_version = 0;
};

class backend {
public:
  virtual ~backend() = default;
  /// "internal", "nvidia" or "map".
  [[nodiscard]] virtual std::string_view name() const noexcept = 0;
  /// Path of the driver library this backend bound to.
  [[nodiscard]] virtual const std::string &driver_path() const noexcept = 0;
  /// Whether stream 0 means the per-thread default stream for the symbols this backend binds.
  [[nodiscard]] virtual bool per_thread_default_stream() const noexcept = 0;
  /// Finds one entry. Called at most once per entry by the facade, possibly from several threads
  /// for different entries; must not throw for a missing function (report it in the result).
  [[nodiscard]] virtual resolution resolve(const entry_info &entry) = 0;
};

/// The C entry point of the separately loadable nvidia backend library (the analogue of the
/// optional cuda-python package). Versioned so a stale library is refused with a clear reason.
inline constexpr int nvidia_backend_abi = 2; // 2: entry_info gained per_thread_version
inline constexpr const char *nvidia_backend_factory = "cuparity_nvidia_backend_create";

struct nvidia_backend_request {
  int abi = nvidia_backend_abi;
  const char *driver_path = nullptr; ///< the driver library to open (never null)
  bool per_thread_default_stream = false;
};

/// What the factory returns (an int across the C boundary). Every status but `ok` writes a reason
/// into `error` (NUL-terminated).
enum class plugin_status : int {
  ok = 0,                ///< *out is set
  bad_request = 1,       ///< the request is malformed or of another ABI: fall back to internal
  driver_unopenable = 2, ///< the driver itself cannot be opened: no binding could work, no fallback
  no_proc_address = 3,   ///< the driver has no cuGetProcAddress_v2: fall back to internal
};

using nvidia_backend_create_fn = int (*)(const nvidia_backend_request *request, backend **out,
                                         char *error, std::size_t error_size);

} // namespace cuparity
