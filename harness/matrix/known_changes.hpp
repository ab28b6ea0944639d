// A matrix's file of known changes against its reference: which changes are accepted, and why.
#pragma once

#include "harness/matrix/matrix.hpp"

#include <string>
#include <vector>

namespace cuparity {

/// Reads a known-changes file (TOML, [[change]] tables with case, key, reason and optional cell
/// and after). Throws matrix_error at the file's line and column for anything malformed.
[[nodiscard]] std::vector<known_change> read_known_changes(const std::string &path);

} // namespace cuparity
