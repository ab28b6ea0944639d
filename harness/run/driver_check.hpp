// Before a run: what driver the cells will meet, asked of a `cuparity env --json` process.
#pragma once

#include "harness/matrix/matrix.hpp"

#include <nlohmann/json.hpp>
#include <string>

namespace cuparity {

/// The `cuparity env --json` document of a process in the matrix's environment (the first cell's
/// driver); null with `error` set when the probe fails or prints no JSON.
[[nodiscard]] nlohmann::json check_driver(const matrix &m, std::string &error);

/// Whether the probed driver is the `expected` one: its version number, its version text, or a
/// part of its library's path.
[[nodiscard]] bool driver_matches(const nlohmann::json &probe, const std::string &expected);

/// What --expect-driver reports when the probed driver is another one.
[[nodiscard]] std::string driver_mismatch(const nlohmann::json &probe, const std::string &expected);

} // namespace cuparity
