// The records as the outputs read them: per cell, its latest cell record and case records.
#pragma once

#include "harness/verdict/compare.hpp"

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cuparity {

struct cell_view {
  /// The latest "cell" record; an empty object for a cell whose process never reported its start
  /// (its cases can still have records: the runner's own, such as a crash before the first case).
  nlohmann::json record = nlohmann::json::object();
  bool started = false;                        ///< a "cell" record exists
  std::map<std::string, nlohmann::json> cases; ///< case id -> latest "case" record
};

/// Cell id -> its view; a later record replaces an earlier one.
[[nodiscard]] std::map<std::string, cell_view> by_cell(const std::vector<nlohmann::json> &records);

/// How many of the cell's cases ended with each outcome (by name).
[[nodiscard]] std::map<std::string, int> outcome_counts(const cell_view &view);

/// The semantic group of a cell, "" for one that never started.
[[nodiscard]] std::string group_of(const comparison &c, const std::string &cell_id);

} // namespace cuparity
