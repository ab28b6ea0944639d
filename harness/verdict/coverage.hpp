// Coverage: whether every planned (cell, case) pair has exactly one result.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace cuparity {

using planned_pair = std::pair<std::string, std::string>; ///< (cell id, case id)

/// What a run recorded against what it planned. A run that is not complete is INCOMPLETE (exit 1)
/// whatever else it shows: an empty plan, a pair without a result, a pair with two (a shard
/// merged twice, overlapping shards, two writers) or a result nobody planned (a foreign run).
struct coverage {
  std::size_t planned = 0;
  std::size_t recorded = 0; ///< planned pairs with exactly one result
  std::vector<planned_pair> missing;
  std::vector<planned_pair> duplicated;
  std::vector<planned_pair> unplanned;

  [[nodiscard]] bool complete() const {
    return planned > 0 && missing.empty() && duplicated.empty() && unplanned.empty();
  }
};

/// Counts the "case" records of `records` per pair against `planned` (each pair once).
[[nodiscard]] coverage check_coverage(const std::vector<planned_pair> &planned,
                                      const std::vector<nlohmann::json> &records);

/// One line saying what is wrong, e.g. "12 of 44 planned results missing (first:
/// cell X, case Y)"; empty when complete.
[[nodiscard]] std::string coverage_message(const coverage &c);

/// summary.json's "coverage" section (docs/formats.md); at most `listed` pairs per list.
[[nodiscard]] nlohmann::json coverage_json(const coverage &c, std::size_t listed = 200);

/// Reads a summary's "coverage" section back; throws json_input_error naming the member.
[[nodiscard]] coverage coverage_from_json(const nlohmann::json &j, const std::string &path);

} // namespace cuparity
