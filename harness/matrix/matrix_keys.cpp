// The key tables of every matrix section the reader knows: one row per key.
// Adding a key is one row here plus its consumer.
#include "harness/matrix/matrix_keys.hpp"

#include "harness/matrix/external_benchmarks.hpp"
#include "harness/matrix/external_suites.hpp"
#include "harness/matrix/flakes.hpp"
#include "harness/matrix/known_changes.hpp"
#include "harness/matrix/limits.hpp"
#include "harness/matrix/package_keys.hpp"
#include "harness/matrix/placeholders.hpp"
#include "harness/matrix/python_probes.hpp"
#include "harness/matrix/text.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <filesystem>

namespace cuparity {
namespace matrix_detail {
namespace {

using glob_list = std::vector<std::string>;

constexpr std::string_view see_list = " (see `cuparity list`)";
constexpr std::string_view see_probes = " (see `cuparity probe --list`)";

/// Case globs that must each name a registered case.
glob_list known_cases(const key_value &v, std::string_view hint) {
  glob_list globs = v.get<glob_list>();
  for (const auto &g : globs)
    if (!v.context().known_case(g))
      v.fail(in_quotes(g) + " names no case" + std::string(hint));
  return globs;
}

/// An empty list where leaving the key out means "every one": `cases = []` ran every case.
void refuse_empty(const key_value &v, std::string_view meaning) {
  if (v.get<glob_list>().empty())
    v.fail("is an empty list, which " + std::string(meaning));
}

void set_cases(matrix &m, const key_value &v) {
  refuse_empty(v, "would select every case, as leaving the key out does: name the cases");
  m.cases = known_cases(v, see_list);
}

// (no hint here, as before)
void set_exclude_cases(matrix &m, const key_value &v) {
  m.exclude_cases = known_cases(v, "");
}

/// The name is the results' folder (cuparity-results/<name>): one safe path component.
void set_name(matrix &m, const key_value &v) {
  m.name = v.get<std::string>();
  if (auto why = unsafe_component(m.name, limits::name_max_bytes))
    v.fail(in_quotes(m.name) + " " + *why + " (the name is the results' folder)");
}

/// The variables are checked against the cells once they exist (expansion.cpp).
void set_reference(matrix &m, const key_value &v) {
  const toml::table &t = *v.get<const toml::table *>();
  rule r = read_rule(v.context().reader, t, v.key(), {});
  if (r.env.empty())
    v.fail("names no variable (reference = { VARIABLE = value, ... })");
  m.reference = reference_rule{std::move(r.env), v.context().reader.at(t)};
}

/// VARIABLE = "reason": each must be one of the matrix's variables (checked once the cells exist,
/// expansion.cpp), and the reason says why changing it changes nothing the run can see.
void set_inert(matrix &m, const key_value &v) {
  const toml_reader &r = v.context().reader;
  for (const auto &[kp, vp] : toml_reader::in_file_order(*v.get<const toml::table *>())) {
    const std::string var(kp->str());
    check_variable_name(r, *kp, var);
    const std::string reason = r.string_of(*vp, "inert." + var);
    if (reason.find_first_not_of(" \t") == std::string::npos)
      r.error(*vp, "inert." + var + ": give the reason the variable changes nothing");
    m.inert[var] = reason;
  }
  m.inert_where = r.at(v.node());
}

void set_case_timeout(matrix &m, const key_value &v) {
  m.case_timeout = std::chrono::milliseconds(static_cast<long long>(v.get<double>() * 1000));
}

/// What is at a baseline path that can never be a baseline file; a missing file is left to the
/// run, which says so (and --write-baseline creates one).
std::optional<std::string> unusable_baseline(const std::filesystem::path &p) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status link = fs::symlink_status(p, ec);
  if (ec || !fs::exists(link))
    return std::nullopt;
  const fs::file_status target = fs::status(p, ec);
  if (!fs::exists(target))
    return "is a dangling link";
  if (fs::is_directory(target))
    return "is a folder, not a baseline file";
  if (!fs::is_regular_file(target) && fs::weakly_canonical(p, ec) != "/dev/null")
    return "is not a regular file (nor /dev/null, the empty baseline)";
  return std::nullopt;
}

/// A written value with {bin} and {matrix_dir} substituted; an unknown placeholder is refused.
std::string with_placeholders(const key_value &v, const std::string &written) {
  if (auto p = unknown_placeholder(written))
    v.fail("unknown placeholder " + *p + " (known: {bin}, {matrix_dir})");
  return substitute_placeholders(written, v.context().reader.dir());
}

/// A file the matrix names: placeholders substituted, relative to the matrix's folder.
std::string file_path(const key_value &v) {
  const std::string &dir = v.context().reader.dir();
  const std::string written = v.get<std::string>();
  std::filesystem::path f = with_placeholders(v, written);
  if (f.empty())
    v.fail("is empty");
  if (f.is_relative())
    f = std::filesystem::path(dir) / f;
  return f.lexically_normal().string();
}

/// The file is read now, so a bad entry is an error of this matrix.
void set_known_changes(matrix &m, const key_value &v) {
  m.known_changes_path = file_path(v);
  m.known_changes = read_known_changes(*m.known_changes_path);
  m.known_changes_where = v.context().reader.at(v.node());
}

void set_baseline(matrix &m, const key_value &v) {
  m.baseline = file_path(v);
  if (auto why = unusable_baseline(*m.baseline))
    v.fail(*m.baseline + " " + *why);
}

/// A label names one cell in every file (ids, baselines, logs): printable, one line.
std::string checked_label(const key_value &v) {
  const std::string label = v.get<std::string>();
  if (label.empty())
    v.fail("is empty (leave the label out to name the cell by its variables)");
  if (first_control(label))
    v.fail(in_quotes(label) + " holds a control character (a label must be one printable line)");
  return label;
}

void set_include_label(rule &r, const key_value &v) {
  r.label = checked_label(v);
}

void set_expect_label(expectation &x, const key_value &v) {
  x.label = checked_label(v);
}

void set_when(expectation &x, const key_value &v) {
  x.when = read_rule(v.context().reader, *v.get<const toml::table *>(), v.key(), {}).env;
}

void set_allow(expectation &x, const key_value &v) {
  for (const toml::table *t : v.get<std::vector<const toml::table *>>()) {
    allowance a;
    a.where = v.context().reader.at(*t);
    read_keys(v.context(), *t, allow_keys(), a);
    x.allow.push_back(std::move(a));
  }
}

void set_allowed_cases(allowance &a, const key_value &v) {
  refuse_empty(v, "covers no case");
  a.cases = known_cases(v, see_list);
}

void set_outcomes(allowance &a, const key_value &v) {
  refuse_empty(v, "tolerates no outcome");
  for (const auto &o : v.get<glob_list>()) {
    auto parsed = parse_outcome(o);
    if (!parsed)
      v.fail("unknown outcome " + in_quotes(o) +
             " (pass fail not_supported resource_error crash timeout error flaky)");
    a.outcomes.push_back(*parsed);
  }
}

/// Without a max_rounds, the most rounds follow rounds up.
void set_rounds(latency_settings &l, const key_value &v) {
  l.rounds = v.get<int>();
  l.max_rounds = std::max(l.max_rounds, l.rounds);
}

/// Read after rounds (row order): never fewer than rounds.
void set_max_rounds(latency_settings &l, const key_value &v) {
  const int n = v.get<int>();
  if (n < l.rounds)
    v.fail("must be at least rounds (" + std::to_string(l.rounds) + "), not " + std::to_string(n));
  l.max_rounds = n;
}

/// Probe globs that must each name a registered probe (as case globs must name a case) or one of
/// the Python probe process's (py.*); each goes to the processes whose probes it selects.
void set_probes(latency_settings &l, const key_value &v) {
  refuse_empty(v, "would select every probe, as leaving the key out does: name the probes");
  l.probes = v.get<glob_list>();
  for (const auto &g : l.probes) {
    const bool native = g.rfind("py.", 0) != 0 && v.context().known_probe(g);
    const bool python = glob_matches_python_probe(g);
    if (!native && !python)
      v.fail(in_quotes(g) + " names no probe" + std::string(see_probes));
    if (native)
      l.native_probes.push_back(g);
    if (python)
      l.python_probes.push_back(g);
  }
}

/// The interpreter of the Python probe process: a command looked up on PATH, or a path; {bin}
/// and {matrix_dir} substituted.
void set_python_interpreter(latency_settings &l, const key_value &v) {
  const std::string written = v.get<std::string>();
  if (written.empty())
    v.fail("is empty: name the Python interpreter, e.g. \"python3\"");
  l.python_interpreter = with_placeholders(v, written);
}

/// Module names, each imported by the Python probe process before it measures.
void set_python_requires(latency_settings &l, const key_value &v) {
  l.python_requires = v.get<glob_list>();
  for (const auto &m : l.python_requires)
    if (m.empty() || m.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                         "0123456789_.") != std::string::npos)
      v.fail(in_quotes(m) + " is no Python module name (e.g. \"numba\", \"cuda.bindings\")");
}

/// Variables the Python probe process gets besides the cell's ({bin}, {matrix_dir} substituted).
void set_python_environment(latency_settings &l, const key_value &v) {
  l.python_environment = environment_table(v, {});
}

/// Thresholds are looked up by a probe's exact name: a glob or an unknown name would never apply.
/// A `probe = number` table's keys each name one probe (`what`: "a threshold", "a time").
std::map<std::string, double> per_probe(const key_value &v, const std::string &what) {
  const toml_reader &r = v.context().reader;
  for (const auto &[k, value] : *v.node().as_table()) {
    const std::string name(k.str());
    if (name.find_first_of("*?[") != std::string::npos)
      r.error(k, v.key() + ": " + in_quotes(name) + " is a glob; " + what + " names one probe");
    if (!is_python_probe(name) && !v.context().known_probe(name))
      r.error(k, v.key() + ": " + in_quotes(name) + " names no probe" + std::string(see_probes));
  }
  return v.get<std::map<std::string, double>>();
}

void set_thresholds(latency_settings &l, const key_value &v) {
  l.thresholds = per_probe(v, "a threshold");
}

void set_min_times(latency_settings &l, const key_value &v) {
  l.min_times = per_probe(v, "a time");
}

void set_processes(latency_settings &l, const key_value &v) {
  l.persistent = v.get<std::string>() == "persistent";
}

/// A suite's name starts its case ids and names its folders: one safe component without '.'.
void set_suite_name(external_suite &x, const key_value &v) {
  x.name = v.get<std::string>();
  if (auto why = unsafe_component(x.name, limits::name_max_bytes))
    v.fail(in_quotes(x.name) + " " + *why + " (the name is a folder of the results)");
  if (x.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-") != std::string::npos)
    v.fail(in_quotes(x.name) + ": use lowercase letters, digits, '_' and '-' (it starts the case "
                               "ids, whose parts '.' separates)");
  if (v.context().known_case(x.name + ".*"))
    v.fail(in_quotes(x.name) + " is a suite of cuparity's own cases" + std::string(see_list));
}

void set_suite_command(external_suite &x, const key_value &v) {
  if (!v.node().is_array())
    v.fail("must be an array of strings: the program, then its arguments (no shell)");
  for (const auto &arg : v.get<glob_list>())
    x.command.push_back(run_time_text(v, arg, "{junit}"));
  if (x.command.empty() || x.command.front().empty())
    v.fail("names no program");
}

void set_suite_junit(external_suite &x, const key_value &v) {
  x.junit = run_time_text(v, v.get<std::string>(), "{junit}");
  if (x.junit.empty())
    v.fail("is empty");
}

/// Checked against the matrix's variables once the cells exist (suites.cpp).
void set_suite_environment(external_suite &x, const key_value &v) {
  x.environment = environment_table(v, {"{out}", "{junit}"});
}

/// A program writes no JUnit file: {junit} would name a file nobody reads.
void set_program_command(external_suite &x, const key_value &v) {
  set_suite_command(x, v);
  for (const auto &arg : x.command)
    if (arg.find("{junit}") != std::string::npos)
      v.fail("{junit} is a suite's JUnit file; a program has none (its exit status is the result)");
}

/// An exit status as a shell reports it: 0 to 255.
void set_skip_exit_code(external_suite &x, const key_value &v) {
  x.skip_exit_code = v.get<int>();
  if (*x.skip_exit_code == x.exit_code)
    v.fail("is the exit status that is a pass (program.exit_code)");
}

void set_suite_flakes(external_suite &x, const key_value &v) {
  x.flakes_path = file_path(v);
  if (x.name.empty())
    v.fail("needs the suite's name first");
  x.flakes = read_flakes(*x.flakes_path, x.name);
}

} // namespace

const key_table<document_sections> &document_keys() {
  using d = document_sections;
  static const key_table<d> keys{
      "the matrix file",
      "",
      {
          {"matrix", table(), assign<&d::settings>,
           "the matrix's name, description, cases, per-case watchdog and baseline"},
          {"axes", table(), assign<&d::axes>,
           "VARIABLE = [values]: the cells are their cartesian product, first axis slowest"},
          {"include", tables(), assign<&d::include>,
           "variables (and a label) extending compatible cells or adding one, after exclude"},
          {"exclude", tables(), assign<&d::exclude>,
           "axis variables: drops every cell of the product that has all of them"},
          {"expect", tables(), assign<&d::expect>,
           "what the cells a rule matches must report, and the outcomes they may have"},
          {"latency", table(), assign<&d::latency>,
           "the latency phase: probes, rounds and regression thresholds"},
          {"suite", tables(), assign<&d::suite>,
           "another project's pytest suite, run in every cell instead of the built-in cases"},
          {"packages", table(), assign<&d::packages>,
           "how the values of the `packages` axis are installed: wheel folders, index, installer"},
          {"program", tables(), assign<&d::program>,
           "a plain command (no JUnit) run in every cell: its exit status and captured map"},
          {"benchmark", tables(), assign<&d::benchmark>,
           "a package's pytest-benchmark suite or pyperf script, timed in every cell"},
      }};
  return keys;
}

const key_table<matrix> &matrix_keys() {
  using m = matrix;
  static const key_table<m> keys{
      "[matrix]",
      "matrix",
      {
          {"name", text(), set_name,
           "the matrix's name and its results' folder (default: the file's stem)"},
          {"description", text(), assign<&m::description>, "one line for reports"},
          {"cases", texts(), set_cases, "case globs or suites to run (default: every case)"},
          {"exclude_cases", texts(), set_exclude_cases, "case globs or suites left out"},
          {"case_timeout_s", number_in(limits::case_timeout_min_s, limits::case_timeout_max_s),
           set_case_timeout,
           "per-case watchdog for every case, in seconds (default: each case's own)"},
          {"baseline", text(), set_baseline,
           "baseline file (case,cell,outcome lines), relative to the matrix's folder"},
          {"reference", table(), set_reference,
           "VARIABLE = value (false = unset): each cell is compared with the cell that has these "
           "values and all its other variables"},
          {"fail_on_change", flag(), assign<&m::fail_on_change>,
           "a change against the reference fails the run (default: it is reported only)"},
          {"inert", table(), set_inert,
           "VARIABLE = \"reason\": variables known to change nothing the run records (the "
           "no-op rule lets them be)"},
          {"known_changes", text(), set_known_changes,
           "file of [[change]] tables: changes against the reference that are known, and why "
           "(relative to the matrix's folder)"},
      }};
  return keys;
}

const key_table<rule> &include_keys() {
  static const key_table<rule> keys{
      "[[include]]",
      "include",
      {
          {"label", text(), set_include_label, "the cell's id, instead of its variables"},
      }};
  return keys;
}

const key_table<expectation> &expect_keys() {
  using x = expectation;
  static const key_table<x> keys{
      "[[expect]]",
      "expect",
      {
          {"when", table(), set_when,
           "VARIABLE = value: the cells it applies to (partial match; false = unset)"},
          {"label", text(), set_expect_label, "or the label of the cells it applies to"},
          {"binding", choice({"internal", "nvidia"}), assign<&x::binding>,
           "the binding the cell's processes must report"},
          {"stream0", choice({"legacy", "per-thread"}), assign<&x::stream0>,
           "the null-stream mode they must report"},
          {"fallback", flag(), assign<&x::fallback>, "whether they must report a fallback"},
          {"warnings", texts(), assign<&x::warnings>,
           "substrings that must each appear in some warning"},
          {"warning_count", integer_in(0, limits::warning_count_max), assign<&x::warning_count>,
           "the number of warnings they must report"},
          {"allow", tables(), set_allow,
           "[[expect.allow]]: outcomes some cases may have in these cells"},
      }};
  return keys;
}

const key_table<allowance> &allow_keys() {
  using a = allowance;
  static const key_table<a> keys{
      "[[expect.allow]]",
      "allow",
      {
          {"cases", texts().needed(), set_allowed_cases, "case globs or suites it covers"},
          {"outcomes", texts().needed(), set_outcomes,
           "the outcomes tolerated: pass fail not_supported resource_error crash timeout error "
           "flaky"},
          {"reason", text().needed(), assign<&a::reason>, "why (the known failure)"},
          {"link", text(), assign<&a::link>, "where it is tracked"},
      }};
  return keys;
}

const key_table<latency_settings> &latency_keys() {
  using l = latency_settings;
  static const key_table<l> keys{
      "[latency]",
      "latency",
      {
          {"enabled", flag(), assign<&l::enabled>,
           "whether the latency phase runs (default: true once [latency] is written)"},
          {"probes", texts(), set_probes, "probe globs to run (default: every probe)"},
          {"rounds", integer_in(1, limits::rounds_max), set_rounds,
           "rounds per probe and cell, at least"},
          {"max_rounds", integer_in(1, limits::rounds_max), set_max_rounds,
           "rounds at most (>= rounds) while a comparison is still ambiguous (default: 15)"},
          {"budget_s", number_above(0, limits::duration_max_s), assign<&l::budget_s>,
           "seconds of the phase after which no further round starts (default: no limit)"},
          {"min_time_s", number_in(limits::min_time_min_s, limits::min_time_max_s),
           assign<&l::min_time_s>, "seconds each series of each probe runs per round"},
          {"block_time_s", number_in(limits::block_time_min_s, limits::block_time_max_s),
           assign<&l::block_time_s>,
           "seconds per block; a probe's series alternate block by block (default: 0.00025)"},
          {"target_cv", number_above(0, limits::fraction_max), assign<&l::target_cv>,
           "series whose robust coefficient of variation is above this are listed as noisy"},
          {"regression_threshold", number_above(0, limits::fraction_max),
           assign<&l::regression_threshold>,
           "across processes, a change beyond this fraction counts (default: 0.05)"},
          {"paired_threshold", number_above(0, limits::fraction_max), assign<&l::paired_threshold>,
           "between series paired in one process, a change beyond this fraction counts "
           "(default: 0.01)"},
          {"fail_on_regression", flag(), assign<&l::fail_on_regression>,
           "whether a regression fails the run"},
          {"thresholds", numbers_above(0, limits::fraction_max), set_thresholds,
           "probe = fraction: regression_threshold for that probe"},
          {"min_times", numbers_in(limits::min_time_min_s, limits::min_time_max_s), set_min_times,
           "probe = seconds: min_time_s for that probe (over --latency-min-time too)"},
          {"processes", choice({"per_round", "persistent"}), set_processes,
           "a fresh probe process per cell per round, or one per cell for the whole phase"},
          {"python", flag(), assign<&l::python>,
           "whether a Python probe process (the py.* probes) runs beside the C++ one in every "
           "cell (default: false)"},
          {"python_interpreter", text(), set_python_interpreter,
           "the Python probe process's interpreter (default: python3)"},
          {"python_requires", texts(), set_python_requires,
           "Python modules that must import in every cell, else that cell's latency error"},
          {"python_environment", table(), set_python_environment,
           "VARIABLE = value: set for the Python probe process besides the cell's variables"},
      }};
  return keys;
}

const key_table<external_suite> &suite_keys() {
  using x = external_suite;
  static const key_table<x> keys{
      "[[suite]]",
      "suite",
      {
          {"name", text().needed(), set_suite_name,
           "the suite's name: its case ids are <name>.<classname>.<test>"},
          {"command", texts().needed(), set_suite_command,
           "the program and its arguments; {out}: the process's folder, {junit}: its JUnit file"},
          {"junit", text(), set_suite_junit,
           "where the command writes its JUnit XML (default: {out}/junit.xml)"},
          {"environment", table(), set_suite_environment,
           "VARIABLE = value: set for the suite's processes besides the cell's variables"},
          {"root", text(), set_suite_root,
           "the project's source checkout its processes start in (conftest.py, pytest.ini); "
           "{env:NAME}: a variable of cuparity's environment (--suite-root NAME=DIR overrides)"},
          {"timeout_s", number_in(1, limits::duration_max_s), assign<&x::timeout_s>,
           "seconds one process of the suite may run (default: 1800)"},
          {"jobs", integer_in(1, limits::jobs_max), assign<&x::jobs>,
           "processes the suite runs on its own: -j / jobs cells run at once (default: 1)"},
          {"retries", integer_in(0, 10), assign<&x::retries>,
           "batches re-running together, in a fresh process, the tests that did not pass, while "
           "their outcome stays the same (default: 2)"},
          {"rerun_alone", integer_in(0, 1000), assign<&x::rerun_alone>,
           "then this many tests that failed alike in every batch run once alone, each in its own "
           "process (default: 2)"},
          {"environment_after", integer_in(0, 10000), assign<&x::environment_after>,
           "a process stops once this many tests failed with one message and none passed: a "
           "broken environment (default: 25; 0: never)"},
          {"max_fails", integer_in(1, 10000), assign<&x::max_fails>,
           "failed tests after which the suite stops in a cell: no further process (default: "
           "none)"},
          {"flakes", text(), set_suite_flakes,
           "file of `<glob> <reason>` lines: tests excused for changing outcome between tries"},
      }};
  return keys;
}

const key_table<external_suite> &program_keys() {
  using x = external_suite;
  static const key_table<x> keys{
      "[[program]]",
      "program",
      {
          {"name", text().needed(), set_suite_name,
           "the program's name: its one case id, and its folder in the results"},
          {"command", texts().needed(), set_program_command,
           "the program and its arguments (no shell); {out}: the process's folder"},
          {"environment", table(), set_suite_environment,
           "VARIABLE = value: set for the program besides the cell's variables"},
          {"timeout_s", number_in(1, limits::duration_max_s), assign<&x::timeout_s>,
           "seconds the program may run (default: 1800); then it is killed, a timeout"},
          {"retries", integer_in(0, 10), assign<&x::retries>,
           "runs after the first of a program that did not pass, each in a fresh process; an "
           "outcome that changes is flaky (default: 0)"},
          {"exit_code", integer_in(0, 255), assign<&x::exit_code>,
           "the exit status that is a pass (default: 0)"},
          {"skip_exit_code", integer_in(0, 255), set_skip_exit_code,
           "the exit status that means it cannot run here (a package missing): not_supported, "
           "with its last line as the reason (default: none)"},
      }};
  return keys;
}

} // namespace matrix_detail

const std::vector<matrix_section_doc> &matrix_key_docs() {
  using namespace matrix_detail;
  static const std::vector<matrix_section_doc> docs{
      doc_of(document_keys()), doc_of(matrix_keys()),  doc_of(include_keys()),
      doc_of(expect_keys()),   doc_of(allow_keys()),   doc_of(latency_keys()),
      doc_of(suite_keys()),    doc_of(program_keys()), doc_of(package_keys()),
      doc_of(benchmark_keys())};
  return docs;
}

} // namespace cuparity
