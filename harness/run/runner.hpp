// The matrix runner: one fresh process per cell, results appended per case, then the verdict.
#pragma once

#include "harness/run/ctest_suite.hpp"
#include "harness/run/merge.hpp"
#include "harness/run/plan.hpp"

#include <optional>
#include <string>
#include <vector>

namespace cuparity {

struct run_options {
  std::string matrix_path;
  std::string out_dir; ///< default: cuparity-results/<matrix name>
  int jobs = 1;        ///< functional phase: cells in parallel
  bool resume = false; ///< skip (cell, case) pairs already in results.jsonl
  bool force = false;  ///< start over in an out dir that has results
  std::optional<shard_spec> shard;
  std::vector<std::string> gpus; ///< CUDA_VISIBLE_DEVICES values to spread cells over
  bool all_gpus = false;
  std::string expect_driver;      ///< guard: driver version text/number or library file name
  std::vector<std::string> cases; ///< narrows the matrix's case selection
  std::vector<std::string> cells; ///< only these cells (ids); empty = all
  bool gpus_from_ctest = false;   ///< take the GPU from CTest's resource allocation
  /// --suite-root NAME=DIR (repeatable): a suite's root, over its `root` key.
  std::vector<std::string> suite_roots;
  std::optional<std::string> baseline;
  std::optional<std::string> write_baseline;
  bool latency = true;                         ///< run the latency phase when the matrix enables it
  std::optional<std::string> latency_baseline; ///< a previous summary.json to compare against
  double latency_min_time = 0;                 ///< seconds per probe per round (0 = the matrix's)
  std::vector<std::string> argv;               ///< for provenance
};

/// Runs the matrix; returns the exit code (0 as expected, 1 failures, 2 bad input, 3 environment).
[[nodiscard]] int run_matrix(const run_options &options);

} // namespace cuparity
