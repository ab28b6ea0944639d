// A run's figures as Bencher Metric Format JSON
// (https://bencher.dev/docs/reference/bencher-metric-format).
#pragma once

#include "harness/report/export_figures.hpp"

#include <nlohmann/json.hpp>
#include <string>

namespace cuparity {

/// The Bencher measure a unit is tracked under: "latency" (Bencher's built-in measure, in
/// nanoseconds) for ns, "wall-time-s", "bandwidth-gb-s", "ratio-nvidia-internal", else
/// "value-<unit>".
[[nodiscard]] std::string bencher_measure(const std::string &unit);

/// {benchmark name: {measure: {value, lower_value, upper_value}}}: one benchmark per figure,
/// bounds where the figure has them. With `context_in_names`, each name ends in the run's GPU,
/// driver release and revision (figure_name).
[[nodiscard]] nlohmann::json bencher_json(const export_run &run, bool context_in_names);

} // namespace cuparity
