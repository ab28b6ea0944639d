// The summary's `latency` block, computed from the recorded samples alone.
#pragma once

#include "harness/matrix/matrix.hpp"

#include <nlohmann/json.hpp>
#include <vector>

namespace cuparity {

/// The summary's `latency` block from recorded samples (null when there are none): per-series
/// statistics, backend-vs-backend comparisons inside each semantic group, facade overhead, and
/// run vs `baseline` (a previous summary.json) when given. `failed` is set when a comparison is a
/// regression and the matrix asks for failing on it.
[[nodiscard]] nlohmann::json latency_summary(const matrix &m,
                                             const std::vector<nlohmann::json> &records,
                                             const nlohmann::json *baseline, bool &failed);

} // namespace cuparity
