// The matrix runner: one fresh process per cell, results appended per case, then the verdict.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace cuparity {

struct shard_spec {
  int index = 0; ///< K, 0-based
  int count = 1; ///< N
};

/// Parses "K/N" (0 <= K < N); throws std::invalid_argument with a message naming the text.
[[nodiscard]] shard_spec parse_shard(const std::string &text);

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
  std::optional<std::string> baseline;
  std::optional<std::string> write_baseline;
  bool latency = true;                         ///< run the latency phase when the matrix enables it
  std::optional<std::string> latency_baseline; ///< a previous summary.json to compare against
  double latency_min_time = 0;                 ///< seconds per probe per round (0 = the matrix's)
  std::vector<std::string> argv;               ///< for provenance
};

/// Runs the matrix; returns the exit code (0 as expected, 1 failures, 2 bad input, 3 environment).
[[nodiscard]] int run_matrix(const run_options &options);

/// The device CTest allocated to this test (CTEST_RESOURCE_GROUP_<i> = "gpus" and
/// CTEST_RESOURCE_GROUP_<i>_GPUS = "id:<id>,slots:<n>"), for CUDA_VISIBLE_DEVICES; throws
/// std::runtime_error naming the variable when they are missing or malformed.
[[nodiscard]] std::string gpu_from_ctest_environment();

/// Writes a CTestTestfile.cmake into `dir` with one test per cell of the matrix (RESOURCE_GROUPS
/// gpus:1, so `ctest -j --resource-spec-file` schedules cells over the devices) and a final test
/// that merges them; and a resource spec for `gpu_count` devices. Returns an exit code.
[[nodiscard]] int write_ctest_suite(const std::string &matrix_path, const std::string &dir,
                                    int gpu_count, const std::vector<std::string> &extra_args);

/// Recomputes the verdict from recorded results (one run directory, or several shards' merged):
/// writes summary.json and junit.xml into `out_dir`; returns the exit code.
[[nodiscard]] int summarize_results(const std::string &matrix_path,
                                    const std::vector<std::string> &result_dirs,
                                    const std::string &out_dir,
                                    const std::optional<std::string> &baseline,
                                    const std::vector<std::string> &argv,
                                    const std::optional<std::string> &latency_baseline = {});

} // namespace cuparity
