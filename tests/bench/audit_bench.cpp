// The audit of a 1,000-entry process map (issue 48: under 1 s) against the simulated driver: a map
// synthesised here as JAX's looks (cudart's requests in both stream-0 modes, a plugin's and a
// library's dlsym binds, a few names the headers do not declare).
//
//   build/bin/cuparity_audit_bench                 # the figure (docs/capture.md quotes it)
//   ctest --test-dir build -R audit_bench_smoke    # one short run: it builds and runs
#include "harness/capture/api_expectation.hpp"
#include "harness/capture/map_audit.hpp"

#include <benchmark/benchmark.h>
#include <string>

namespace {

using namespace cuparity;

captured_entry bound(const std::string &function, const std::string &symbol,
                     const std::string &caller) {
  captured_entry e;
  e.function = function;
  e.raw_name = symbol;
  e.symbol = symbol;
  e.library = CUPARITY_SIMDRIVER;
  e.source = "dlsym";
  e.process = 100;
  e.caller = caller;
  return e;
}

/// 1,000 entries: per function, cudart's legacy request and (where it has one) its per-thread
/// one, then a plugin's bare dlsym binds, a library's per-thread ones and undeclared names.
captured_map jax_like_map() {
  captured_map m;
  m.schema = 2;
  m.kind = "process";
  m.status = "ok";
  m.driver_version = 13000;
  m.processes.push_back({100, 1, 0, {"python3"}, {}, {}});
  const auto functions = all_api_functions();
  for (std::size_t i = 0; m.entries.size() < 1000; ++i) {
    const api_function &f = functions[i % functions.size()];
    const std::string name(f.name);
    for (const bool pt : {false, true})
      if (const std::string s = expected_symbol(f, 13000, pt);
          !s.empty() && m.entries.size() < 700) {
        captured_entry e = bound(name, s, "/opt/lib/libcudart.so.13");
        e.source = "proc";
        e.raw_name = name;
        e.request = proc_request{"cuGetProcAddress_v2", 13000, pt ? 2u : 0u, 0, 0};
        m.entries.push_back(std::move(e));
      }
    if (m.entries.size() >= 700 && m.entries.size() < 950)
      m.entries.push_back(bound(name, std::string(f.newest().symbol), "/opt/lib/xla_plugin.so"));
    else if (m.entries.size() >= 950 && !f.newest().per_thread_symbol.empty())
      m.entries.push_back(
          bound(name, std::string(f.newest().per_thread_symbol), "/opt/lib/libother.so"));
    if (i % 20 == 0 && m.entries.size() >= 700)
      m.entries.push_back(bound("cuFuture" + std::to_string(i), "cuFuture" + std::to_string(i),
                                "/opt/lib/xla_plugin.so"));
  }
  return m;
}

void BM_audit_process_map(benchmark::State &state) {
  const auto lib = driver_library::open(CUPARITY_SIMDRIVER);
  const captured_map m = jax_like_map();
  for (auto _ : state)
    benchmark::DoNotOptimize(audit_captured_map(m, *lib));
  state.counters["entries"] = static_cast<double>(m.entries.size());
}
BENCHMARK(BM_audit_process_map)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
