// The latency phase: probe processes per cell, cells interleaved over rounds; and its summary.
#pragma once

#include "harness/latency/latency_summary.hpp" // latency_summary, for the phase's callers
#include "harness/matrix/matrix.hpp"
#include "harness/protocol/results.hpp"

#include <atomic>
#include <functional>
#include <map>
#include <string>

namespace cuparity {

struct latency_run_options {
  std::string gpu; ///< CUDA_VISIBLE_DEVICES for the probe processes ("" = as is)
  std::string log_dir;
  double min_time_override = 0; ///< seconds per probe, 0 = the matrix's
  /// The environment of a cell's Python probe process before [latency] python_environment; null:
  /// the cell's variables, as the C++ probe's. The runner's puts the cell's packages folder first
  /// on PYTHONPATH, and throws when it cannot be installed (that cell's latency error).
  std::function<std::map<std::string, std::string>(const cell &)> python_environment;
  /// The cells to time (`cuparity run --cell`, as the functional phase runs only those); empty:
  /// every cell of the matrix.
  std::vector<std::string> cells;
};

/// Runs the probes with the GPU to itself: each round runs every cell's probes in a probe process
/// (`cuparity probe`: a fresh one per round, or with `processes = "persistent"` one per cell for
/// the whole phase; the Python probe process beside it when the matrix asks, the same way), in
/// matrix order on even rounds and reversed on odd ones (A B, B A: drift cancels), and within a
/// process each probe's series alternate block by block. Rounds continue past `latency.rounds`
/// while a comparison is still ambiguous, until `max_rounds` or `budget_s`. Appends
/// `latency_sample`, `latency_pairs`, `latency_environment`, `latency_cell` and `latency_error`
/// records.
void run_latency_phase(const matrix &m, const latency_run_options &options, results_writer &results,
                       const std::atomic<bool> &stop);

} // namespace cuparity
