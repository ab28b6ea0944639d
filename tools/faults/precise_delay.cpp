// Busy-waits of a few ns to microseconds: a calibrated loop below a few counter reads, a
// deadline on a counter that a busy core does not slow down above, and one on steady_clock from
// 10 us.
#include "tools/faults/precise_delay.hpp"

#include <algorithm>
#include <array>
#include <atomic>
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
  std::uint64_t short_overhead = 0; ///< loops taken off a request shorter than long_from
  std::uint64_t long_overhead = 0;  ///< loops taken off a longer one
  bool tsc = false;                 ///< the deadline counter is the TSC, else steady_clock
  double ticks_per_ns = 1;          ///< of the deadline counter
  std::uint64_t early_ticks = 0;    ///< a deadline is aimed this much early (wait_request)
  std::int64_t counter_from_ns = 0; ///< requests from here wait on the counter
};

// The loop's rate as it is now. Calibration fixes a rate once, but on the H200 VM the core's speed
// moved by up to half within a process and between processes: an 18 ns fault on a loop calibrated
// once added 3 to 36 ns (reports/runs/2026-12-03-h200-cbe5c87-warmup). So the loop path times
// itself against the counter now and then: 1 us of loop between two counter reads, about every
// 10 ms (the count of calls between samples follows the call rate), and the median of the last
// five samples is the rate (a preempted sample only ever reads slow; a change of speed passes
// within three samples). A sample's loops, spread over the calls until the next one, are taken off
// each call, so the time a delay adds on average stays the asked one.
constexpr double sample_window_ns = 1000;
constexpr double sample_period_ns = 10e6;
constexpr std::int64_t first_sample_after = 64;
constexpr std::int64_t most_calls_per_sample = std::int64_t{1} << 24;

struct loop_rate {
  std::atomic<std::uint64_t> loops_per_ns_fixed{0};
  std::atomic<std::uint64_t> debt_fixed{0}; ///< loops (16.16) taken off every request
  std::atomic<std::int64_t> calls_left{first_sample_after};
  std::atomic_flag sampling = ATOMIC_FLAG_INIT; ///< held by the one thread that samples
  // Only the thread holding `sampling` touches these.
  std::array<double, 5> recent{};
  std::size_t next = 0;
  std::int64_t calls_per_sample = first_sample_after;
  std::uint64_t last_sample = 0; ///< counter at the end of the last sample
  std::int64_t calls_before = 0; ///< calls counted down in the periods before this one
  loop_history history;          ///< calls excepted (computed when read)
};

loop_rate rate_now;

std::uint64_t to_fixed(double loops_per_ns) {
  return static_cast<std::uint64_t>(loops_per_ns * (1 << fraction_bits));
}

double rate_in_use() {
  return static_cast<double>(rate_now.loops_per_ns_fixed.load(std::memory_order_relaxed)) /
         (1 << fraction_bits);
}

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

// `loops` loops less the loop path's own cost at about that length.
inline void spin_request(std::uint64_t loops, const tuned &t) {
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

void seed_rate(double loops_per_ns) {
  rate_now.recent.fill(loops_per_ns);
  rate_now.loops_per_ns_fixed.store(to_fixed(loops_per_ns), std::memory_order_relaxed);
  rate_now.calls_left.store(first_sample_after, std::memory_order_relaxed);
  rate_now.calls_per_sample = first_sample_after;
  rate_now.calls_before = 0;
  rate_now.history = loop_history{};
  rate_now.history.calls_per_sample_min = rate_now.history.calls_per_sample_max =
      first_sample_after;
}

void record_sample(loop_history &h, double loops_per_ns) {
  h.rate_min = h.samples == 0 ? loops_per_ns : std::min(h.rate_min, loops_per_ns);
  h.rate_max = std::max(h.rate_max, loops_per_ns);
  ++h.samples;
}

// When the next sample comes: after as many calls as should take sample_period_ns at the rate
// since the last one, moving by at most a factor of two (a pause between a probe's series must
// not make the next ten thousand calls sample). Its loops are then spread over those calls.
void schedule_sample(loop_rate &r, std::uint64_t started, std::uint64_t window, const tuned &t) {
  r.calls_before += r.calls_per_sample - r.calls_left.load(std::memory_order_relaxed);
  if (r.last_sample != 0 && started > r.last_sample) {
    const double since_ns = static_cast<double>(started - r.last_sample) / t.ticks_per_ns;
    const double scale = std::clamp(sample_period_ns / std::max(since_ns, 1.0), 0.5, 2.0);
    r.calls_per_sample =
        std::clamp(static_cast<std::int64_t>(static_cast<double>(r.calls_per_sample) * scale),
                   first_sample_after, most_calls_per_sample);
  }
  r.history.calls_per_sample_min = std::min(r.history.calls_per_sample_min, r.calls_per_sample);
  r.history.calls_per_sample_max = std::max(r.history.calls_per_sample_max, r.calls_per_sample);
  const std::uint64_t debt =
      (window << fraction_bits) / static_cast<std::uint64_t>(r.calls_per_sample);
  r.debt_fixed.store(debt, std::memory_order_relaxed);
  r.history.debt_loops_max =
      std::max(r.history.debt_loops_max, static_cast<double>(debt) / (1 << fraction_bits));
  r.calls_left.store(r.calls_per_sample, std::memory_order_relaxed);
}

// One sample of the loop's rate (see loop_rate): a window of loops between two counter reads,
// less the one read's cost that falls inside it.
[[gnu::noinline]] void sample_rate(const tuned &t) {
  loop_rate &r = rate_now;
  if (r.sampling.test_and_set(std::memory_order_acquire))
    return; // another thread is sampling
  const double now = rate_in_use();
  const auto window = static_cast<std::uint64_t>(sample_window_ns * now);
  const std::uint64_t c0 = counter(t);
  spin_loops(window);
  const std::uint64_t c1 = counter(t);
  const double ns = static_cast<double>(c1 - c0) / t.ticks_per_ns - t.published.counter_read_ns;
  if (ns > 0) {
    r.recent[r.next] = static_cast<double>(window) / ns;
    record_sample(r.history, r.recent[r.next]);
    r.next = (r.next + 1) % r.recent.size();
    auto sorted = r.recent;
    std::nth_element(sorted.begin(), sorted.begin() + 2, sorted.end());
    r.loops_per_ns_fixed.store(to_fixed(sorted[2]), std::memory_order_relaxed);
  }
  schedule_sample(r, c0, window, t);
  r.last_sample = c1;
  r.sampling.clear(std::memory_order_release);
}

// The loop path for `loops_fixed` loops (16.16), exactly as precise_delay runs it, so that
// calibration times the same code: the count down to the next sample (a relaxed load and store,
// not an atomic decrement, which would cost more than a short delay: two threads may lose a count
// between them, which only moves a sample), the samples' share, the call's own loops.
[[gnu::noinline]] void loop_request(std::uint64_t loops_fixed, const tuned &t) {
  loop_rate &r = rate_now;
  const std::int64_t left = r.calls_left.load(std::memory_order_relaxed) - 1;
  r.calls_left.store(left, std::memory_order_relaxed);
  if (left <= 0) [[unlikely]]
    sample_rate(t);
  const std::uint64_t debt = r.debt_fixed.load(std::memory_order_relaxed);
  spin_request((loops_fixed > debt ? loops_fixed - debt : 0) >> fraction_bits, t);
}

// The overhead of a request of n loops, in loops, measured while no correction applies yet. It
// is the time of `calls` requests beyond their loops at the rate, and the rate moves: on the H200
// VM by up to half within milliseconds (1.6 to 3.4 loops/ns between processes of one machine,
// 1.2 to 3.2 within one: reports/runs/2026-12-04-h200-e12773e). Taken against a rate measured
// before, the overhead kept the rate's change for the whole process: 0 to 12 ns where it is about
// 2, and at half speed the 64-loop probe's excess is as long as an 18 ns request, which then waits
// nothing. So each window of requests is timed between two windows of the bare loop, whose mean
// gives the rate of that moment, and the overhead is the median over `pairs` such triples.
std::uint64_t overhead_at(std::uint64_t n, const tuned &t) {
  constexpr int pairs = 15;
  constexpr int calls = 2000;
  constexpr std::uint64_t reference_loops = 64 * calls;
  std::array<double, pairs> found{};
  for (double &overhead : found) {
    const double before = best_of(1, [] { spin_loops(reference_loops); });
    const double requests = best_of(1, [&] {
      for (int i = 0; i < calls; ++i)
        loop_request(n << fraction_bits, t);
    });
    const double after = best_of(1, [] { spin_loops(reference_loops); });
    const double loops_per_ns = 2 * static_cast<double>(reference_loops) / (before + after);
    overhead = requests / calls * loops_per_ns - static_cast<double>(n);
  }
  std::nth_element(found.begin(), found.begin() + pairs / 2, found.end());
  return static_cast<std::uint64_t>(std::max(0.0, found[pairs / 2]));
}

tuned measure() {
  tuned t;
  busy_for_ms(30);
  t.published.loops_per_ns = measure_loops_per_ns();
  t.published.clock_read_ns = per_call_ns(1000, [] { (void)clock::now(); });
  rate_now.calls_left.store(most_calls_per_sample, std::memory_order_relaxed); // no sample yet
  t.short_overhead = overhead_at(0, t);
  t.long_overhead = overhead_at(long_probe, t);
  t.published.short_overhead_loops = static_cast<double>(t.short_overhead);
  t.published.long_overhead_loops = static_cast<double>(t.long_overhead);
  t.published.entry_ns = static_cast<double>(t.short_overhead) / t.published.loops_per_ns;
  t.published.long_entry_ns = static_cast<double>(t.long_overhead) / t.published.loops_per_ns;
  measure_counter(t);
  t.published.tsc = t.tsc;
  t.published.counter_from_ns = t.counter_from_ns;
  seed_rate(t.published.loops_per_ns);
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

// From here on a delay waits on steady_clock itself: its read (tens of ns) is below 0.5 % of the
// wait, and the delay can never come out short. The counter's rate is measured over 2 ms against
// that clock, and a preemption between the two reads skews it: under `stress-ng --cpu 2` a 20 ms
// fault waited less than 20 ms, and a 100 us launch delay read under 100 us (issue 47, N5).
namespace {
constexpr std::int64_t clock_from_ns = 10000;

void wait_on_clock(std::int64_t ns) {
  const auto until = clock::now() + std::chrono::nanoseconds(ns);
  while (clock::now() < until) {
  }
}
} // namespace

void precise_delay(std::int64_t ns) {
  if (ns <= 0)
    return;
  if (ns >= clock_from_ns) {
    wait_on_clock(ns);
    return;
  }
  const tuned &t = calibrated();
  if (ns < t.counter_from_ns) {
    loop_request(static_cast<std::uint64_t>(ns) *
                     rate_now.loops_per_ns_fixed.load(std::memory_order_relaxed),
                 t);
    return;
  }
  wait_request(ns, t);
}

double loop_rate_now() {
  (void)calibrated();
  return rate_in_use();
}

loop_history loop_history_now() {
  while (rate_now.sampling.test_and_set(std::memory_order_acquire)) {
  }
  loop_history h = rate_now.history;
  h.calls = rate_now.calls_before + rate_now.calls_per_sample -
            rate_now.calls_left.load(std::memory_order_relaxed);
  h.debt_loops_now = static_cast<double>(rate_now.debt_fixed.load(std::memory_order_relaxed)) /
                     (1 << fraction_bits);
  rate_now.sampling.clear(std::memory_order_release);
  return h;
}

void skew_loop_rate(double factor) {
  (void)calibrated();
  while (rate_now.sampling.test_and_set(std::memory_order_acquire)) {
  }
  for (double &sample : rate_now.recent)
    sample *= factor;
  rate_now.loops_per_ns_fixed.store(to_fixed(rate_in_use() * factor), std::memory_order_relaxed);
  rate_now.sampling.clear(std::memory_order_release);
}

} // namespace cuparity::faults
