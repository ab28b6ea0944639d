// Statistics for latency comparisons: medians, spread, bootstrap intervals, Mann-Whitney U.
#pragma once

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
  double ratio = 1, low = 1, high = 1; ///< median(b) / median(a) and its 95 % interval
};
/// Percentile bootstrap of the ratio of medians (resampling each side with replacement), with a
/// fixed seed so a comparison of the same samples always gives the same interval.
[[nodiscard]] ratio_interval bootstrap_ratio(const std::vector<double> &a,
                                             const std::vector<double> &b, int resamples = 2000);

/// Paired ratios b[i] / a[i] (two series measured in the same process, round by round): their
/// median and a percentile-bootstrap 95 % interval of that median. Pairing removes the
/// process-to-process spread both series share.
[[nodiscard]] ratio_interval paired_ratio(const std::vector<double> &a,
                                          const std::vector<double> &b, int resamples = 2000);

struct comparison_rule {
  double threshold = 0.05; ///< relative change that matters (5 %)
  double floor = 20;       ///< absolute difference (in the probe's unit) below which: same
  double alpha = 0.05;     ///< significance level
  bool lower_is_better = true;
};

struct latency_verdict {
  std::string verdict; ///< same | faster | slower | ambiguous (from b's point of view)
  double median_a = 0, median_b = 0;
  ratio_interval ratio;
  double p_value = 1;
};

/// b against a: slower/faster only when the change exceeds the threshold AND is significant
/// (p < alpha and the interval excludes 1); same when the interval lies within the threshold
/// (or the difference is below the floor); otherwise ambiguous: the data cannot tell.
[[nodiscard]] latency_verdict compare_samples(const std::vector<double> &a,
                                              const std::vector<double> &b,
                                              const comparison_rule &rule);

} // namespace cuparity
