// A binding map captured from a package or a process tree, checked against the driver itself.
#pragma once

#include "harness/capture/captured_map.hpp"
#include "harness/driver/driver_library.hpp"

#include <map>
#include <string>
#include <vector>

namespace cuparity {

/// What the package's documented semantics select for stream 0 under the captured environment
/// (cuda.bindings: CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM, an integer, unset and "0" meaning
/// off, anything else not an integer refused at load; Numba: NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM
/// through _readenv, a non-integer meaning off with a warning).
struct ptds_expectation {
  bool known = true; ///< false: nothing says what this binding should be (/2 only)
  bool per_thread = false;
  bool value_refused = false; ///< the value is not an integer: the package must refuse to load
  std::string why;            ///< the variable and its value, or the request's flag, in words
};
[[nodiscard]] ptds_expectation expected_ptds(const captured_map &m);
/// The same for a package `kind` ("cuda.bindings" or "numba") under `environment`.
[[nodiscard]] ptds_expectation
expected_ptds(const std::string &kind,
              const std::map<std::string, std::optional<std::string>> &environment);

enum class finding_kind {
  same,             ///< the package binds what the driver answers
  per_thread_wrong, ///< a per-thread symbol where legacy is expected, or the reverse: a failure
  abi_difference,   ///< an older ABI than the newest, of the same parameter types: reported
  missing,          ///< the package holds no pointer for it
  unknown,          ///< a name the driver API's headers do not declare: not checked
  no_answer,        ///< the driver answers nothing for it, yet the package holds a pointer
  wrong_function,   ///< the symbol is no variant of the function (cuMemFree bound to cuMemAlloc_v2)
  // binding_map/2 (a process tree):
  per_thread_too_old, ///< asked with the per-thread flag below the variant's version: no pointer
  two_abis,           ///< one process bound two ABIs of one function (cuCtxCreate_v2 and _v4)
  both_modes,         ///< one process bound a function both legacy and per-thread
  only_direct,        ///< bound by PLT or dlsym, never asked of cuGetProcAddress by that process
  unchecked,          ///< nothing known of what the caller should bind: its mode is stated only
  // the whole driver API (harness/driver/driver_api.hpp):
  abi_behind,      ///< the driver handed out another ABI than the newest at the version asked
  null_entry,      ///< a request the driver answered with no pointer, at the version asked
  old_semantics,   ///< an ABI whose parameters differ from the newest one's (32-bit sizes)
  mixed_modes,     ///< one dlsym binder bound some functions per-thread and others legacy
  table_disagrees, ///< cuda.bindings' own pointer table names another symbol than was bound
};

struct map_finding {
  finding_kind kind = finding_kind::same;
  std::string function, raw_name;
  std::string captured; ///< the package's symbol ("" for none)
  /// The driver under test's cuGetProcAddress_v2 answer, by name: asked as the entry's request
  /// asked (version and flags), else for the function's newest ABI in the expected mode.
  std::string driver;
  std::string expected; ///< what the driver API table says is due ("" for none or unknown)
  std::string internal; ///< the symbol cuparity's internal backend (Numba's probing) binds
  std::string message;  ///< one line for a finding that is not `same`
  long process = 0;     ///< /2: the pid
  int image = 0;        ///< /2: which image of it (exec count)
  std::string source;   ///< /2: plt, dlsym or proc
  /// The evidence of the stream-0 mode it was judged by (a variable, a request's flags, what its
  /// binder bound), or why there is none; "" where its mode cannot be wrong.
  std::string because;
};

struct map_audit_report {
  bool audited = false;
  std::string not_audited;        ///< why not (the package did not load, no cuGetProcAddress_v2)
  bool failed = false;            ///< some finding is a failure (or a refused value was accepted)
  ptds_expectation ptds;          ///< /1: the package's; /2: not used (each entry has its own)
  std::string driver_path;        ///< the driver under test, as loaded
  std::vector<std::string> notes; ///< e.g. the map's pointers lie in another library
  std::vector<map_finding> findings;
  std::map<finding_kind, std::size_t> counts;
  int headers_version = 0;          ///< api_headers_version(): the CUDA headers of the table
  std::vector<std::string> unknown; ///< the names those headers do not declare, each once, sorted
  /// /2: each direct binder whose stream-0 mode was inferred from what it bound, in words.
  std::vector<std::string> inferred;
};

/// Audits `m` against the driver in `lib`.
[[nodiscard]] map_audit_report audit_captured_map(const captured_map &m, const driver_library &lib);

/// Whether a finding of this kind fails the audit.
[[nodiscard]] bool is_failure(finding_kind k) noexcept;

[[nodiscard]] const char *to_string(finding_kind k) noexcept;

} // namespace cuparity
