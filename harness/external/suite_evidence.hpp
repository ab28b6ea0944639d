// What a suite's captured maps show about a cell: its stream-0 mode, its driver, its bindings.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace cuparity {

/// The evidence of one cell's suite processes, from their binding maps (binding_map/2).
struct suite_evidence {
  /// "per-thread" or "legacy": the mode of the process that bound the most functions (a per-thread
  /// variant bound there makes it per-thread); "" when no process bound the driver.
  std::string stream0;
  long pid = 0;              ///< that process
  std::size_t functions = 0; ///< the functions it bound
  std::size_t processes = 0; ///< processes that bound the driver at all
  std::string driver_path;   ///< the driver the first map loaded
  std::optional<long long> driver_version;
  /// Every process's bindings, function -> "symbol (source)": what two cells compare.
  std::map<std::string, std::set<std::string>> bindings;
};

/// Reads the maps (each a file `cuparity capture` wrote) and merges their bindings; the first
/// map with a driver decides the driver and the stream-0 mode. Throws map_error for a map that
/// cannot be read.
[[nodiscard]] suite_evidence read_suite_evidence(const std::vector<std::string> &map_paths);

/// summary and record form: {"stream0", "pid", "functions", "processes", "driver_path",
/// "driver_version"} (bindings are recorded beside it).
[[nodiscard]] nlohmann::json evidence_json(const suite_evidence &e);

/// The bindings as a JSON object of sorted arrays.
[[nodiscard]] nlohmann::json bindings_json(const suite_evidence &e);

} // namespace cuparity
