// Child processes (posix_spawn, never a bare fork) with an exact environment, output captured.
#pragma once

#include "harness/platform/environment.hpp"

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cuparity {

struct process_result {
  int exit_code = -1; ///< valid when exited
  int signal = 0;     ///< the signal that ended it, 0 if it exited
  bool exited = false;
  bool timed_out = false; ///< killed (SIGKILL) after the timeout
  std::string out, err;
};

struct process_spec {
  std::vector<std::string> argv; ///< argv[0] is the program path
  /// The complete environment of the child (nothing else is inherited), but for
  /// parent_pid_variable: always this process's pid, for the child's die_with_parent().
  std::map<std::string, std::string> env;
  std::optional<std::chrono::milliseconds> timeout;
  /// The folder the child starts in; none: this process's.
  std::optional<std::string> cwd;
};

/// Every child starts in a process group of its own and, if it calls die_with_parent()
/// (cuparity's main does), gets SIGKILL when the thread that started it ends (prctl(2): the
/// parent is that thread, not the process). So a thread that starts children must wait for them
/// before it returns; run_process does, and so does child_process's destructor.

/// Waits for the child `pid` to end (through EINTR) and records how it ended in `result`.
void wait_for_child(int pid, process_result &result);

/// Starts the child, collects stdout and stderr until it ends (or the timeout kills it).
/// Throws std::system_error when the child cannot be started.
[[nodiscard]] process_result run_process(const process_spec &spec);

/// A running child whose events arrive line by line on a pipe at its fd 3, with stdout and
/// stderr appended to a log file. Used by the runner to watch one cell process.
class child_process {
public:
  /// Starts spec.argv with spec.env; the child's fd 3 is the write end of the events pipe. With
  /// `commands`, the child's stdin is a pipe the parent writes lines to (send_line).
  child_process(const process_spec &spec, const std::string &log_path, bool commands = false);
  ~child_process(); ///< kills the process group if still running; never throws
  child_process(const child_process &) = delete;
  child_process &operator=(const child_process &) = delete;

  enum class read_status { line, timeout, eof };
  /// Waits up to `timeout` for a complete line.
  read_status read_line(std::string &line, std::chrono::milliseconds timeout);
  /// Writes one line to the child's stdin (commands mode); false if it cannot (child gone).
  bool send_line(const std::string &line) noexcept;
  /// Closes the child's stdin: a serving child reads end-of-file and exits.
  void close_input() noexcept;
  /// SIGKILL to the child's process group (it and anything it started).
  void kill_group() noexcept;
  /// Waits for exit; returns the status (out/err are left empty: they went to the log).
  process_result wait();
  [[nodiscard]] int pid() const noexcept { return m_pid; }

private:
  int m_pid = -1;
  int m_events = -1;
  int m_input = -1;
  std::string m_buffer;
  bool m_waited = false;
  process_result m_result;
};

} // namespace cuparity
