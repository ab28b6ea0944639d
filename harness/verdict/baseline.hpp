// Baseline files (Mesa-style fails list): `case,cell,outcome` lines with # comments for links.
#pragma once

#include "harness/protocol/outcome.hpp"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cuparity {

struct baseline_entry {
  std::string case_id;
  std::string cell;
  outcome expected = outcome::fail;
  std::string comment; ///< the comment lines just above it (reason, issue link)
  int line = 0;
};

/// Reads a baseline; throws std::runtime_error "file:line: ..." for a malformed line.
[[nodiscard]] std::vector<baseline_entry> read_baseline(const std::string &path);

/// Writes every (case, cell) whose outcome is not a success, sorted, with a header comment.
void write_baseline(const std::string &path, const std::vector<nlohmann::json> &case_records,
                    const std::string &header);

} // namespace cuparity
