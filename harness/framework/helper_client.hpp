// The cell's helper server as its cases see it: started early or at the first request, reused.
#pragma once

#include "harness/platform/subprocess.hpp"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace cuparity {

/// What helpers cost a case: the time it waited for the server's start (process, cuInit, primary
/// context; only what was left of it when the server was started early), and the time spent in
/// requests.
struct helper_costs {
  int starts = 0;
  double startup_ms = 0;
  double requests_ms = 0;
};

/// One `cuparity helper --serve` per cell process, in the cell's own environment. A cell runs one
/// case at a time, so one client and one server serve them all.
class helper_client {
public:
  static helper_client &instance();
  helper_client() = default;
  ~helper_client(); ///< shutdown(); never throws
  helper_client(const helper_client &) = delete;
  helper_client &operator=(const helper_client &) = delete;

  /// Runs helper `name` in the server, starting one when none is up. Each of the start and the
  /// answer gets `timeout`; a server that misses it is killed (timed_out), one that dies is
  /// reported with its status, and one whose helper failed is not reused (what the failure left
  /// open would reach the next case). Throws std::system_error only when no process can start.
  [[nodiscard]] process_result call(const std::string &name, const std::vector<std::string> &args,
                                    std::chrono::milliseconds timeout);
  /// Starts a server, when none is up, without waiting for it: call() waits for its start. A
  /// process that cannot start is left for call() to report. Never throws.
  void prestart() noexcept;
  /// Ends the server: closes its input and waits for it (killing it after 10 s).
  void shutdown() noexcept;
  /// The costs since the last take, which starts them again from zero.
  [[nodiscard]] helper_costs take_costs() noexcept;

private:
  void spawn();
  [[nodiscard]] bool await_start(std::chrono::milliseconds timeout, process_result &failure);
  [[nodiscard]] process_result ended(const std::string &why, bool timed_out);

  std::unique_ptr<child_process> m_server;
  bool m_starting = false; ///< spawned, cell_start not read yet
  helper_costs m_costs;
};

} // namespace cuparity
