// Statistics and the verdict rule for latency: medians, spread, bootstrap intervals, Mann-Whitney
// U.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace cuparity {

[[nodiscard]] double median(std::vector<double> v);
/// Coefficient of variation (sample standard deviation / mean); 0 for fewer than 2 values.
[[nodiscard]] double coefficient_of_variation(const std::vector<double> &v);
/// Robust coefficient of variation: 1.4826 x median absolute deviation / median (equal to the CV
/// for normal data); 0 for fewer than 2 values. The comparisons rest on medians, so this is the
/// spread that bounds their precision: one slow round in fifteen (an interrupt storm on the
/// host) lifts the CV of ctx.get_current from 2 % to 15 % and leaves this at 2 %.
[[nodiscard]] double robust_cv(const std::vector<double> &v);

/// Two-sided p-value of the Mann-Whitney U test: exact (from the distribution of U) when there
/// are no ties and both samples have at most 25 values, otherwise the normal approximation with
/// tie and continuity corrections.
[[nodiscard]] double mann_whitney_p(const std::vector<double> &a, const std::vector<double> &b);

struct ratio_interval {
  double ratio = 1, low = 1, high = 1; ///< median(b) / median(a) and its interval
};
/// Percentile bootstrap of the ratio of medians (resampling each side with replacement) at
/// `confidence`, with a fixed seed so a comparison of the same samples always gives the same
/// interval.
[[nodiscard]] ratio_interval bootstrap_ratio(const std::vector<double> &a,
                                             const std::vector<double> &b, double confidence = 0.95,
                                             int resamples = 2000);

/// A median with an interval from a moving-block bootstrap: blocks of consecutive values are
/// resampled, so a sequence whose neighbours are alike (a host that is slow for seconds at a time)
/// does not get an interval narrower than it deserves. `p_value` is the two-sided bootstrap
/// p-value against `null_value` (at best 1 / (resamples + 1)).
struct median_interval {
  double estimate = 0, low = 0, high = 0, p_value = 1;
  std::size_t n = 0, block_length = 0;
};
[[nodiscard]] median_interval block_bootstrap_median(const std::vector<double> &sequence,
                                                     double null_value, double confidence,
                                                     int resamples = 2000);

struct comparison_rule {
  double threshold = 0.05; ///< relative change that matters (5 %), the probe's own
  double alpha = 0.01;     ///< significance level; intervals are at 1 - alpha
  bool lower_is_better = true;
  /// How far beyond the threshold the estimate must be, as a fraction of it: 1 across processes
  /// and runs (a change is beyond the threshold), 0.5 for paired verdicts, whose threshold is
  /// the smallest change they must catch.
  double beyond = 1.0;
  /// How far from 1 the interval must lie, relative. Negative: half the threshold, the noise a
  /// comparison may show as far as anything measured says. A paired verdict sets the run's
  /// measured method floor instead (its same-address controls), so a verdict inside it can never
  /// be slower or faster.
  double floor = -1;
};

struct latency_verdict {
  std::string verdict; ///< same | faster | slower | ambiguous (from b's point of view)
  double median_a = 0, median_b = 0;
  ratio_interval ratio;
  double p_value = 1;
  /// Minimum detectable effect: the interval's relative half-width, the smallest change this
  /// comparison could tell from none.
  double mde = 0;
};

/// The rule every latency verdict uses (docs/latency.md#verdicts), on a ratio b/a with its
/// interval and p-value: slower/faster when significant (p < alpha), beyond `beyond` x threshold,
/// and the interval clears the floor (half the threshold unless measured); same when the interval
/// lies within +-threshold; otherwise ambiguous.
[[nodiscard]] std::string decide(const ratio_interval &ratio, double p_value,
                                 const comparison_rule &rule);

/// The interval's relative half-width around its ratio.
[[nodiscard]] double minimum_detectable_effect(const ratio_interval &ratio);

/// b against a across processes (rounds as samples): the ratio of medians with a bootstrap
/// interval at 1 - alpha, the Mann-Whitney p-value, decided by `decide`.
[[nodiscard]] latency_verdict compare_samples(const std::vector<double> &a,
                                              const std::vector<double> &b,
                                              const comparison_rule &rule);

} // namespace cuparity
