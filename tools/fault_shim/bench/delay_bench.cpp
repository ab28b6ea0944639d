// What a delay_ns fault really adds, for 0 to 400 ns: the precise delay against the plain
// steady_clock busy-wait it replaced, the shared fault path, and whole calls through the shim.
//
//   build/bin/cuparity_fault_delay_bench                      # in-process figures
//   CUPARITY_BENCH_SHIM=build/bin/libcuparity_fault_shim.so
//   CUPARITY_SHIM_TARGET=build/bin/libcuparity_simdriver.so
//   CUPARITY_SHIM_FAULTS='cuCtxGetCurrent:delay_ns=70@dlsym'
//     build/bin/cuparity_fault_delay_bench --benchmark_filter=shim   # one fault, through the shim
//   (the three variables set in the environment of that last command; no line ends in a
//   backslash, which in a // comment would continue it: -Wcomment)
//
// The added cost of a delay d is time(d) - time(0) of the same benchmark.
#include "tools/faults/fault_set.hpp"
#include "tools/faults/precise_delay.hpp"

#include <benchmark/benchmark.h>
#include <chrono>
#include <cstdio>
#include <dlfcn.h>
#include <string>

namespace {

using namespace cuparity::faults;

void delay_args(benchmark::internal::Benchmark *b) {
  for (int ns : {0, 2, 5, 20, 70, 400, 2000})
    b->Arg(ns);
}

// The simulated driver's delay before tools/faults: a deadline read from steady_clock.
void steady_clock_wait(std::int64_t ns) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(ns);
  while (std::chrono::steady_clock::now() < until) {
  }
}

void BM_steady_clock_wait(benchmark::State &state) {
  for (auto _ : state)
    steady_clock_wait(state.range(0));
}
BENCHMARK(BM_steady_clock_wait)->Apply(delay_args);

void BM_precise_delay(benchmark::State &state) {
  calibrate_delay();
  for (auto _ : state)
    precise_delay(state.range(0));
}
BENCHMARK(BM_precise_delay)->Apply(delay_args);

// fault_set::apply with one `delay_ns=d` fault on the symbol: what the sim's and the shim's slow
// path add before the real call (the lookup, the loop and the delay).
void BM_fault_apply(benchmark::State &state) {
  fault_spec spec{symbol_id::cuCtxGetCurrent, fault_kind::delay_ns, state.range(0),
                  call_path::dlsym};
  const fault_set faults({spec});
  for (auto _ : state)
    benchmark::DoNotOptimize(faults.apply(symbol_id::cuCtxGetCurrent, call_path::dlsym));
}
BENCHMARK(BM_fault_apply)->Apply(delay_args);

using get_current_fn = int (*)(void **);

get_current_fn open_get_current(const char *library) {
  void *handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  return handle ? reinterpret_cast<get_current_fn>(dlsym(handle, "cuCtxGetCurrent")) : nullptr;
}

// cuCtxGetCurrent through whatever NUMBA_CUDA_DRIVER-style library is named; compare a run with
// CUPARITY_SHIM_FAULTS set to one without it.
void call_through(benchmark::State &state, const char *variable) {
  const char *library = std::getenv(variable);
  const get_current_fn get_current = library ? open_get_current(library) : nullptr;
  if (get_current == nullptr) {
    state.SkipWithError((std::string(variable) + " names no driver library").c_str());
    return;
  }
  void *ctx = nullptr;
  for (auto _ : state)
    benchmark::DoNotOptimize(get_current(&ctx));
}

void BM_shim_cuCtxGetCurrent(benchmark::State &state) {
  call_through(state, "CUPARITY_BENCH_SHIM");
}
BENCHMARK(BM_shim_cuCtxGetCurrent);

void BM_target_cuCtxGetCurrent(benchmark::State &state) {
  call_through(state, "CUPARITY_SHIM_TARGET");
}
BENCHMARK(BM_target_cuCtxGetCurrent);

} // namespace

int main(int argc, char **argv) {
  benchmark::Initialize(&argc, argv);
  const delay_calibration &c = calibration();
  std::printf("calibration: %.3f loops/ns, loop overhead %.0f loops (%.1f ns; from 24 loops %.0f, "
              "%.1f ns), steady_clock::now() %.1f ns, %s read %.1f ns, counter from %lld ns\n",
              c.loops_per_ns, c.short_overhead_loops, c.entry_ns, c.long_overhead_loops,
              c.long_entry_ns, c.clock_read_ns, c.tsc ? "TSC" : "steady_clock", c.counter_read_ns,
              static_cast<long long>(c.counter_from_ns));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
