// Calibrated spin loop for short delays, steady_clock deadline for long ones.
#include "tools/faults/precise_delay.hpp"

#include <algorithm>
#include <chrono>
#include <limits>

namespace cuparity::faults {

namespace {

using clock = std::chrono::steady_clock;

// Loops per ns in 16.16 fixed point: a short delay is one multiply and a shift, no libm call
// and no float conversion on the caller's time.
constexpr int fraction_bits = 16;

struct tuned {
  delay_calibration published;
  std::uint64_t loops_per_ns_fixed = 0;
  std::uint64_t entry_loops = 0; ///< the short path's own cost, in loops, taken off each delay
};

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

// The short path exactly as precise_delay runs it, so calibration can time its fixed cost.
[[gnu::noinline]] void spin_for(std::int64_t ns, const tuned &t) {
  const std::uint64_t loops =
      (static_cast<std::uint64_t>(ns) * t.loops_per_ns_fixed) >> fraction_bits;
  spin_loops(loops > t.entry_loops ? loops - t.entry_loops : 0);
}

// The fastest of several windows: preemption and interrupts only ever make a window slower, so
// the minimum is the code's own speed.
template <class Work> double best_of(int windows, Work &&work) {
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < windows; ++i) {
    const auto t0 = clock::now();
    work();
    best = std::min(best, elapsed_ns(t0, clock::now()));
  }
  return best;
}

double measure_loops_per_ns() {
  // Grow the window to at least 100 us so the two clock reads around it are below 0.05 %.
  std::uint64_t loops = 1 << 14;
  while (best_of(1, [&] { spin_loops(loops); }) < 100e3 && loops < (std::uint64_t{1} << 34))
    loops *= 2;
  return static_cast<double>(loops) / best_of(7, [&] { spin_loops(loops); });
}

// Average cost of `work` over `calls` calls, the fastest of 7 windows.
template <class Work> double per_call_ns(int calls, Work &&work) {
  return best_of(7,
                 [&] {
                   for (int i = 0; i < calls; ++i)
                     work();
                 }) /
         calls;
}

tuned measure() {
  tuned t;
  t.published.loops_per_ns = measure_loops_per_ns();
  t.loops_per_ns_fixed =
      static_cast<std::uint64_t>(t.published.loops_per_ns * (1 << fraction_bits));
  t.published.clock_read_ns = per_call_ns(1000, [] { (void)clock::now(); });
  // A 1 ns request spins no loop at all (entry_loops is still 0), so this is the call's own cost.
  t.published.entry_ns = per_call_ns(10000, [&] { spin_for(1, t); });
  t.entry_loops = static_cast<std::uint64_t>(t.published.entry_ns * t.published.loops_per_ns);
  return t;
}

const tuned &calibrated() {
  static const tuned t = measure();
  return t;
}

} // namespace

void calibrate_delay() {
  (void)calibrated();
}

const delay_calibration &calibration() {
  return calibrated().published;
}

void precise_delay(std::int64_t ns) {
  if (ns <= 0)
    return;
  const tuned &t = calibrated();
  if (ns < clock_threshold_ns) {
    spin_for(ns, t);
    return;
  }
  // From entry, the first read's sample comes half a read in; the loop's samples are a read
  // apart, so the first one past the deadline is half a read late on average, and returning
  // takes half a read more. Aiming one and a half reads early makes the mean exact, within
  // half a read either way, however busy the core is.
  const auto early = static_cast<std::int64_t>(1.5 * t.published.clock_read_ns);
  const auto until = clock::now() + std::chrono::nanoseconds(ns - early);
  while (clock::now() < until) {
  }
}

} // namespace cuparity::faults
