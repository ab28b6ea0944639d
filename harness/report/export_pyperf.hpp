// A run's figures as the JSON pyperf 2.x writes and reads (a BenchmarkSuite, format version "1.0").
#pragma once

#include "harness/report/export_figures.hpp"

#include <nlohmann/json.hpp>

namespace cuparity {

/// {"version": "1.0", "metadata": {...}, "benchmarks": [...]}: one benchmark of one run per
/// latency series (its per-round values in seconds; a GB/s series as seconds per GB, 1 / GB/s, so
/// that lower is better as pyperf assumes) and one for the functional phase. pyperf knows no
/// dimensionless unit, so each paired ratio goes into the metadata of its cell's facade series of
/// that probe (cuparity_paired_ratio, _ci_low, _ci_high, _verdict). The run's matrix, GPU, driver
/// and revision are the suite's metadata. pyperf refuses a value that is not above zero: such
/// values are left out and counted (cuparity_values_left_out).
[[nodiscard]] nlohmann::json pyperf_json(const export_run &run, bool context_in_names);

} // namespace cuparity
