// Functional comparison: semantic groups, equivalence inside each, expectations, baselines.
#pragma once

#include "harness/matrix/matrix.hpp"
#include "harness/verdict/baseline.hpp"
#include "harness/verdict/changes.hpp"
#include "harness/verdict/coverage.hpp"

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace cuparity {

/// A function whose bound symbols differ between cells, as their external suites' captured maps
/// show: the binding difference behind a divergence.
struct binding_difference {
  std::string function;
  std::map<std::string, std::vector<std::string>> cells; ///< cell -> "symbol (source)", sorted
  /// The same symbols in every cell, bound another way (dlsym here, cuGetProcAddress there).
  bool same_symbols = false;
};

/// A function whose binding a matrix variable changed in one suite or program: the first pair of
/// cells, differing in the variable alone, where it did, and in how many such pairs it did.
struct variable_binding_change {
  std::string suite; ///< the suite or program whose processes bound it
  std::string function;
  std::string cell_a, cell_b;    ///< the first pair, in matrix order
  env_value value_a, value_b;    ///< the variable's value in each
  std::vector<std::string> a, b; ///< "symbol (source)" bound there, sorted (empty: none)
  bool same_symbols = false;     ///< the same symbols, bound another way
  std::size_t pairs = 0;         ///< pairs of cells where it differs
};

/// What one matrix variable changed in a matrix of suites or programs (docs/verdicts.md).
struct variable_effect {
  std::string variable;
  /// Pairs of cells that differ in it alone where some suite or program ran in both (a program
  /// that could not run, not_supported, is no evidence); the first of them.
  std::size_t pairs = 0;
  std::string first_a, first_b;
  std::size_t outcome_pairs = 0; ///< of them, pairs where some case ended or observed otherwise
  std::vector<variable_binding_change> bindings; ///< other symbols first, then by suite, function
  std::optional<std::string> inert;              ///< [matrix] inert's reason, when it has one
};

/// A suite whose every test in a cell failed or errored with one message: its environment is
/// broken there (a missing fixture or dependency), not its tests (suite_end `environment`).
struct suite_environment {
  std::string message;
  std::size_t count = 0;   ///< tests that ended with it
  bool stopped = false;    ///< the runner stopped the suite once it was plain
  std::size_t not_run = 0; ///< tests it did not run then
};

/// A suite its failure budget (max_fails) stopped in a cell (suite_end `budget`).
struct suite_budget {
  std::size_t max_fails = 0, failures = 0, not_run = 0;
};

/// One external suite (or program) in one cell, as its latest suite_end or suite error says:
/// summary.json's suites[], the console's SUITE lines (docs/formats.md).
struct suite_count {
  std::string cell, suite;
  bool program = false;
  std::optional<std::string> error;     ///< it could not run there (a cell_error): no end
  std::optional<std::size_t> collected; ///< tests its first process collected; unknown: none
  std::size_t tests = 0;                ///< tests recorded
  std::size_t process_count = 0;        ///< processes started
  std::optional<double> wall_ms;        ///< its wall time, when recorded
  std::optional<suite_environment> environment;
  std::optional<suite_budget> budget;
};

/// One observation (or the outcome, key "outcome") that differs inside a semantic group.
struct divergence {
  std::string group;
  std::string case_id;
  std::string key;
  std::map<std::string, nlohmann::json> values; ///< cell -> value (null when absent)
  std::vector<binding_difference> bindings;     ///< captured cells only: what they bound apart
};

/// Anything that makes the run fail, other than a divergence (the kinds: docs/verdicts.md).
struct problem {
  /// failure, unexpected_pass, stale_expectation, expectation, cell_error, environment,
  /// failure_budget, collection, change, regression, flaky, no_op_configuration, nothing_tested
  std::string kind;
  std::string cell;
  std::string case_id;
  std::string message;
};

struct comparison {
  std::map<std::string, std::vector<std::string>> groups; ///< group key -> cell ids
  std::map<std::string, std::string> cell_group;
  std::vector<divergence> divergences;
  std::vector<problem> problems;
  std::map<std::string, std::size_t> outcome_counts; ///< over every recorded case
  std::size_t allowed = 0;                           ///< non-passes accepted by an expectation
  std::size_t flaky_excused = 0; ///< flaky tests a suite's flakes file excused (in `allowed` too)
  std::size_t results = 0;
  bool environment_problem = false; ///< no cell could open the driver
  struct coverage coverage;         ///< the plan against the results: incomplete fails the run
  /// Against the matrix's reference cells: reported; problems of kind "change" as well when the
  /// matrix sets fail_on_change.
  std::vector<reference_change> changes;
  /// Known changes (matrix known_changes) that matched no change; problems of kind
  /// stale_expectation when the matrix sets fail_on_change.
  std::vector<known_change> stale_known;
  /// A matrix of suites or programs: per matrix variable, what it changed (noop_variables.cpp);
  /// std::nullopt for a matrix of built-in cases.
  std::optional<std::vector<variable_effect>> variable_effects;
  /// A matrix of suites or programs: each (cell, suite) that ended or could not run, in cell then
  /// suite order (suite_ends.cpp); std::nullopt for a matrix of built-in cases.
  std::optional<std::vector<suite_count>> suites;
  /// Recorded (cell, case) pairs of a suite whose environment was broken in that cell: counted,
  /// neither judged nor compared (the `environment` problem speaks for them).
  std::set<std::pair<std::string, std::string>> set_aside;
};

/// The semantic-group key of an effective config: what decides behaviour (null-stream mode,
/// driver under test, NVRTC include path); binding, fallback and warnings are not part of it.
[[nodiscard]] std::string semantic_key(const nlohmann::json &config);

/// Observations of these cases describe the configuration itself: checked against the matrix's
/// expectations, not compared inside a group.
[[nodiscard]] bool is_configuration_case(const std::string &case_id);

/// Compares the records of a run (latest record per cell and per (cell, case) wins) and checks
/// them against `planned`, the (cell, case) pairs the run (or the shards merged) set out to run.
/// `known_case` says whether a case id exists in this build (a baseline line naming another is
/// stale); the verdict reads records alone and never the case registry.
[[nodiscard]] comparison
compare_results(const matrix &m, const std::vector<nlohmann::json> &records,
                const std::vector<planned_pair> &planned,
                const std::vector<baseline_entry> &baseline,
                const std::function<bool(const std::string &)> &known_case);

} // namespace cuparity
