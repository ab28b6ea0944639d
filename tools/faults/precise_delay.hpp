// A busy-wait that adds close to the asked nanoseconds even for delays of a few ns.
#pragma once

#include <cstdint>

namespace cuparity::faults {

/// Busy-waits about `ns` nanoseconds on the calling thread (nothing for ns <= 0). Short delays
/// count iterations of a loop calibrated against steady_clock, so they cost no clock read, less
/// the loops that the call itself costs at about that length (so a 2 ns delay adds about 2 ns,
/// not 2 ns plus a call, and a 70 ns one not 70 plus a mispredicted loop exit);
/// long ones (>= clock_threshold_ns) wait for a steady_clock deadline, compensated for the clock
/// reads, so they stay within half a read (about 10 ns) of the asked time even where a busy
/// core slows the loop down (a loaded CI machine). The first call calibrates (about a
/// millisecond) unless calibrate_delay() ran before.
void precise_delay(std::int64_t ns);

/// Measures the loop's speed and the cost of a clock read, once per process; later calls return
/// at once. Call it where a millisecond does not matter (when faults are read), so that the first
/// delayed driver call is not the one that pays for it.
void calibrate_delay();

inline constexpr std::int64_t clock_threshold_ns = 300;

/// What calibration found (the benchmark prints it).
struct delay_calibration {
  double loops_per_ns = 0;  ///< spin-loop iterations per nanosecond
  double clock_read_ns = 0; ///< cost of one steady_clock::now()
  double entry_ns = 0;      ///< the short path's own cost for the shortest requests
};
[[nodiscard]] const delay_calibration &calibration();

} // namespace cuparity::faults
