// One process of an external suite: started under `cuparity capture`, watched, read back.
#pragma once

#include "harness/external/junit_report.hpp"
#include "harness/external/suite_progress.hpp"
#include "harness/platform/subprocess.hpp"

#include <atomic>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cuparity {

/// What to start: the suite's command in its folder, with the tests to leave out or to run alone.
struct suite_process_spec {
  std::vector<std::string> command; ///< {out} and {junit} still to substitute
  std::string junit;                ///< the suite's junit key, {out} still to substitute
  std::string dir;                  ///< this process's folder ({out}); created, must not exist
  std::string suite_dir;            ///< the cell's folder for the suite, kept across processes
  std::map<std::string, std::string> env;       ///< the cell's environment
  std::map<std::string, std::string> extra_env; ///< the suite's own variables, set over it
  std::vector<std::string> deselect;            ///< pytest node ids not to run again
  std::vector<std::string> only;                ///< run these node ids only (none: every test)
  std::chrono::milliseconds timeout{0};
  /// The folder it starts in (the suite's root); none: cuparity's own.
  std::optional<std::string> cwd;
  /// The plugin's stops (0: none): the session ends once this many tests failed alike with no
  /// pass (CUPARITY_SUITE_SAME_FAILURES), or once this many failed (CUPARITY_SUITE_MAX_FAILS).
  int same_failures = 0;
  int max_fails = 0;
  /// A [[program]]: no pytest plugin on its path and no JUnit file to read.
  bool program = false;
};

/// How it ended and what it left.
struct suite_process_result {
  std::string dir, junit_path, map_path, log_path;
  int pid = 0;
  int exit_code = -1; ///< the command's status as a shell reports it (128 + signal if killed)
  int signal = 0;     ///< the signal that ended the command, 0 when it exited
  bool timed_out = false;
  double timeout_s = 0; ///< the deadline it was given
  bool stopped = false; ///< the run was interrupted meanwhile
  long oom_kills = 0;   ///< processes the kernel's OOM killer ended meanwhile (/proc/vmstat)
  double wall_ms = 0;
  double ended_unix = 0; ///< when it ended, seconds since the epoch
  suite_progress progress;
  std::optional<junit_report> junit; ///< none when the file is missing or unreadable
  std::string junit_problem;         ///< why there is none
  bool map_written = false;
  /// What it left running when it ended ("4242 (sleep)"), killed then (suite_leftovers).
  std::vector<std::string> left;

  /// "killed by signal 9 (Killed); the kernel's OOM killer ended 1 process meanwhile", "timed
  /// out after 120 s", "exited with code 1".
  [[nodiscard]] std::string how_it_ended() const;
  [[nodiscard]] bool ended_abnormally() const { return timed_out || signal != 0; }
  /// How long the test in flight ran before the process ended: from its start line, else the
  /// process's whole life.
  [[nodiscard]] double in_flight_s() const;
};

/// Starts `cuparity capture --out <dir>/capture.json -- <command>` with cuparity's pytest plugin
/// on PYTHONPATH and in PYTEST_ADDOPTS (not for a program), waits for it to end (killing its
/// process group at the timeout or when `stop` is set), kills and names what it left running
/// (`left`, and a last line in its log) and reads its progress, JUnit file (not a program's) and
/// log. Throws std::system_error when the folder or the process cannot be made.
[[nodiscard]] suite_process_result run_suite_process(const suite_process_spec &spec,
                                                     const std::atomic<bool> &stop);

/// The last `lines` lines of a log (at most 2 KiB), for a message.
[[nodiscard]] std::string log_tail(const std::string &path, std::size_t lines);

} // namespace cuparity
