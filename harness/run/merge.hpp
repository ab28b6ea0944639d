// Merging recorded results (one run, or several shards') into one verdict.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace cuparity {

/// Recomputes the verdict from recorded results (one run directory, or several shards' merged):
/// writes summary.json and junit.xml into `out_dir`; returns the exit code.
[[nodiscard]] int summarize_results(const std::string &matrix_path,
                                    const std::vector<std::string> &result_dirs,
                                    const std::string &out_dir,
                                    const std::optional<std::string> &baseline,
                                    const std::vector<std::string> &argv,
                                    const std::optional<std::string> &latency_baseline = {});

} // namespace cuparity
