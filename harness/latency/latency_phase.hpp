// The latency phase: probes per cell in fresh processes, cells interleaved over rounds.
#pragma once

#include "harness/matrix/matrix.hpp"
#include "harness/protocol/results.hpp"

#include <atomic>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace cuparity {

struct latency_run_options {
  std::string gpu; ///< CUDA_VISIBLE_DEVICES for the probe processes ("" = as is)
  std::string log_dir;
  double min_time_override = 0; ///< seconds per probe, 0 = the matrix's
};

/// Runs the probes with the GPU to itself: each round starts one `cuparity probe` process per
/// cell, in matrix order on even rounds and reversed on odd ones (A B, B A: drift cancels), and
/// within a process facade and direct series alternate which goes first. Rounds continue past
/// `latency.rounds` until every series' CV is at most `target_cv` or `max_rounds` is reached.
/// Appends `latency_sample`, `latency_environment` and `latency_cell` records.
void run_latency_phase(const matrix &m, const latency_run_options &options, results_writer &results,
                       const std::atomic<bool> &stop);

/// The summary's `latency` block from recorded samples (null when there are none): per-series
/// statistics, backend-vs-backend comparisons inside each semantic group, facade overhead, and
/// run vs `baseline` (a previous summary.json) when given. `failed` is set when a comparison is a
/// regression and the matrix asks for failing on it.
[[nodiscard]] nlohmann::json latency_summary(const matrix &m,
                                             const std::vector<nlohmann::json> &records,
                                             const nlohmann::json *baseline, bool &failed);

} // namespace cuparity
