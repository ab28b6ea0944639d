// The step summary's latency section: the latency phase's verdicts as summary.json holds them.
#pragma once

#include "harness/report/markdown_page.hpp"

#include <nlohmann/json.hpp>

namespace cuparity {

/// "### Latency" with the counts of each verdict, then the paired verdicts (nvidia against
/// internal in one process), those across processes and those against a baseline, each table
/// slower, faster and ambiguous first (a baseline regression first of all), then same, then
/// not measured; and the noise block's count. Nothing when `latency` is no object.
void latency_markdown(markdown_page &page, const nlohmann::json &latency);

} // namespace cuparity
