// The benchmark phase: each [[benchmark]] in every cell, in rounds interleaved across cells.
#pragma once

#include "harness/matrix/matrix.hpp"
#include "harness/protocol/results.hpp"
#include "harness/run/benchmark_json.hpp"

#include <atomic>
#include <string>
#include <vector>

namespace cuparity {

struct benchmark_run_options {
  std::string gpu;      ///< CUDA_VISIBLE_DEVICES for the benchmarks' processes ("" = as is)
  std::string out_root; ///< the run's folder: benchmarks/<cell>/<benchmark>/r<round> under it
  std::vector<std::string> cells; ///< `cuparity run --cell`: only these; empty: every cell
};

/// Runs m.benchmarks (docs/configuration.md#benchmarks): per cell a `latency_cell` record of the
/// configuration `cuparity env` reads from its variables; then for each round, each benchmark
/// whose rounds are not done, the cells in matrix order on even rounds and reversed on odd ones,
/// one process each (two with `control`, their order flipped on odd rounds), under `cuparity
/// capture` with the cell's environment and packages. Every benchmark its JSON lists is a
/// `latency_sample` (probe `bench:<name>:<test>`, the median per-call ns). A process that fails,
/// writes no JSON, or JSON that cannot be read, is a `latency_error` naming the benchmark, and
/// that benchmark runs no more in that cell. Returns early when `stop` is set.
void run_benchmark_phase(const matrix &m, const benchmark_run_options &options,
                         results_writer &results, const std::atomic<bool> &stop);

/// A benchmark's probe name: "bench:<benchmark>:<test>".
[[nodiscard]] std::string benchmark_probe(const std::string &benchmark, const std::string &test);

/// Why a benchmark process's figures cannot stand as its cell's ("" when they can): a benchmark
/// that says it bound another binding than the cell's variables select (Numba fell back to ctypes
/// in an NVIDIA cell, say) would be compared as the binding it did not use. A benchmark that says
/// nothing, or a cell whose binding is unread, is taken at the cell's word.
[[nodiscard]] std::string benchmark_binding_problem(const std::vector<benchmark_timing> &timings,
                                                    const std::string &cell_binding);

} // namespace cuparity
