// A run's plan as a record: what it set out to run, with a fingerprint, and what differs.
#pragma once

#include "harness/run/plan.hpp"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cuparity {

/// The "plan" member of a run record (docs/formats.md): the matrix's cells with their
/// environment, its selected cases, the --case and --cell filters, the shard, the driver the
/// driver check saw (`identity`, `cuparity env --json`), the binary (build id), the number of
/// planned pairs and a fingerprint of all of it.
[[nodiscard]] nlohmann::json plan_description(const matrix &m, const plan_filter &filter,
                                              const nlohmann::json &identity);

/// The parts of a plan that must agree for --resume: all of them.
[[nodiscard]] const std::vector<std::string> &resume_parts();
/// For merging shards: everything but the shard and the filters (each shard and each CTest cell
/// has its own); coverage then tells whether the shards fit together.
[[nodiscard]] const std::vector<std::string> &merge_parts();

/// What differs between two plans in `parts`, one clause per part, e.g. "cell 'nv=0' has
/// NUMBA_CUDA_DRIVER=/a, the recorded plan /b"; "" when they agree.
[[nodiscard]] std::string plan_difference(const nlohmann::json &recorded, const nlohmann::json &now,
                                          const std::vector<std::string> &parts);

} // namespace cuparity
