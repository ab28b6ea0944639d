// Preparing a run's output directory: ownership, resume, --force, and what it refuses.
#pragma once

#include "harness/run/out_lock.hpp"

#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace cuparity {

/// Why an output directory cannot be used; the runner reports it as bad input (exit 2).
class out_dir_error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

struct out_dir_request {
  std::string dir;
  bool resume = false;
  bool force = false;
  nlohmann::json plan; ///< this run's plan record (plan_identity.hpp)
};

struct prepared_out_dir {
  std::unique_ptr<out_lock> lock;       ///< held until the run's verdict is written
  std::vector<nlohmann::json> previous; ///< what results.jsonl holds already (--resume)
};

/// Creates `dir` (with logs/) and locks it, then:
/// - results there already: --resume reads them, refuses them when their plan differs from
///   this one (naming what differs) and sets aside a cut-off last record before anything is
///   appended; --force moves results, summary and junit aside under names no other run takes;
///   otherwise refuses;
/// - no results, but a summary.json or junit.xml (a finished or committed run): refuses unless
///   --force;
/// Throws out_dir_error with the message for the user.
[[nodiscard]] prepared_out_dir prepare_out_dir(const out_dir_request &request);

/// Moves `dir`'s results.jsonl, summary.json and junit.xml aside under "<file>.<time>-<pid>.bak"
/// names no other file holds (the folder must be locked), saying so on stderr; `command` names
/// the command in messages. Throws out_dir_error when one cannot be moved.
void set_aside_run_files(const std::string &dir, const std::string &command);

} // namespace cuparity
