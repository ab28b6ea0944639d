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
  bool force = false; ///< an --out holding another run: its files are moved aside, not refused
};

/// Recomputes the verdict from recorded results (one run directory, or several shards' merged):
/// writes summary.json and junit.xml into `out_dir`; returns the exit code. The plan judged is
/// the whole matrix (narrowed by `scope`), so a missing, doubled or overlapping shard makes the
/// verdict incomplete; results of another plan (other cells, environments, cases, driver or
/// binary) are refused (exit 2) naming what differs. Refused too (exit 2, nothing written): an
/// empty --out, a result directory that does not exist or holds no results.jsonl, an --out that
/// is one of several shards, and an --out holding another run's files unless `scope.force`.
[[nodiscard]] int summarize_results(const std::string &matrix_path,
                                    const std::vector<std::string> &result_dirs,
                                    const std::string &out_dir,
                                    const std::optional<std::string> &baseline,
                                    const std::vector<std::string> &argv,
                                    const std::optional<std::string> &latency_baseline = {},
                                    const merge_scope &scope = {});

} // namespace cuparity
