// Where a run came from: revision, host, GPUs, driver, toolkit, argv, simulated or real.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cuparity {

/// Provenance for summary.json: build facts plus `driver` (the `cuparity env --json` document of
/// the probe process) and the command line.
[[nodiscard]] nlohmann::json make_provenance(const nlohmann::json &driver_env,
                                             const std::vector<std::string> &argv);

/// What `cuparity --version` prints: "cuparity 0.1.0 (git <revision>[, modified])".
[[nodiscard]] std::string version_text();

/// UTC time as ISO 8601 (2026-11-29T17:05:00Z).
[[nodiscard]] std::string utc_now();

} // namespace cuparity
