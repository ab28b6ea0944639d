// From recorded results to the verdict's files: summary.json, junit.xml, console, baseline.
#pragma once

#include "harness/matrix/matrix.hpp"
#include "harness/report/summary.hpp"
#include "harness/verdict/baseline.hpp"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace cuparity {

/// What the result directories hold, as the verdict reads it.
struct recorded_results {
  /// Every record of each directory's results.jsonl, in order, less the latency records of
  /// latency phases a later attempt (a resume) ran again: rounds of two attempts never mix.
  std::vector<nlohmann::json> records;
  /// The functional phase's time: summed over the attempts of one directory (an interrupted one
  /// records its time too), the longest of several directories (shards run side by side).
  double functional_wall_s = 0;
};

/// Reads each directory's results.jsonl; a cut-off last record (a killed run) is reported and
/// ignored. Throws std::runtime_error naming the file and line for a corrupt file.
[[nodiscard]] recorded_results read_all(const std::vector<std::string> &dirs);

/// Reads a previous summary.json for latency comparison; throws naming the file.
[[nodiscard]] nlohmann::json read_summary(const std::string &path);

/// The outputs that feed write_verdict besides the records.
struct verdict_inputs {
  const std::vector<planned_pair> &planned; ///< what the coverage is judged against
  const std::vector<baseline_entry> &baseline;
  std::optional<std::string> write_baseline;        ///< a baseline file to write, if any
  const nlohmann::json *latency_baseline = nullptr; ///< a previous summary.json, if any
};

/// Compares the records, writes summary.json and junit.xml into `out_dir`, prints the console
/// table (and writes the baseline when asked); returns the verdict's exit code.
[[nodiscard]] int write_verdict(const matrix &m, const std::vector<nlohmann::json> &records,
                                run_facts facts, const std::string &out_dir,
                                const verdict_inputs &inputs);

} // namespace cuparity
