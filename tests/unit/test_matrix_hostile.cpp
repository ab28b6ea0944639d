// Hostile matrix input: every value is checked, and bad input names file:line:column.
#include "harness/matrix/limits.hpp"
#include "harness/matrix/matrix.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

using namespace cuparity;
namespace fs = std::filesystem;

namespace {

fs::path hostile_dir() {
  // One folder per process: test runs of other checkouts on this machine write theirs.
  auto dir = fs::temp_directory_path() / ("cuparity-matrix-hostile-" + std::to_string(getpid()));
  fs::create_directories(dir);
  return dir;
}

std::string write_matrix(const std::string &name, const std::string &text) {
  auto path = (hostile_dir() / (name + ".toml")).string();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

bool any_case(const std::string &glob) {
  return glob != "nope.*";
}

bool some_probes(const std::string &glob) {
  return glob == "launch.*" || glob == "launch.empty_kernel" || glob == "cell.startup";
}

/// The file's path and the error loading it raises (empty when it loads).
struct loaded {
  std::string path, error;
};

loaded load_error(const std::string &name, const std::string &text) {
  loaded out{write_matrix(name, text), {}};
  try {
    (void)load_matrix(out.path, any_case, some_probes);
  } catch (const matrix_error &e) {
    out.error = e.what();
  }
  return out;
}

/// Loads `text`, which must be valid.
matrix load_ok(const std::string &name, const std::string &text) {
  return load_matrix(write_matrix(name, text), any_case, some_probes);
}

/// Whether loading `text` fails at `where` ("3:5") with a message holding `what`.
void check_refused(const std::string &name, const std::string &text, const std::string &where,
                   const std::string &what) {
  const loaded l = load_error(name, text);
  INFO(text);
  CHECK_THAT(l.error, Catch::StartsWith(l.path + ":" + where + ": ") && Catch::Contains(what));
}

const std::string one_cell = "[axes]\nA = [\"0\"]\n";

} // namespace

TEST_CASE("hostile: durations must be finite, positive and at most their bound",
          "[matrix][hostile]") {
  for (const char *v : {"1e10", "1e300", "inf", "nan", "-1", "0", "86400.5"})
    check_refused("timeout", one_cell + "[matrix]\ncase_timeout_s = " + v + "\n", "4:18",
                  "matrix.case_timeout_s: must be");
  CHECK(load_ok("timeout_day", one_cell + "[matrix]\ncase_timeout_s = 86400\n").case_timeout ==
        std::chrono::milliseconds(86400000));
  for (const char *key : {"budget_s", "min_time_s"})
    for (const char *v : {"1e10", "inf", "nan", "0", "-0.5"}) {
      INFO(key << " = " << v);
      check_refused("duration", one_cell + "[latency]\n" + key + " = " + v + "\n",
                    "4:" + std::to_string(std::string(key).size() + 4),
                    std::string("latency.") + key + ": must be");
    }
  check_refused("min_time_tiny", one_cell + "[latency]\nmin_time_s = 1e-9\n", "4:14",
                "latency.min_time_s: must be at least 0.001, not 1e-09");
  check_refused("min_time_hour", one_cell + "[latency]\nmin_time_s = 3601\n", "4:14",
                "latency.min_time_s: must be at most 3600, not 3601");
  check_refused("budget_day", one_cell + "[latency]\nbudget_s = 86401\n", "4:12",
                "latency.budget_s: must be at most 86400, not 86401");
}

TEST_CASE("hostile: fractions (thresholds, target_cv) are > 0 and at most 10",
          "[matrix][hostile]") {
  for (const char *key : {"regression_threshold", "paired_threshold", "target_cv"})
    for (const char *v : {"0", "11", "1e300", "nan", "inf"}) {
      INFO(key << " = " << v);
      check_refused("fraction", one_cell + "[latency]\n" + key + " = " + v + "\n",
                    "4:" + std::to_string(std::string(key).size() + 4),
                    std::string("latency.") + key + ": must be");
    }
  check_refused("threshold_big",
                one_cell + "[latency]\nthresholds = { \"launch.empty_kernel\" = 1e9 }\n", "4:40",
                "latency.thresholds.launch.empty_kernel: must be at most 10, not 1e+09");
}

TEST_CASE("hostile: integer keys take integral values within bounds only", "[matrix][hostile]") {
  check_refused("count_huge", one_cell + "[[expect]]\nwarning_count = 1e30\n", "4:17",
                "expect.warning_count: must be at most 10000, not 1e+30");
  check_refused("count_frac", one_cell + "[[expect]]\nwarning_count = 2.5\n", "4:17",
                "expect.warning_count: must be a whole number, not 2.5");
  check_refused("count_big_int", one_cell + "[[expect]]\nwarning_count = 10001\n", "4:17",
                "must be at most 10000, not 10001");
  check_refused("rounds_huge", one_cell + "[latency]\nrounds = 1e20\n", "4:10",
                "latency.rounds: must be at most 10000, not 1e+20");
  check_refused("rounds_half", one_cell + "[latency]\nrounds = 0.5\n", "4:10",
                "latency.rounds: must be a whole number, not 0.5");
  check_refused("max_rounds_huge", one_cell + "[latency]\nmax_rounds = 9223372036854775807\n",
                "4:14", "latency.max_rounds: must be at most 10000");
  CHECK(load_ok("rounds_most", one_cell + "[latency]\nrounds = 10000\n").latency.max_rounds ==
        10000);
}

TEST_CASE("hostile: probe globs and threshold names must name a probe", "[matrix][hostile]") {
  check_refused("probe_unknown", one_cell + "[latency]\nprobes = [\"launch.*\", \"nope.*\"]\n",
                "4:10", "latency.probes: 'nope.*' names no probe (see `cuparity probe --list`)");
  CHECK(load_ok("probe_known", one_cell + "[latency]\nprobes = [\"launch.*\", \"cell.startup\"]\n")
            .latency.probes.size() == 2);
  check_refused("threshold_unknown", one_cell + "[latency]\nthresholds = { nope = 0.1 }\n", "4:16",
                "latency.thresholds: 'nope' names no probe");
  check_refused("threshold_glob", one_cell + "[latency]\nthresholds = { \"launch.*\" = 0.1 }\n",
                "4:16", "latency.thresholds: 'launch.*' is a glob; a threshold names one probe");
  check_refused("min_time_unknown", one_cell + "[latency]\nmin_times = { nope = 1 }\n", "4:15",
                "latency.min_times: 'nope' names no probe");
  check_refused("min_time_glob", one_cell + "[latency]\nmin_times = { \"ctx.*\" = 1 }\n", "4:15",
                "latency.min_times: 'ctx.*' is a glob; a time names one probe");
  check_refused("min_time_low", one_cell + "[latency]\nmin_times = { \"ctx.get_current\" = 0 }\n",
                "4:35", "latency.min_times.ctx.get_current: must be at least 0.001, not 0");
  // A caller without a probe registry takes every name.
  CHECK_NOTHROW(
      load_matrix(write_matrix("probe_any", one_cell + "[latency]\nprobes = \"x\"\n"), any_case));
}

TEST_CASE("hostile: an empty list where leaving the key out means every one is refused",
          "[matrix][hostile]") {
  check_refused("cases_empty", one_cell + "[matrix]\ncases = []\n", "4:9",
                "matrix.cases: is an empty list, which would select every case");
  check_refused("probes_empty", one_cell + "[latency]\nprobes = []\n", "4:10",
                "latency.probes: is an empty list, which would select every probe");
  const std::string allow = one_cell + "[[expect]]\n[[expect.allow]]\nreason = \"r\"\n";
  check_refused("allow_cases_empty", allow + "outcomes = \"fail\"\ncases = []\n", "7:9",
                "allow.cases: is an empty list, which covers no case");
  check_refused("allow_outcomes_empty", allow + "cases = \"x\"\noutcomes = []\n", "7:12",
                "allow.outcomes: is an empty list, which tolerates no outcome");
  // Excluding nothing is harmless.
  CHECK(load_ok("exclude_empty_list", one_cell + "[matrix]\nexclude_cases = []\n")
            .exclude_cases.empty());
}

TEST_CASE("hostile: NUL is refused in values, names, labels and every other string",
          "[matrix][hostile]") {
  check_refused("nul_value", "[axes]\nA = [\"0\\u00001\"]\n", "2:6",
                "value of A must not contain a NUL character: '0\\u00001'");
  check_refused("nul_include", one_cell + "[[include]]\nB = \"x\\u0000\"\n", "4:5",
                "value of B must not contain a NUL");
  check_refused("nul_name", one_cell + "[[include]]\n\"B\\u0000C\" = \"1\"\n", "4:1",
                "'B\\u0000C' is not an environment variable name");
  check_refused("nul_label", one_cell + "[[include]]\nA = \"1\"\nlabel = \"a\\u0000b\"\n", "5:9",
                "include.label must not contain a NUL");
  check_refused("nul_name_key", one_cell + "[matrix]\nname = \"a\\u0000\"\n", "4:8",
                "matrix.name must not contain a NUL");
  check_refused("nul_case", one_cell + "[matrix]\ncases = [\"binding\\u0000.*\"]\n", "4:10",
                "matrix.cases element must not contain a NUL");
  check_refused("nul_when", one_cell + "[[expect]]\nwhen = { A = \"0\\u0000\" }\n", "4:14",
                "must not contain a NUL");
}

TEST_CASE("hostile: labels are one printable line; ids made of values show controls escaped",
          "[matrix][hostile]") {
  for (const char *label : {"a\\nb", "a\\tb", "\\r", "a\\u007fb", "a\\u0085b"})
    check_refused("control_label", one_cell + "[[include]]\nA = \"1\"\nlabel = \"" + label + "\"\n",
                  "5:9", "include.label: '");
  check_refused("newline_label", one_cell + "[[include]]\nA = \"1\"\nlabel = \"a\\nb\"\n", "5:9",
                "include.label: 'a\\nb' holds a control character");
  check_refused("control_expect_label", one_cell + "[[expect]]\nlabel = \"x\\ny\"\n", "4:9",
                "expect.label: 'x\\ny' holds a control character");
  check_refused("empty_label", one_cell + "[[include]]\nA = \"1\"\nlabel = \"\"\n", "5:9",
                "include.label: is empty");
  // A value may hold whitespace controls (int() strips them; a matrix may test that).
  auto m =
      load_ok("control_value", "[axes]\nNUMBA_CUDA_USE_NVIDIA_BINDING = [\"\\t1\\n\", \"1\"]\n");
  REQUIRE(m.cells.size() == 2);
  CHECK(m.cells[0].env.at("NUMBA_CUDA_USE_NVIDIA_BINDING") == "\t1\n");
  CHECK(m.cells[0].id == "nv=\\t1\\n");
  for (const auto &c : m.cells)
    CHECK(c.id.find_first_of("\t\n\r") == std::string::npos);
}

TEST_CASE("hostile: a label cannot replace another label, nor name several cells",
          "[matrix][hostile]") {
  const std::string two = "[axes]\nA = [\"0\", \"1\"]\n";
  const loaded l = load_error("relabel", two + "[[include]]\nA = \"0\"\nlabel = \"x\"\n"
                                               "[[include]]\nA = \"0\"\nlabel = \"y\"\n");
  CHECK_THAT(l.error, Catch::StartsWith(l.path +
                                        ":6:1: this [[include]] labels 'y' the cell the "
                                        "[[include]] at " +
                                        l.path + ":3:1 labelled 'x'"));
  // The same twice on a cell an include added.
  const loaded added = load_error("relabel_added", two + "[[include]]\nA = \"2\"\nlabel = \"x\"\n"
                                                         "[[include]]\nA = \"2\"\nlabel = \"y\"\n");
  CHECK_THAT(added.error, Catch::StartsWith(added.path + ":6:1:") && Catch::Contains(":3:1"));
  // The same label again loses nothing.
  CHECK(load_ok("relabel_same", two + "[[include]]\nA = \"0\"\nlabel = \"x\"\n"
                                      "[[include]]\nA = \"0\"\nlabel = \"x\"\n")
            .cells.size() == 2);
  const std::string four = two + "B = [\"0\", \"1\"]\n";
  check_refused("label_many", four + "[[include]]\nA = \"0\"\nlabel = \"x\"\n", "4:1",
                "this [[include]] labels several cells 'x'");
  const loaded clash = load_error("label_clash", two + "[[include]]\nA = \"1\"\nlabel = \"A=0\"\n");
  CHECK_THAT(clash.error, Catch::StartsWith(clash.path +
                                            ":3:1: two cells have the id 'A=0' (the "
                                            "other from " +
                                            clash.path + ":1:1"));
}

TEST_CASE("hostile: a matrix name is one safe path component", "[matrix][hostile]") {
  for (const char *name : {"../../x", "a/b", "/", "..", ".", "", "a\\nb"})
    check_refused("bad_name", one_cell + "[matrix]\nname = \"" + name + "\"\n", "4:8",
                  "matrix.name: ");
  check_refused("long_name", one_cell + "[matrix]\nname = \"" + std::string(201, 'n') + "\"\n",
                "4:8", "(201 bytes) is longer than 200 bytes");
  CHECK(load_ok("fine_name", one_cell + "[matrix]\nname = \"a..b-c_d.e\"\n").name == "a..b-c_d.e");
  // The stem is the name when [matrix] has none: "...toml" would name the folder "..".
  const loaded stem = load_error("..", one_cell);
  CHECK_THAT(stem.error, Catch::StartsWith(stem.path + ":1:1: the matrix's name '..', taken from "
                                                       "its file name, names a folder"));
  CHECK(load_ok("..", one_cell + "[matrix]\nname = \"dots\"\n").name == "dots");
}

TEST_CASE("hostile: a baseline that is a folder, a device or a dangling link is refused",
          "[matrix][hostile]") {
  check_refused("baseline_folder", one_cell + "[matrix]\nbaseline = \"/etc\"\n", "4:12",
                "matrix.baseline: /etc is a folder, not a baseline file");
  check_refused("baseline_device", one_cell + "[matrix]\nbaseline = \"/dev/zero\"\n", "4:12",
                "/dev/zero is not a regular file");
  const fs::path link = hostile_dir() / "dangling-baseline.txt";
  fs::remove(link);
  fs::create_symlink(hostile_dir() / "no-such-target", link);
  check_refused("baseline_dangling",
                one_cell + "[matrix]\nbaseline = \"{matrix_dir}/dangling-baseline.txt\"\n", "4:12",
                "is a dangling link");
  check_refused("baseline_placeholder", one_cell + "[matrix]\nbaseline = \"{nope}/b.txt\"\n",
                "4:12", "unknown placeholder {nope}");
  check_refused("baseline_empty", one_cell + "[matrix]\nbaseline = \"\"\n", "4:12",
                "matrix.baseline: is empty");
  // Not there yet is the run's to say (--write-baseline creates it); /dev/null is empty.
  CHECK(load_ok("baseline_absent", one_cell + "[matrix]\nbaseline = \"absent.txt\"\n").baseline);
  CHECK(load_ok("baseline_null", one_cell + "[matrix]\nbaseline = \"/dev/null\"\n").baseline ==
        "/dev/null");
}

namespace {

/// An axis `var` of `n` distinct integer values.
std::string axis_of(const std::string &var, int n) {
  std::string out = var + " = [";
  for (int i = 0; i < n; ++i)
    out += (i ? ", " : "") + std::to_string(i);
  return out + "]\n";
}

} // namespace

TEST_CASE("hostile: the cells of a matrix are bounded before they are expanded",
          "[matrix][hostile]") {
  // 10^9 cells: refused at once, naming each axis' size (expanding would take gigabytes).
  const auto start = std::chrono::steady_clock::now();
  check_refused("cells_1e9",
                "[axes]\n" + axis_of("A", 1000) + axis_of("B", 1000) + axis_of("C", 1000), "1:1",
                "the axes make 1000000000 cells (A 1000 x B 1000 x C 1000 values); the most is "
                "10000");
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  // Beyond 2^64: no overflow.
  std::string huge = "[axes]\n";
  for (int i = 0; i < 7; ++i)
    huge += axis_of("V" + std::to_string(i), 1000);
  check_refused("cells_overflow", huge, "1:1", "the axes make more than 2^64 cells");
  check_refused("cells_1e6", "[axes]\n" + axis_of("A", 1000) + axis_of("B", 1000), "1:1",
                "1000000 cells");
  check_refused("cells_10001", "[axes]\n" + axis_of("A", 10001), "1:1", "10001 cells");
  CHECK(load_ok("cells_10000", "[axes]\n" + axis_of("A", 100) + axis_of("B", 100)).cells.size() ==
        limits::cells_max);
  // Includes cannot add a cell beyond the bound either.
  check_refused("cells_include",
                "[axes]\n" + axis_of("A", 100) + axis_of("B", 100) + "[[include]]\nA = \"x\"\n",
                "4:1", "this [[include]] adds a cell beyond the most a matrix may have (10000)");
}

TEST_CASE("hostile: variables, rules and values are bounded", "[matrix][hostile]") {
  const std::string big(limits::value_max_bytes + 1, 'v');
  check_refused("value_big", "[axes]\nA = [\"" + big + "\"]\n", "2:6",
                "value of A is 65537 bytes long; the most is 65536");
  CHECK(
      load_ok("value_most", "[axes]\nA = [\"" + std::string(limits::value_max_bytes, 'v') + "\"]\n")
          .cells.size() == 1);
  // Five values of 60 KiB: each fine, together too much for an environment.
  std::string five = "[[include]]\n";
  for (int i = 0; i < 5; ++i)
    five += "V" + std::to_string(i) + " = \"" + std::string(60 * 1024, 'x') + "\"\n";
  check_refused("env_big", five, "1:1", "bytes of environment; the most is 262144");
  std::string many = "[axes]\n";
  for (std::size_t i = 0; i <= limits::variables_max; ++i)
    many += "V" + std::to_string(i) + " = [\"1\"]\n";
  check_refused("axes_many", many, "1:1", "[axes] has 65 axes; a matrix controls at most 64");
  std::string wide = one_cell + "[[include]]\n";
  for (std::size_t i = 0; i < limits::variables_max; ++i)
    wide += "V" + std::to_string(i) + " = \"1\"\n";
  check_refused("include_wide", wide, "3:1", "variable number 65 of the matrix; the most is 64");
  std::string rules = "[axes]\nA = [\"0\", \"1\"]\n";
  for (std::size_t i = 0; i <= limits::rules_max; ++i)
    rules += "[[expect]]\n";
  check_refused("rules_many", rules, std::to_string(3 + limits::rules_max) + ":1",
                "this is [[expect]] rule number 1001; the most is 1000");
}

TEST_CASE("hostile: placeholders must be known ones", "[matrix][hostile]") {
  check_refused("placeholder", "[axes]\nA = [\"{nope}/x\"]\n", "2:6",
                "value of A: unknown placeholder {nope} (known: {bin}, {matrix_dir}");
  check_refused("placeholder_shell", "[axes]\nA = [\"${HOME}/x\"]\n", "2:6",
                "unknown placeholder {HOME}");
  check_refused("placeholder_typo", "[axes]\nA = [\"{matrix-dir}/x\"]\n", "2:6",
                "unknown placeholder {matrix-dir}");
  auto m = load_ok("placeholder_kept", "[axes]\nA = [\"{}\", \"{ x }\", \"{\", \"}{\"]\n");
  CHECK(m.cells[0].env.at("A") == "{}");
  CHECK(m.cells[1].env.at("A") == "{ x }");
}

TEST_CASE("hostile: a very long label or value makes a very long id, and nothing more",
          "[matrix][hostile]") {
  const std::string label(5000, 'L');
  auto m = load_ok("long_label", one_cell + "[[include]]\nA = \"1\"\nlabel = \"" + label + "\"\n");
  CHECK(m.cells.at(1).id == label);
  auto v = load_ok("long_value", "[axes]\nA = [\"" + std::string(60000, 'x') + "\"]\n");
  CHECK(v.cells.at(0).id.size() == 60002);
}

TEST_CASE("hostile: messages show a quoted string escaped and cut", "[matrix][hostile]") {
  const loaded l = load_error("long_unknown", one_cell + "[latency]\nprobes = \"" +
                                                  std::string(500, 'q') + "\\n\"\n");
  CHECK_THAT(l.error, Catch::Contains("latency.probes: '" + std::string(80, 'q') +
                                      "...' (501 bytes) names no probe"));
  CHECK(l.error.size() < 400);
}

TEST_CASE("docs/configuration.md states every bound the key tables enforce", "[matrix][hostile]") {
  std::ifstream in(std::string(CUPARITY_SOURCE_DIR) + "/docs/configuration.md");
  std::stringstream text;
  text << in.rdbuf();
  std::vector<std::string> lines;
  for (std::string line; std::getline(text, line);)
    lines.push_back(line);
  for (const auto &s : matrix_key_docs())
    for (const auto &k : s.keys) {
      if (k.bounds.empty())
        continue;
      const std::string key = "`" + s.key_prefix + "." + k.name + "`";
      INFO(key << ": " << k.type << ", " << k.bounds);
      CHECK(std::any_of(lines.begin(), lines.end(), [&](const std::string &l) {
        return l.rfind("| " + key, 0) == 0 && l.find("| " + k.type + " | " + k.bounds) != l.npos;
      }));
    }
}
