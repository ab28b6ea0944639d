// A latency block read back from a summary.json: each probe's unit and samples per series.
#pragma once

#include "harness/latency/latency_samples.hpp"

#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace cuparity {

/// One probe of a recorded latency block (summary.json's `latency.probes[]`).
struct recorded_probe {
  std::string unit = "ns";
  series_samples samples; ///< series -> per-round values, in the order the rounds ran
};

/// Probe name -> what was recorded for it.
using recorded_latency = std::map<std::string, recorded_probe>;

/// The probes of `latency` (a summary's latency block, found at `path` in its document; null
/// gives none). Throws json_input_error naming the member ("latency.probes[2].samples.nv=0[3]")
/// when a probe has no name, its samples are not lists of numbers, or a name repeats.
[[nodiscard]] recorded_latency read_recorded_latency(const nlohmann::json &latency,
                                                     const std::string &path = "latency");

} // namespace cuparity
