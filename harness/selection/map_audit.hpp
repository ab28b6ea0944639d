// A binding map captured from a real package (tools/capture), checked against the driver itself.
#pragma once

#include "harness/driver/driver_library.hpp"

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace cuparity {

/// A captured map that cannot be read: the message names the file and the member.
class map_error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// One function as the package bound it.
struct captured_entry {
  std::string function;               ///< the base name cuGetProcAddress takes
  std::string raw_name;               ///< the package's own name for it
  std::optional<std::string> symbol;  ///< dladdr's symbol of its pointer; none: no pointer
  std::optional<std::string> library; ///< the file the pointer lies in
};

/// A cuparity.binding_map/1 file (tools/capture/README.md).
struct captured_map {
  std::string path;
  std::string kind; ///< "cuda.bindings" or "numba"
  std::string name, version;
  std::map<std::string, std::optional<std::string>> environment;
  std::string status; ///< "ok", "import_failed" or "load_failed"
  std::string error;
  std::vector<captured_entry> entries;
};

/// Reads and checks a captured map. Throws map_error ("FILE: member: problem").
[[nodiscard]] captured_map read_captured_map(const std::string &path);

/// What the package's documented semantics select for stream 0 under the captured environment
/// (cuda.bindings: CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM, an integer, unset and "0" meaning
/// off, anything else not an integer refused at load; Numba: NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM
/// through _readenv, a non-integer meaning off with a warning).
struct ptds_expectation {
  bool per_thread = false;
  bool value_refused = false; ///< the value is not an integer: the package must refuse to load
  std::string why;            ///< the variable and its value, in words
};
[[nodiscard]] ptds_expectation expected_ptds(const captured_map &m);

enum class finding_kind {
  same,             ///< the package binds what the driver answers
  per_thread_wrong, ///< a per-thread symbol where legacy is expected, or the reverse: a failure
  abi_difference,   ///< another ABI of the same function (cuCtxCreate_v4 vs _v2): reported
  missing,          ///< the package holds no pointer for it
  unknown,          ///< a function cuparity has no entry for: not checked
  no_answer,        ///< the driver answers nothing for it, yet the package holds a pointer
  wrong_function,   ///< the symbol is no variant of the function (cuMemFree bound to cuMemAlloc_v2)
};

struct map_finding {
  finding_kind kind = finding_kind::same;
  std::string function, raw_name;
  std::string captured; ///< the package's symbol ("" for none)
  std::string driver;   ///< cuGetProcAddress_v2's answer at cuparity's ABI, by name
  std::string internal; ///< the symbol cuparity's internal backend (Numba's probing) binds
  std::string message;  ///< one line for a finding that is not `same`
};

struct map_audit_report {
  bool audited = false;
  std::string not_audited; ///< why not (the package did not load, no cuGetProcAddress_v2)
  bool failed = false;     ///< some finding is a failure (or a refused value was accepted)
  ptds_expectation ptds;
  std::string driver_path;        ///< the driver under test, as loaded
  std::vector<std::string> notes; ///< e.g. the map's pointers lie in another library
  std::vector<map_finding> findings;
  std::map<finding_kind, std::size_t> counts;
};

/// Audits `m` against the driver in `lib`.
[[nodiscard]] map_audit_report audit_captured_map(const captured_map &m, const driver_library &lib);

[[nodiscard]] const char *to_string(finding_kind k) noexcept;

} // namespace cuparity
