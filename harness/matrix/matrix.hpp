// Matrices: environment axes, include/exclude rules and expectations, read from TOML.
#pragma once

#include "harness/protocol/outcome.hpp"

#include <chrono>
#include <functional>
#include <iosfwd>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace cuparity {

/// An error in a matrix file: what() is "file:line:column: message".
class matrix_error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Where something was written, for messages.
struct source_position {
  std::string file;
  int line = 0, column = 0;
  [[nodiscard]] std::string text() const;
};

/// A variable's value in a cell: std::nullopt means "removed from the environment".
using env_value = std::optional<std::string>;
using cell_env = std::map<std::string, env_value>;

/// Outcomes allowed for some cases in some cells (a known failure, with its reason and link).
struct allowance {
  std::vector<std::string> cases; ///< globs or suites
  std::vector<outcome> outcomes;  ///< the outcomes tolerated
  std::string reason;
  std::string link;
  source_position where;
};

/// What the matrix says about the cells a rule matches.
struct expectation {
  cell_env when;                      ///< partial match on the cell's variables
  std::optional<std::string> label;   ///< or on its label
  std::optional<std::string> binding; ///< internal / nvidia
  std::optional<std::string> stream0; ///< legacy / per-thread
  std::optional<bool> fallback;
  std::vector<std::string> warnings; ///< substrings that must each appear in some warning
  std::optional<std::size_t> warning_count;
  std::vector<allowance> allow;
  source_position where;
};

struct cell {
  std::string id;    ///< label, or the variables in short form: "nv=1,numba_ptds=0,cp_ptds=-"
  std::string label; ///< from an include, may be empty
  cell_env env;      ///< every matrix-controlled variable: a value or std::nullopt (unset)
  std::vector<const expectation *> expectations;
};

struct latency_settings {
  bool enabled = false;
  std::vector<std::string> probes; ///< globs; empty = all
  /// Those of `probes` that select C++ probes (`cuparity probe`) and those that select the Python
  /// probe process's (py.*), set as `probes` is read; with `probes` given and `native_probes`
  /// empty, no C++ probe process runs.
  std::vector<std::string> native_probes, python_probes;
  int rounds = 5;
  double min_time_s = 0.05;     ///< per series of each probe per round
  double block_time_s = 2.5e-4; ///< a block of one series; the series alternate block by block
  double target_cv = 0.03;      ///< spread above this is reported in the noise block
  int max_rounds = 15;
  double budget_s = 0; ///< no further round starts after this many seconds of the phase (0: none)
  double regression_threshold = 0.05; ///< cross-process: a change beyond this fraction counts
  double paired_threshold = 0.01;     ///< in-process pairs: a change beyond this fraction counts
  bool fail_on_regression = false;
  std::map<std::string, double> thresholds; ///< per probe: regression_threshold's override
  /// Per probe: min_time_s's override, seconds a series (above --latency-min-time too). A paired
  /// launch needs seconds where ctx.get_current's interval is narrow in a fraction of one.
  std::map<std::string, double> min_times;
  /// "per_round": a fresh probe process per cell per round; "persistent": one process per cell
  /// for the whole phase, rounds sent to it (process-to-process spread stays out of the samples).
  bool persistent = false;
  /// `python = true`: a Python probe process (tools/pyprobe/cuparity_pyprobe.py) runs beside the
  /// C++ one in every cell and round, under `python_interpreter`, with `python_environment`'s
  /// variables besides the cell's; each module of `python_requires` must import in the cell, or
  /// the cell's latency error names it (docs/latency.md#the-python-path).
  bool python = false;
  std::string python_interpreter = "python3";
  std::vector<std::string> python_requires;
  std::map<std::string, std::string> python_environment;
};

/// [matrix] reference: the values of some variables that make a cell a reference cell. Every other
/// cell whose variables equal a reference cell's but for these is compared with it, case by case
/// (harness/verdict/changes.hpp).
struct reference_rule {
  cell_env values;       ///< variable -> its value in the reference cells (nullopt: unset)
  source_position where; ///< the table, for messages
};

/// One [[change]] of a known-changes file: the change a candidate is known to make.
struct known_change {
  std::optional<std::string> cell; ///< the changed cell's id; any cell when absent
  std::string case_id;             ///< "" for a binding change (key "binding.<entry>")
  std::string key;                 ///< "outcome", "observations.<name>" or "binding.<entry>"
  /// The value the change must arrive at; any value when absent.
  std::optional<nlohmann::json> after;
  std::string reason; ///< why it is known: a driver's release note, an issue link
  source_position where;
};

/// One entry of a suite's flakes file: tests that may change outcome between tries, and why.
struct flake_rule {
  std::string glob;   ///< matches case ids (`<suite>.<classname>.<name>`)
  std::string reason; ///< why it is excused (an issue link, the known race)
  source_position where;
};

/// [[suite]]: another project's pytest suite, run in every cell under that cell's environment and
/// under `cuparity capture` (docs/configuration.md#external-suites).
struct external_suite {
  std::string name; ///< the first part of its case ids: `<name>.<classname>.<test>`
  /// [[program]]: a plain command with no JUnit; its exit status and its captured binding map are
  /// the result (one case, `<name>`).
  bool program = false;
  /// The command; {bin} and {matrix_dir} are substituted at load, {out} (the process's own
  /// folder) and {junit} (where the JUnit XML must land) for each process.
  std::vector<std::string> command;
  std::string junit = "{out}/junit.xml";
  /// Variables the suite's processes get besides the cell's ({bin}, {matrix_dir} substituted):
  /// what the suite needs to run at all (a PYTHONPATH), never a matrix variable.
  std::map<std::string, std::string> environment;
  /// The project's source checkout its processes start in (its conftest.py, pytest.ini, test
  /// data), as its own CI runs it: {matrix_dir}, {bin} and {env:NAME} substituted at load, made
  /// absolute, an existing folder. None: they start where cuparity was started.
  std::optional<std::string> root;
  double timeout_s = 1800; ///< one process of the suite; a test running then is its timeout
  int jobs = 1;            ///< processes the suite runs itself: cells run -j / jobs at once
  int retries = 2;         ///< batches re-running together the tests that did not pass or skip
  int rerun_alone = 2;     ///< then this many that failed alike in every batch, each alone
  /// The plugin ends a process once this many tests failed with one message and none passed (0:
  /// never): a broken environment (a fixture missing) is named in seconds.
  int environment_after = 25;
  std::optional<int> max_fails; ///< failed tests after which the cell's suite stops (none: no cap)
  std::optional<std::string> flakes_path;
  std::vector<flake_rule> flakes;
  /// [[program]] only: the exit status that is a pass, and one that means "cannot run here" (a
  /// package missing: the case is not_supported with the program's last line as the reason).
  int exit_code = 0;
  std::optional<int> skip_exit_code;
  source_position where;
};

/// The JSON format a [[benchmark]] writes: pytest-benchmark's `--benchmark-json`, pyperf's `-o`.
enum class benchmark_format { pytest_benchmark, pyperf };

/// [[benchmark]]: a package's own benchmarks (a pytest-benchmark suite or a pyperf script), run
/// in every cell after the functional phase, in rounds interleaved across cells; each benchmark
/// it lists becomes a latency series (docs/configuration.md#benchmarks).
struct external_benchmark {
  std::string name; ///< its probes are `bench:<name>:<test>`; its folder in every cell
  benchmark_format format = benchmark_format::pytest_benchmark;
  /// The command; {bin} and {matrix_dir} are substituted at load, {out} (the process's own folder)
  /// and {json} (where it must write its JSON: {out}/benchmark.json) for each process.
  std::vector<std::string> command;
  /// Variables its processes get besides the cell's ({bin}, {matrix_dir} substituted).
  std::map<std::string, std::string> environment;
  std::optional<std::string> root; ///< the folder its processes start in, as a suite's root
  double timeout_s = 600;          ///< one process; then it is killed, the cell's error
  int rounds = 3;                  ///< processes per cell, interleaved across cells (A B, B A)
  /// The A/A control: each round runs it twice per cell, the second as series `control:<cell>`,
  /// compared with the first by the same rule (it must read same).
  bool control = false;
  source_position where;
};

/// [packages]: how the values of the `packages` axis (requirement lists) are installed: each once,
/// into a cached folder of its own that the cell's processes find first (docs/matrices.md).
struct package_settings {
  std::string axis = "packages";        ///< the axis key whose values are requirement lists
  std::vector<std::string> find_links;  ///< wheel folders ({matrix_dir} substituted); offline
  std::optional<std::string> index_url; ///< an index instead of (or beside) the folders
  std::string installer = "auto";       ///< "uv", "pip" or "auto" (uv where found, else pip)
  std::string python = "python3";       ///< the interpreter the environments are for
  std::optional<std::string> cache;     ///< where environments are kept; default: a user cache
  bool no_deps = true;                  ///< install only what is named (the rest from the site)
  source_position where;                ///< the [packages] table, for messages
};

struct matrix {
  std::string path;
  std::string digest; ///< "sha256:<64 hex>" of the file's bytes as they were parsed
  std::string name;
  std::string description;
  std::vector<std::string> cases{"*"};
  std::vector<std::string> exclude_cases;
  /// Per-case watchdog for every case; unset = each case's own timeout.
  std::optional<std::chrono::milliseconds> case_timeout;
  std::optional<std::string> baseline; ///< resolved path
  std::optional<reference_rule> reference;
  /// A change against the reference fails the run (default: changes are reported only).
  bool fail_on_change = false;
  std::optional<std::string> known_changes_path; ///< resolved path of the known-changes file
  std::vector<known_change> known_changes;       ///< read from it at load
  source_position known_changes_where;           ///< the key, for messages
  std::vector<std::string> variables;            ///< matrix-controlled variables, axis order first
  std::vector<std::string> axes;                 ///< axis variables, in file order
  /// Where each matrix variable was first named (its [axes] key, or the [[include]] naming it).
  std::map<std::string, source_position> variable_at;
  /// [matrix] inert: variables declared to change nothing the run can see, each with its reason
  /// (the no-op rule, harness/verdict/noop_variables.cpp, lets them be).
  std::map<std::string, std::string> inert;
  source_position inert_where; ///< the key, for messages
  std::vector<cell> cells;
  std::vector<expectation> expectations; ///< stable storage; cells point into it
  latency_settings latency;
  /// [[suite]] tables: a matrix with suites runs them instead of the built-in cases.
  std::vector<external_suite> suites;
  /// [[benchmark]] tables: timed in every cell after the functional (and latency) phase.
  std::vector<external_benchmark> benchmarks;
  /// [packages]: set when the matrix has a `packages` axis (or the table).
  std::optional<package_settings> packages;

  matrix() = default;
  matrix(const matrix &) = delete; // cells hold pointers into `expectations`
  matrix &operator=(const matrix &) = delete;
  matrix(matrix &&) = default;
};

/// A cell and the reference cell it is compared with ([matrix] reference).
struct reference_pair {
  const cell *c = nullptr;
  const cell *reference = nullptr;
};

/// Every cell that has a reference cell, with it, in matrix order: the reference cell has the
/// reference values and every other variable of the cell. Reference cells themselves are not
/// listed; a cell with no such partner is not either. Empty without a reference.
[[nodiscard]] std::vector<reference_pair> reference_pairs(const matrix &m);

/// Whether a glob (or a name) names anything in a registry the matrix layer does not link.
using name_check = std::function<bool(const std::string &)>;

/// Reads and expands a matrix. `known_case` tells whether a glob names any registered case (an
/// expectation naming nothing is an error); `known_probe` the same of latency probes (probes
/// globs, thresholds' names), and an empty one takes every name (for callers without the
/// registry). Placeholders in values: {bin} = the executable's directory, {matrix_dir} = the
/// matrix file's directory. Every value is checked against docs/configuration.md's bounds.
/// Throws matrix_error.
[[nodiscard]] matrix load_matrix(const std::string &path, const name_check &known_case,
                                 const name_check &known_probe = {});

/// load_matrix, reporting a matrix_error on `err` as "cuparity <command>: <what()>" (the way the
/// commands print it; an empty `command` gives "cuparity: <what()>") and returning std::nullopt.
/// Other exceptions propagate.
[[nodiscard]] std::optional<matrix>
load_matrix_reporting(const std::string &path, const name_check &known_case,
                      const name_check &known_probe, std::ostream &err, std::string_view command);
/// The same, taking every probe name.
[[nodiscard]] std::optional<matrix> load_matrix_reporting(const std::string &path,
                                                          const name_check &known_case,
                                                          std::ostream &err,
                                                          std::string_view command);

/// One key of a matrix section, as the reader's key tables define it (for `cuparity list`, docs).
struct matrix_key_doc {
  std::string name;
  std::string type;   ///< "string", "integer", "number", "\"legacy\" or \"per-thread\"", ...
  std::string bounds; ///< the accepted range, e.g. ">= 1, <= 2147483647"; empty when none
  std::optional<double> min, max; ///< the same bounds as numbers (integers and numbers only)
  bool min_exclusive = false;     ///< min itself is refused ("> 0")
  bool required = false;
  std::string doc; ///< one line
};

/// A section's keys, in the order they are read.
struct matrix_section_doc {
  std::string name; ///< as messages name it: "[latency]", "[[expect.allow]]", "the matrix file"
  std::string key_prefix; ///< how messages name its keys: "latency" for "latency.rounds"
  std::vector<matrix_key_doc> keys;
};

/// Every section the reader knows through a key table, in file order: the matrix file's own keys,
/// [matrix], [[include]], [[expect]], [[expect.allow]], [latency]. Variables (UPPER_CASE keys of
/// [axes], [[include]], [[exclude]], expect.when) and latency.thresholds' probes are free.
[[nodiscard]] const std::vector<matrix_section_doc> &matrix_key_docs();

/// Short names of the seed's variables used in cell ids.
[[nodiscard]] std::string short_variable_name(const std::string &var);

/// Whether the partial `when` matches `env` (every key equal; an unset value matches unset).
[[nodiscard]] bool env_matches(const cell_env &when, const cell_env &env);

} // namespace cuparity
