// A summary.json read back for run-vs-run comparison: schema checked, each member it uses typed.
#pragma once

#include "harness/latency/recorded_latency.hpp"
#include "harness/matrix/matrix.hpp"
#include "harness/verdict/compare.hpp"
#include "harness/verdict/outcome_changes.hpp"

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace cuparity {

/// A file that cannot be compared. what() is "<file>: <member>: <problem>" (or "<file>:
/// <problem>" when no member is to blame); the member is a path like "results[3].outcome".
class summary_input_error : public std::runtime_error {
public:
  summary_input_error(std::string file, std::string member, const std::string &problem);
  [[nodiscard]] const std::string &file() const noexcept { return m_file; }
  [[nodiscard]] const std::string &member() const noexcept { return m_member; }

private:
  std::string m_file, m_member;
};

/// What a compare report says about each run besides its results.
struct run_header {
  std::string source;  ///< the summary.json read
  std::string verdict; ///< the runner's word: equivalent, failed, incomplete, environment
  int exit_code = 0;
  std::string git_revision, started;
  bool simulated = false;
  nlohmann::json provenance; ///< as the run recorded it (null when absent)
};

/// The parts of a summary that run-vs-run comparison reads.
struct recorded_run {
  run_header header;
  std::vector<run_result> results;
  std::vector<divergence> divergences;
  bool has_latency = false; ///< the summary's latency block is not null
  recorded_latency latency;
  /// The thresholds the run judged its latency with (latency.settings); absent in older runs.
  std::optional<latency_settings> latency_settings_used;
  /// What the run covered of its plan (summary.json's coverage); absent in older runs.
  std::optional<struct coverage> coverage;
  /// Each cell's binding map, from the results.jsonl beside summary.json; absent without one.
  std::optional<std::map<std::string, nlohmann::json>> binding_maps;
  std::string results_path; ///< where the binding maps were looked for
};

/// Reads `path`: a run directory holding summary.json, or a summary.json, and the binding maps of
/// the results.jsonl beside it when there is one (a malformed one is an error too). Throws
/// summary_input_error for a missing or unreadable file, bad JSON, a schema other than
/// cuparity.summary/1 (latency: cuparity.latency/2 or /1), a member of the wrong kind, a count that
/// is not one (null, negative, a fraction), or a coverage section its own counts or the verdict
/// contradict. The reports (reports/cuparity_reports/summary_rules.py) apply the same rules, in
/// the same words; tests/summaries/ is the corpus both are held to.
[[nodiscard]] recorded_run read_recorded_run(const std::string &path);

/// The same from parsed JSON; `source` names the file in errors.
[[nodiscard]] recorded_run recorded_run_from_json(const nlohmann::json &summary,
                                                  const std::string &source);

} // namespace cuparity
