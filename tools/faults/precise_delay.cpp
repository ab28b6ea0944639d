// Busy-waits of a few ns to microseconds: a calibrated loop below a few counter reads, a
// deadline on a counter that a busy core does not slow down above.
#include "tools/faults/precise_delay.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace cuparity::faults {

namespace {

using clock = std::chrono::steady_clock;

// Loops per ns in 16.16 fixed point: a short delay is one multiply and a shift, no libm call
// and no float conversion on the caller's time.
constexpr int fraction_bits = 16;

// What a call of n loops costs beyond n loops is not one constant: the call itself, and from
// some trip count on (about 20 here) a mispredicted loop exit of several ns. So there are two
// overheads, measured with requests of 0 and of 64 loops, and a request of at least
// `long_from` loops takes off the second (one comparison: a table would cost more to search
// than a 2 ns delay lasts).
constexpr std::uint64_t long_from = 24;
constexpr std::uint64_t long_probe = 64;

struct tuned {
  delay_calibration published;
  std::uint64_t loops_per_ns_fixed = 0;
  std::uint64_t short_overhead = 0; ///< loops taken off a request shorter than long_from
  std::uint64_t long_overhead = 0;  ///< loops taken off a longer one
  bool tsc = false;                 ///< the deadline counter is the TSC, else steady_clock
  double ticks_per_ns = 1;          ///< of the deadline counter
  std::uint64_t early_ticks = 0;    ///< a deadline is aimed this much early (wait_request)
  std::int64_t counter_from_ns = 0; ///< requests from here wait on the counter
};

std::uint64_t steady_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now().time_since_epoch())
          .count());
}

// The loop's speed moves with the core's frequency and with whatever shares the core (a busy
// VM host: up to 40 % between runs here), the TSC's does not. It is used where the kernel keeps
// time with it, so it is known to be invariant and synchronised.
bool kernel_uses_tsc() {
#if defined(__x86_64__)
  std::ifstream in("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::string source;
  return static_cast<bool>(in >> source) && source == "tsc";
#else
  return false;
#endif
}

std::uint64_t counter(const tuned &t) {
#if defined(__x86_64__)
  if (t.tsc)
    return __rdtsc();
#endif
  (void)t;
  return steady_ns();
}

double elapsed_ns(clock::time_point from, clock::time_point to) {
  return static_cast<double>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(to - from).count());
}

// One iteration subtracts a register (holding 1) from the count and branches; the empty asm claims
// to change both, so the loop survives optimisation and the step cannot become an immediate. Cores
// that fold an immediate add or subtract at rename (Intel from Golden Cove on) ran the old
// `--n` loop at about 3 iterations a cycle, and at a rate that moved with the trip count: here a
// 5 ns request waited 1.7 ns and 20 ns 25.5 ns, and on the H200 host an 18 ns fault added 9 to
// 33 ns depending on the process (reports/runs/2026-12-03-h200-6a3227c). A register-register
// subtract is one cycle of latency on every x86-64 core.
[[gnu::noinline]] void spin_loops(std::uint64_t n) {
  std::uint64_t one = 1;
  asm volatile("" : "+r"(one));
  while (n != 0) {
    n -= one;
    asm volatile("" : "+r"(n), "+r"(one));
  }
}

// The loop path for a request of `loops` loops, exactly as precise_delay runs it, so that
// calibration times the same code.
[[gnu::noinline]] void spin_request(std::uint64_t loops, const tuned &t) {
  const std::uint64_t overhead = loops >= long_from ? t.long_overhead : t.short_overhead;
  spin_loops(loops > overhead ? loops - overhead : 0);
}

// A deadline `ns` ahead on the counter, aimed early by the path's own overshoot (the reads at
// both ends, the last one's lateness, the call), which calibration measures on this very code.
[[gnu::noinline]] void wait_request(std::int64_t ns, const tuned &t) {
  const auto ticks = static_cast<std::uint64_t>(static_cast<double>(ns) * t.ticks_per_ns);
  const std::uint64_t until = counter(t) + (ticks > t.early_ticks ? ticks - t.early_ticks : 0);
  while (counter(t) < until) {
  }
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

// How much longer than asked back-to-back 200 ns deadline waits last, as a fault's delays run
// (the fastest of several windows, so a preempted window does not count). The read that fixes the
// deadline, the last one's lateness and the call are all in it. An earlier estimate, the median
// counter interval around one wait less that around nothing, left the waits 5 ns long here (20 ns
// took 25.4).
double wait_lateness_ns(const tuned &t) {
  constexpr std::int64_t probe_ns = 200;
  return per_call_ns(1000, [&] { wait_request(probe_ns, t); }) - probe_ns;
}

// The counter's rate against steady_clock over 2 ms (0.1 % from the clock reads at the ends),
// the cost of one read, and the wait's lateness. The counter takes over from three reads on,
// where its error (within a read) is below the loop's on a busy core.
void measure_counter(tuned &t) {
  t.tsc = kernel_uses_tsc();
  const auto t0 = clock::now();
  const std::uint64_t c0 = counter(t);
  while (elapsed_ns(t0, clock::now()) < 2e6) {
  }
  t.ticks_per_ns = static_cast<double>(counter(t) - c0) / elapsed_ns(t0, clock::now());
  const double read_ns = per_call_ns(1000, [&] { (void)counter(t); });
  // Aimed early by the lateness, then by what is left of it once corrected (the correction moves
  // where the last read falls).
  t.early_ticks = 0;
  double early_ns = std::max(0.0, wait_lateness_ns(t));
  t.early_ticks = static_cast<std::uint64_t>(early_ns * t.ticks_per_ns);
  early_ns = std::max(0.0, early_ns + wait_lateness_ns(t));
  t.early_ticks = static_cast<std::uint64_t>(early_ns * t.ticks_per_ns);
  t.counter_from_ns = std::max<std::int64_t>(20, static_cast<std::int64_t>(3 * read_ns));
  t.published.counter_read_ns = read_ns;
}

// Keeps the core busy for `ms` milliseconds. A process that reads its faults has just started, on
// a core that may still be at an idle clock; calibrated then, the loop reads slow, and every later
// delay is short by the clock's rise. On the H200 host an 18 ns fault added 7 ns for the whole of
// one process and 31 ns in another (reports/runs/2026-12-03-h200-daf8bf9).
void busy_for_ms(int ms) {
  const auto until = clock::now() + std::chrono::milliseconds(ms);
  while (clock::now() < until) {
  }
}

tuned measure() {
  tuned t;
  busy_for_ms(30);
  t.published.loops_per_ns = measure_loops_per_ns();
  t.loops_per_ns_fixed =
      static_cast<std::uint64_t>(t.published.loops_per_ns * (1 << fraction_bits));
  t.published.clock_read_ns = per_call_ns(1000, [] { (void)clock::now(); });
  const std::uint64_t short_overhead = overhead_at(0, t);
  const std::uint64_t long_overhead = overhead_at(long_probe, t);
  t.short_overhead = short_overhead;
  t.long_overhead = long_overhead;
  t.published.entry_ns = static_cast<double>(short_overhead) / t.published.loops_per_ns;
  measure_counter(t);
  t.published.tsc = t.tsc;
  t.published.counter_from_ns = t.counter_from_ns;
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
  if (ns < t.counter_from_ns) {
    spin_request((static_cast<std::uint64_t>(ns) * t.loops_per_ns_fixed) >> fraction_bits, t);
    return;
  }
  wait_request(ns, t);
}

} // namespace cuparity::faults
