// Merging recorded results (one run, or several shards') into one verdict.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace cuparity {

/// What a merge judges besides the result directories.
struct merge_scope {
  std::vector<std::string> cases; ///< case globs: narrows the plan as `run --case` does
  std::vector<std::string> cells; ///< cell ids: narrows the plan as `run --cell` does
};

/// Recomputes the verdict from recorded results (one run directory, or several shards' merged):
/// writes summary.json and junit.xml into `out_dir`; returns the exit code. The plan judged is
/// the whole matrix (narrowed by `scope`), so a missing, doubled or overlapping shard makes the
/// verdict incomplete; results of another plan (other cells, environments, cases, driver or
/// binary) are refused (exit 2) naming what differs.
[[nodiscard]] int summarize_results(const std::string &matrix_path,
                                    const std::vector<std::string> &result_dirs,
                                    const std::string &out_dir,
                                    const std::optional<std::string> &baseline,
                                    const std::vector<std::string> &argv,
                                    const std::optional<std::string> &latency_baseline = {},
                                    const merge_scope &scope = {});

} // namespace cuparity
