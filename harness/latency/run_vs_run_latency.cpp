// One run's latency against an earlier run's (docs/latency.md, "Against a previous run").
#include "harness/latency/run_vs_run_latency.hpp"

#include "harness/latency/latency_rule.hpp"

namespace cuparity {

std::vector<series_change> compare_across_runs(const std::string &probe,
                                               const series_samples &before,
                                               const series_samples &after,
                                               const comparison_rule &rule) {
  std::vector<series_change> out;
  for (const auto &[series, values] : after) {
    auto old = before.find(series);
    if (old == before.end())
      continue;
    out.push_back({probe, series, rule, compare_samples(old->second, values, rule),
                   old->second.size(), values.size()});
  }
  return out;
}

nlohmann::json baseline_row(const series_change &c) {
  auto row = verdict_json(c.verdict, c.rule);
  row["probe"] = c.probe, row["a"] = "baseline:" + c.series, row["b"] = c.series;
  row["regression"] = c.regression();
  return row;
}

} // namespace cuparity
