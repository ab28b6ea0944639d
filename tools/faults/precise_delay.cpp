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

// What a call of n loops costs beyond n loops is not one constant: the call itself, and from
// some trip count on (about 20 here) a mispredicted loop exit of several ns. So there are two
// overheads, measured with requests of 0 and of 64 loops, and a request of at least
// `long_from` loops takes off the second. One comparison: a table of lengths cost more to
// search than a 2 ns delay lasts.
constexpr std::uint64_t long_from = 24;
constexpr std::uint64_t long_probe = 64;

struct tuned {
  delay_calibration published;
  std::uint64_t loops_per_ns_fixed = 0;
  std::uint64_t short_overhead = 0; ///< loops taken off a request shorter than long_from
  std::uint64_t long_overhead = 0;  ///< loops taken off a longer one
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

// The short path for a request of `loops` loops, exactly as precise_delay runs it, so that
// calibration times the same code.
[[gnu::noinline]] void spin_request(std::uint64_t loops, const tuned &t) {
  const std::uint64_t overhead = loops >= long_from ? t.long_overhead : t.short_overhead;
  spin_loops(loops > overhead ? loops - overhead : 0);
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

// Average cost of `work` over `calls` calls, the fastest of 7 windows.
template <class Work> double per_call_ns(int calls, Work &&work) {
  const auto repeated = [&] {
    for (int i = 0; i < calls; ++i)
      work();
  };
  return best_of(7, repeated) / calls;
}

double measure_loops_per_ns() {
  // Grow the window to at least 100 us so the two clock reads around it are below 0.05 %.
  std::uint64_t loops = 1 << 14;
  while (best_of(1, [&] { spin_loops(loops); }) < 100e3 && loops < (std::uint64_t{1} << 34))
    loops *= 2;
  return static_cast<double>(loops) / best_of(7, [&] { spin_loops(loops); });
}

// The overhead of a request of n loops, in loops, measured while no correction applies yet.
std::uint64_t overhead_at(std::uint64_t n, const tuned &t) {
  const double lpn = t.published.loops_per_ns;
  const double extra_ns = per_call_ns(5000, [&] { spin_request(n, t); }) - n / lpn;
  return static_cast<std::uint64_t>(std::max(0.0, extra_ns) * lpn);
}

tuned measure() {
  tuned t;
  t.published.loops_per_ns = measure_loops_per_ns();
  t.loops_per_ns_fixed =
      static_cast<std::uint64_t>(t.published.loops_per_ns * (1 << fraction_bits));
  t.published.clock_read_ns = per_call_ns(1000, [] { (void)clock::now(); });
  const std::uint64_t short_overhead = overhead_at(0, t);
  const std::uint64_t long_overhead = overhead_at(long_probe, t);
  t.short_overhead = short_overhead;
  t.long_overhead = long_overhead;
  t.published.entry_ns = static_cast<double>(short_overhead) / t.published.loops_per_ns;
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
    spin_request((static_cast<std::uint64_t>(ns) * t.loops_per_ns_fixed) >> fraction_bits, t);
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
