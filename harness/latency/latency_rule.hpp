// A probe's comparison rule under a matrix's latency settings, and a verdict as summary JSON.
#pragma once

#include "harness/latency/latency_stats.hpp"
#include "harness/matrix/matrix.hpp"

#include <nlohmann/json.hpp>
#include <string>

namespace cuparity {

/// The rule every latency comparison of `probe` uses: the matrix's threshold for it (or the
/// default `regression_threshold`), relative to the probe (no absolute floor: a 10 ns call that
/// doubles has doubled), and which direction is worse. Backend against backend, run against run:
/// the same rule (docs/latency.md).
[[nodiscard]] comparison_rule rule_for(const latency_settings &l, const std::string &probe,
                                       const std::string &unit);

/// The fields every comparison row shares in summary.json and compare JSON: the medians, the
/// ratio and its interval, the p-value, the minimum detectable effect, the verdict and the
/// threshold it was judged with.
[[nodiscard]] nlohmann::json verdict_json(const latency_verdict &v, const comparison_rule &rule);

} // namespace cuparity
