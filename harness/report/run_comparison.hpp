// `cuparity compare`: run B against run A, outcomes, divergences and latency (cuparity.compare/1).
#pragma once

#include "harness/latency/run_vs_run_latency.hpp"
#include "harness/matrix/matrix.hpp"
#include "harness/report/summary_reader.hpp"
#include "harness/verdict/divergence_changes.hpp"
#include "harness/verdict/outcome_changes.hpp"

#include <cstddef>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

namespace cuparity {

inline constexpr const char *compare_schema = "cuparity.compare/1";

/// One latency series judged run against run, with the unit its values are in.
struct latency_change {
  series_change change;
  std::string unit;
};

struct run_comparison {
  run_header a, b;
  std::vector<result_change> outcomes; ///< every (cell, case) pair of either run
  /// Observations of a (cell, case) both runs recorded that differ (reported, never a
  /// regression: a driver may change what it reports; fail_on_change is for a matrix's
  /// reference). `reference` holds the cell too; before is A's value, after B's.
  std::vector<reference_change> observations;
  /// Per cell both runs recorded a binding map of, each driver entry whose symbol, ABI or
  /// presence differs (reported, never a regression); key "binding.<entry>", before A's, after B's.
  std::vector<reference_change> bindings;
  bool bindings_compared = false; ///< both runs had their binding maps (results.jsonl) to compare
  divergence_changes divergences;
  std::vector<latency_change> latency;
  std::vector<std::string> notes; ///< what could not be compared (a probe or series one run lacks)
  /// Why the comparison cannot vouch for every pair: a run that is itself incomplete, B without
  /// results, or pairs of A that B lacks. Any reason makes the comparison fail (exit 1).
  std::vector<std::string> incomplete;

  [[nodiscard]] std::size_t count(outcome_change c) const;
  /// Outcome regressions that no known change accepts: what fails the comparison.
  [[nodiscard]] std::size_t unexcused_regressions() const;
  [[nodiscard]] std::size_t slower() const; ///< latency series slower in B
  /// B regressed: an outcome regression, a new divergence, or a latency series slower.
  [[nodiscard]] bool regressed() const;
  [[nodiscard]] bool complete() const { return incomplete.empty(); }
  /// "regressed", else "incomplete", else "no regression".
  [[nodiscard]] const char *verdict() const;
};

/// B against A. Latency series are judged by rule_for(`latency`, probe, B's unit), the rule the
/// runner's --latency-baseline uses. An outcome change that a `known` entry (key "outcome", the
/// same case, and the cell and B's outcome where it names them) accepts carries its reason and
/// does not fail the comparison.
[[nodiscard]] run_comparison compare_runs(const recorded_run &a, const recorded_run &b,
                                          const latency_settings &latency,
                                          const std::vector<known_change> &known = {});

/// 0 when nothing regressed and the comparison is complete, else 1 (exit_codes.hpp).
[[nodiscard]] int compare_exit_code(const run_comparison &c);

/// The comparison as cuparity.compare/1 JSON (docs/formats.md); non-finite numbers are null.
[[nodiscard]] nlohmann::json compare_json(const run_comparison &c);

/// The console report: counts, every changed pair, divergences, the latency table, the verdict.
void print_compare(std::ostream &out, const run_comparison &c);

} // namespace cuparity
