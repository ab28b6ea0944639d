// Calibrated spin loop for short delays, steady_clock deadline for long ones.
#include "tools/faults/precise_delay.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace cuparity::faults {

namespace {

using clock = std::chrono::steady_clock;

double elapsed_ns(clock::time_point from, clock::time_point to) {
  return static_cast<double>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(to - from).count());
}

// One iteration is a decrement and a branch on a value the compiler must keep (the empty asm
// claims to change it), so the loop survives optimisation and runs at about one per cycle.
[[gnu::noinline]] void spin_loops(std::uint64_t n) {
  while (n != 0) {
    --n;
    asm volatile("" : "+r"(n));
  }
}

// The fastest of several windows: preemption and interrupts only ever make a window slower, so
// the minimum is the loop's own speed.
template <class Work> double best_of(int windows, Work &&work) {
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < windows; ++i) {
    const auto t0 = clock::now();
    work();
    best = std::min(best, elapsed_ns(t0, clock::now()));
  }
  return best;
}

delay_calibration measure() {
  delay_calibration c;
  // Grow the window to at least 100 us so the two clock reads around it are below 0.05 %.
  std::uint64_t loops = 1 << 14;
  while (best_of(1, [&] { spin_loops(loops); }) < 100e3 && loops < (std::uint64_t{1} << 34))
    loops *= 2;
  c.loops_per_ns = static_cast<double>(loops) / best_of(7, [&] { spin_loops(loops); });
  constexpr int reads = 1000;
  const auto read_clock = [] {
    for (int i = 0; i < reads; ++i)
      (void)clock::now();
  };
  c.clock_read_ns = best_of(7, read_clock) / reads;
  return c;
}

const delay_calibration &calibrated() {
  static const delay_calibration c = measure();
  return c;
}

} // namespace

void calibrate_delay() {
  (void)calibrated();
}

const delay_calibration &calibration() {
  return calibrated();
}

void precise_delay(std::int64_t ns) {
  if (ns <= 0)
    return;
  const delay_calibration &c = calibrated();
  if (ns < clock_threshold_ns) {
    spin_loops(static_cast<std::uint64_t>(std::llround(static_cast<double>(ns) * c.loops_per_ns)));
    return;
  }
  // The last read ends past the deadline by up to one read: aim one read early.
  const auto until =
      clock::now() + std::chrono::nanoseconds(ns - static_cast<std::int64_t>(c.clock_read_ns));
  while (clock::now() < until) {
  }
}

} // namespace cuparity::faults
