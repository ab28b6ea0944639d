// The in-process latency comparisons: facade overhead and backend vs backend, from paired blocks.
#pragma once

#include "harness/matrix/matrix.hpp"

#include <nlohmann/json.hpp>
#include <vector>

namespace cuparity {

/// The summary's `overhead` and `paired` arrays from the `latency_pairs` records: per cell and
/// probe, facade over raw pointer (a ratio and a difference in ns, with intervals), and the other
/// backend against this one as nvidia / internal with a verdict (docs/latency.md#paired-blocks).
struct paired_blocks {
  nlohmann::json overhead = nlohmann::json::array();
  nlohmann::json paired = nlohmann::json::array();
  /// Per probe, the run's method floor: how far its same-address controls reached from 1.
  nlohmann::json floors = nlohmann::json::array();
  bool differs = false; ///< some backend comparison reads slower or faster
};

[[nodiscard]] paired_blocks paired_summary(const latency_settings &l,
                                           const std::vector<nlohmann::json> &records);

} // namespace cuparity
