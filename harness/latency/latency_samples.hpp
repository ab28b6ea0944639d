// How latency samples are keyed: by probe, then by series (one cell's facade or direct calls).
#pragma once

#include <map>
#include <string>
#include <vector>

namespace cuparity {

/// One probe's values by series name, each series in the order its rounds ran.
using series_samples = std::map<std::string, std::vector<double>>;
/// Probe name -> series name -> values.
using probe_samples = std::map<std::string, series_samples>;

/// A series' name in records and the summary: the cell's id for calls through the facade,
/// "direct:<cell>" for the same calls through the raw pointer, "other:<cell>" for the other
/// backend's pointer in the same process (docs/latency.md).
[[nodiscard]] inline std::string series_name(const std::string &cell, const std::string &series) {
  return series == "facade" ? cell : series + ":" + cell;
}

} // namespace cuparity
