// Running a command under the audit library and turning what it recorded into a binding map.
#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace cuparity {

/// The capture could not be set up (no audit library, no scratch folder): nothing was run.
class capture_error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

struct capture_request {
  std::vector<std::string> command; ///< argv; argv[0] looked up in PATH
  std::string audit_library;        ///< libcuparity_audit.so
  std::string driver_path;          ///< NUMBA_CUDA_DRIVER's library, also taken as the driver
  std::string events_dir;           ///< keep the raw event files here ("": a scratch folder)
  /// The Python start-up hook's folder (tools/capture/python_hook), put first on PYTHONPATH so
  /// each Python process writes cuda.bindings' own table at exit ("": no hook).
  std::string python_hook;
};

struct capture_outcome {
  int exit_status = 0;           ///< the command's, as a shell reports it
  nlohmann::json map;            ///< cuparity.binding_map/2
  std::vector<std::string> lost; ///< processes whose bindings the map misses, each in words
};

/// Runs the command with LD_AUDIT (kept in front of any LD_AUDIT already set), the audit
/// library's variables and the Python hook first on PYTHONPATH, its stdio passed through, then
/// reads every process's events and the package tables the hook wrote. Processes
/// still running when the command has exited (this process is their subreaper, so it sees them),
/// event files that cannot be read and processes that could not write theirs are `lost`. Throws
/// capture_error when it cannot set up or start the command, or when no process was captured.
[[nodiscard]] capture_outcome capture_process_tree(const capture_request &request);

} // namespace cuparity
