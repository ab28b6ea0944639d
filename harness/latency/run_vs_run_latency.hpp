// Latency of one run against an earlier run, series by series: the one rule that both
// `cuparity run --latency-baseline` and `cuparity compare` apply.
#pragma once

#include "harness/latency/latency_samples.hpp"
#include "harness/latency/latency_stats.hpp"

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cuparity {

/// One series of one probe measured by both runs: the earlier run's values are `a`.
struct series_change {
  std::string probe;
  std::string series;
  comparison_rule rule;
  latency_verdict verdict;      ///< from the later run's point of view
  std::size_t n_a = 0, n_b = 0; ///< rounds of each run
  /// A later run that is slower than the earlier one has regressed.
  [[nodiscard]] bool regression() const { return verdict.verdict == "slower"; }
};

/// Every series of `probe` present in both `before` and `after`, in series order, each judged by
/// compare_samples(before, after, rule).
[[nodiscard]] std::vector<series_change> compare_across_runs(const std::string &probe,
                                                             const series_samples &before,
                                                             const series_samples &after,
                                                             const comparison_rule &rule);

/// A change as a row of summary.json's latency.baseline: verdict_json's fields plus `probe`,
/// `a` ("baseline:<series>"), `b` (the series) and `regression`.
[[nodiscard]] nlohmann::json baseline_row(const series_change &c);

} // namespace cuparity
