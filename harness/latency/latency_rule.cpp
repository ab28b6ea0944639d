// Which rule a probe is judged by, and how a verdict is written (docs/latency.md).
#include "harness/latency/latency_rule.hpp"

namespace cuparity {

comparison_rule rule_for(const latency_settings &l, const std::string &probe,
                         const std::string &unit) {
  comparison_rule rule;
  rule.threshold = l.thresholds.count(probe) ? l.thresholds.at(probe) : l.regression_threshold;
  rule.lower_is_better = unit != "GB/s";
  return rule;
}

nlohmann::json verdict_json(const latency_verdict &v, const comparison_rule &rule) {
  return nlohmann::json{
      {"median_a", v.median_a}, {"median_b", v.median_b},  {"ratio", v.ratio.ratio},
      {"ci_low", v.ratio.low},  {"ci_high", v.ratio.high}, {"p_value", v.p_value},
      {"mde", v.mde},           {"verdict", v.verdict},    {"threshold", rule.threshold}};
}

} // namespace cuparity
