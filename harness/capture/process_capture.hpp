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
};

struct capture_outcome {
  int exit_status = 0;           ///< the command's, as a shell reports it
  nlohmann::json map;            ///< cuparity.binding_map/2
  std::vector<std::string> lost; ///< processes whose bindings the map misses, each in words
};

/// Runs the command with LD_AUDIT (kept in front of any LD_AUDIT already set) and the audit
/// library's variables, its stdio passed through, then reads every process's events. Processes
/// still running when the command has exited (this process is their subreaper, so it sees them),
/// event files that cannot be read and processes that could not write theirs are `lost`. Throws
/// capture_error when it cannot set up or start the command, or when no process was captured.
[[nodiscard]] capture_outcome capture_process_tree(const capture_request &request);

} // namespace cuparity
