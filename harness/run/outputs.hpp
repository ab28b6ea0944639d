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

/// Every record of each directory's results.jsonl, in order; a cut-off last record (a killed
/// run) is reported and ignored. Throws std::runtime_error for a corrupt file.
[[nodiscard]] std::vector<nlohmann::json> read_all(const std::vector<std::string> &dirs);

/// Reads a previous summary.json for latency comparison; throws naming the file.
[[nodiscard]] nlohmann::json read_summary(const std::string &path);

/// The outputs that feed write_verdict besides the records.
struct verdict_inputs {
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
