// The start of a cell or probe process: session, cuInit and primary context, then cell_start.
#pragma once

#include "harness/driver/driver.hpp"
#include "harness/protocol/event_stream.hpp"
#include "harness/session/session.hpp"

#include <chrono>
#include <functional>
#include <memory>

namespace cuparity::cli {

/// Milliseconds since `t` on the steady clock (the cell's timings).
inline double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

/// How the start-up driver calls are made.
enum class startup_calls {
  /// Raw calls whose failure is tolerated: a cell process starts anyway, and its cases meet (and
  /// report) whatever the driver refused.
  tolerant,
  /// Checked calls: a failure ends the start with cell_error, since a probe process has nothing to
  /// measure without a context.
  checked,
};

/// A process after its start: the session and the primary context of device 0.
struct started_process {
  std::unique_ptr<session> sess; ///< null when the process could not start
  int exit_code = 0;             ///< without a session: what the process ends with
  CUdevice dev = 0;
  CUcontext primary = nullptr; ///< null when a tolerated call failed before or at the retain
  double init_ms = 0;          ///< cuInit
  double retain_ms = 0;        ///< cuDevicePrimaryCtxRetain (0 when not reached)
  [[nodiscard]] bool started() const noexcept { return sess != nullptr; }
};

/// Runs after the retain and before cell_start, so that a failure there (a checked call throwing)
/// reads as cell_error with no cell_start before it.
using before_cell_start = std::function<void(driver &, const started_process &)>;

/// Reads the settings, opens the session, calls cuInit and retains device 0's primary context
/// (timing both: cell_start's startup_ms), then writes cell_start (pid, config, driver facts,
/// startup_ms). When it cannot, it writes cell_error (kind "config": exit bad_input; "driver":
/// exit environment) and says why on stderr as "cuparity <command>: ...". The context stays
/// retained: the caller releases it.
[[nodiscard]] started_process start_process(const event_stream &events, const char *command,
                                            startup_calls calls,
                                            const before_cell_start &before_start = {});

} // namespace cuparity::cli
