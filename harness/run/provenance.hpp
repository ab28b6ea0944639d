// Where a run came from: revision, host, GPUs, driver, toolkit, argv, simulated or real.
#pragma once

#include "harness/platform/utc_time.hpp" // utc_now, used with the facts below

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cuparity {

/// Provenance for summary.json: build facts plus `driver` (the `cuparity env --json` document of
/// the probe process: devices, driver version and release), the host's name and id, and the
/// command line.
[[nodiscard]] nlohmann::json make_provenance(const nlohmann::json &driver_env,
                                             const std::vector<std::string> &argv);

/// What `cuparity --version` prints: "cuparity 0.1.0 (git <revision>[, modified])".
[[nodiscard]] std::string version_text();

/// The host's id in provenance: the first 12 hex digits of a keyed SHA-256 of its machine id
/// (never the id itself, as machine-id(5) asks); "" when the host has no machine id.
[[nodiscard]] std::string host_id();

} // namespace cuparity
