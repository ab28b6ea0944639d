// A busy-wait that adds close to the asked nanoseconds even for delays of a few ns.
#pragma once

#include <cstdint>

namespace cuparity::faults {

/// Busy-waits about `ns` nanoseconds on the calling thread (nothing for ns <= 0).
/// - Below about three counter reads (20-60 ns), it counts iterations of a loop, less the loops
///   the call itself costs at about that length: no clock read, so a 2 ns delay adds about 2 ns.
///   The loop's speed follows the core's, so the loop times itself against the counter about
///   every 10 ms (1 us of loop, its cost spread over the calls between samples) and follows a
///   core whose clock moves within a few samples.
/// - From there, it waits for a deadline on the TSC (x86-64, where the kernel keeps time with
///   it) or else on steady_clock, aimed early by the wait's own overshoot as calibration
///   measured it: within about a read (3-12 ns) of the asked time, however busy the core is.
/// The first call calibrates (about 40 ms: 30 of them bring the core to speed first) unless
/// calibrate_delay() ran before.
void precise_delay(std::int64_t ns);

/// Measures the loop's speed, the loop's overheads and the counter, once per process; later
/// calls return at once. Call it where milliseconds do not matter (when faults are read), so
/// that the first delayed driver call is not the one that pays for it.
void calibrate_delay();

/// What calibration found (the benchmark prints it).
struct delay_calibration {
  double loops_per_ns = 0;          ///< spin-loop iterations per nanosecond
  double clock_read_ns = 0;         ///< cost of one steady_clock::now()
  double short_overhead_loops = 0;  ///< the loop path's own cost for the shortest requests
  double long_overhead_loops = 0;   ///< and for requests of 24 loops or more (taken off them)
  double entry_ns = 0;              ///< short_overhead_loops at loops_per_ns
  double long_entry_ns = 0;         ///< long_overhead_loops at loops_per_ns
  bool tsc = false;                 ///< deadlines use the TSC (else steady_clock)
  double counter_read_ns = 0;       ///< cost of one read of the deadline counter
  std::int64_t counter_from_ns = 0; ///< requests from here wait on the counter
};
[[nodiscard]] const delay_calibration &calibration();

/// The loop rate (loops per ns) the loop path uses now: calibration's, then the samples'.
[[nodiscard]] double loop_rate_now();

/// How the loop path's rate moved in this process, from its samples (the fault shim's log).
/// Read it once calibration has run (calibrate_delay() or a first delay): calibration resets it
/// without the samples' lock.
struct loop_history {
  std::int64_t samples = 0;              ///< samples of the rate taken
  double rate_min = 0;                   ///< slowest sample, loops per ns (0: none yet)
  double rate_max = 0;                   ///< fastest sample
  std::int64_t calls = 0;                ///< loop-path calls so far
  std::int64_t calls_per_sample_min = 0; ///< fewest calls scheduled between two samples
  std::int64_t calls_per_sample_max = 0; ///< most
  double debt_loops_now = 0;             ///< loops each call gives up now for the samples' cost
  double debt_loops_max = 0;             ///< the most it gave up
};
[[nodiscard]] loop_history loop_history_now();

/// Multiplies the loop rate now and the samples it is the median of by `factor`, as a core whose
/// clock moved would leave them; tests use it to see the samples bring the rate back.
void skew_loop_rate(double factor);

} // namespace cuparity::faults
