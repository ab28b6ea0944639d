// Matrix files: expansion (axes, exclude, include), expectations, and errors with line:column.
#include "harness/matrix/matrix.hpp"

#include <catch2/catch.hpp>
#include <charconv>
#include <climits>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

using namespace cuparity;

namespace {

std::string write_matrix(const std::string &name, const std::string &text) {
  auto dir = std::filesystem::temp_directory_path() / "cuparity-matrix-tests";
  std::filesystem::create_directories(dir);
  auto path = (dir / (name + ".toml")).string();
  std::ofstream(path) << text;
  return path;
}

bool any_case(const std::string &glob) {
  return glob != "nope.*" && glob != "nope.no.case";
}

matrix load(const std::string &name, const std::string &text) {
  return load_matrix(write_matrix(name, text), any_case);
}

std::vector<std::string> ids(const matrix &m) {
  std::vector<std::string> out;
  for (const auto &c : m.cells)
    out.push_back(c.id);
  return out;
}

/// The message of the matrix_error `text` raises (empty if none).
std::string error_of(const std::string &name, const std::string &text) {
  try {
    (void)load(name, text);
  } catch (const matrix_error &e) {
    return e.what();
  }
  return {};
}

} // namespace

TEST_CASE("axes form the cartesian product, first axis slowest; false means unset", "[matrix]") {
  auto m = load("product", R"(
[axes]
NUMBA_CUDA_USE_NVIDIA_BINDING = ["0", "1"]
CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM = [false, 1]
)");
  REQUIRE(m.cells.size() == 4);
  CHECK(ids(m) == std::vector<std::string>{"nv=0,cp_ptds=-", "nv=0,cp_ptds=1", "nv=1,cp_ptds=-",
                                           "nv=1,cp_ptds=1"});
  CHECK_FALSE(m.cells[0].env.at("CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM").has_value());
  CHECK(m.cells[1].env.at("CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM") == "1"); // int -> "1"
  CHECK(m.variables == std::vector<std::string>{"NUMBA_CUDA_USE_NVIDIA_BINDING",
                                                "CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM"});
}

TEST_CASE("exclude drops every cell matching all its keys (partial match)", "[matrix]") {
  auto m = load("exclude", R"(
[axes]
A = ["0", "1"]
B = ["0", "1"]
C = ["x", "y"]
[[exclude]]
A = "1"
B = "0"
)");
  CHECK(m.cells.size() == 6);
  for (const auto &c : m.cells)
    CHECK_FALSE((c.env.at("A") == "1" && c.env.at("B") == "0"));
}

TEST_CASE("include extends compatible cells, adds a new one otherwise, and is never excluded",
          "[matrix]") {
  auto m = load("include", R"(
[axes]
A = ["0", "1"]
B = ["0"]
[[exclude]]
A = "1"
[[include]]
A = "0"
EXTRA = "e"
[[include]]
A = "1"
label = "back"
[[include]]
A = "2"
B = "9"
)");
  // A=0 extended with EXTRA; A=1 re-added after the exclude (new cell, labelled); A=2 new.
  REQUIRE(m.cells.size() == 3);
  CHECK(m.cells[0].env.at("EXTRA") == "e");
  CHECK(m.cells[1].id == "back");
  CHECK(m.cells[1].env.at("A") == "1");
  CHECK_FALSE(m.cells[1].env.at("B").has_value()); // not named by the include: unset
  CHECK(m.cells[2].env.at("B") == "9");
  // Every cell names every matrix variable (so the runner can clean all of them).
  for (const auto &c : m.cells)
    CHECK(c.env.size() == 3);
}

TEST_CASE("an include that would overwrite an axis value makes a new cell", "[matrix]") {
  auto m = load("overwrite", R"(
[axes]
A = ["0"]
LIB = [false]
[[include]]
label = "fallback"
A = "0"
LIB = "/nonexistent.so"
)");
  REQUIRE(m.cells.size() == 2);
  CHECK_FALSE(m.cells[0].env.at("LIB").has_value());
  CHECK(m.cells[1].env.at("LIB") == "/nonexistent.so");
}

TEST_CASE("expectations attach to the cells they match", "[matrix]") {
  auto m = load("expect", R"(
[axes]
A = ["0", "1"]
[[expect]]
when = { A = "1" }
binding = "nvidia"
stream0 = "per-thread"
warnings = ["x"]
warning_count = 1
[[expect.allow]]
cases = ["stream.*"]
outcomes = ["fail", "timeout"]
reason = "known"
link = "https://example.invalid/1"
)");
  CHECK(m.cells[0].expectations.empty());
  REQUIRE(m.cells[1].expectations.size() == 1);
  const auto *x = m.cells[1].expectations[0];
  CHECK(x->binding == "nvidia");
  REQUIRE(x->allow.size() == 1);
  CHECK(x->allow[0].outcomes == std::vector<outcome>{outcome::fail, outcome::timeout});
}

TEST_CASE("placeholders {bin} and {matrix_dir} are substituted", "[matrix]") {
  auto m = load("placeholders", R"(
[axes]
P = ["{matrix_dir}/x", "{bin}/y"]
)");
  CHECK(m.cells[0].env.at("P")->find("cuparity-matrix-tests/x") != std::string::npos);
  CHECK(m.cells[1].env.at("P")->find("{bin}") == std::string::npos);
}

TEST_CASE("every matrix error names file, line and column", "[matrix][errors]") {
  struct bad {
    const char *name, *text, *where, *what;
  };
  const bad cases[] = {
      {"unknown_key", "[axes]\nA = [\"0\"]\n[matrix]\nnmae = \"x\"\n",
       ":4:1:", "unknown key 'nmae'"},
      {"wrong_type", "[axes]\nA = \"0\"\n", ":2:5:", "must be an array"},
      {"value_type", "[axes]\nA = [1.5]\n", ":2:6:", "must be a string, an integer or false"},
      {"empty_axis", "[axes]\nA = []\n", ":2:5:", "has no values"},
      {"empty_product", "[axes]\nA = [\"0\"]\n[[exclude]]\nA = \"0\"\n", ":1:1:", "no cells"},
      {"exclude_nothing", "[axes]\nA = [\"0\"]\nB = [\"0\", \"1\"]\n[[exclude]]\nA = \"7\"\n",
       ":4:1:", "matches no cell"},
      {"expect_nothing",
       "[axes]\nA = [\"0\"]\n[[expect]]\nwhen = { A = \"1\" }\nbinding = \"nvidia\"\n",
       ":3:1:", "matches no cell"},
      {"unknown_case",
       "[axes]\nA = [\"0\"]\n[[expect]]\n[[expect.allow]]\ncases = \"nope.no.case\"\n"
       "outcomes = [\"fail\"]\nreason = \"r\"\n",
       ":5:9:", "names no case"},
      {"bad_outcome",
       "[axes]\nA = [\"0\"]\n[[expect]]\n[[expect.allow]]\ncases = \"x\"\n"
       "outcomes = [\"broken\"]\nreason = \"r\"\n",
       ":6:12:", "unknown outcome 'broken'"},
      {"bad_binding", "[axes]\nA = [\"0\"]\n[[expect]]\nbinding = \"ctypes\"\n",
       ":4:11:", "\"internal\" or \"nvidia\""},
      {"bad_var", "[axes]\nlower = [\"0\"]\n", ":2:1:", "not an environment variable name"},
      {"syntax", "[axes]\nA = [\"0\"\n", ":2:", "parsing array"},
      {"duplicate_value", "[axes]\nA = [\"0\", \"0\"]\n", ":2:11:", "lists a value twice"},
  };
  for (const auto &b : cases) {
    INFO(b.name);
    std::string msg = error_of(b.name, b.text);
    CHECK_THAT(msg,
               Catch::Contains(std::string(b.name) + ".toml" + b.where) && Catch::Contains(b.what));
  }
  CHECK_THAT(error_of("missing", ""), Catch::Contains("no cells"));
  CHECK_THROWS_WITH(load_matrix("/nonexistent/m.toml", any_case), Catch::Contains("no such"));
}

TEST_CASE("the shipped matrices load", "[matrix]") {
  for (const char *name : {"default", "ptds", "smoke", "driver-validation", "latency"}) {
    INFO(name);
    auto m =
        load_matrix(std::string(CUPARITY_SOURCE_DIR) + "/matrices/" + name + ".toml", any_case);
    CHECK_FALSE(m.cells.empty());
  }
  auto d = load_matrix(std::string(CUPARITY_SOURCE_DIR) + "/matrices/default.toml", any_case);
  CHECK(d.cells.size() == 18); // 2 x 2 x 3 seed combinations + 3 fallback + 3 garbage cells
}

namespace {

/// Where a key of each section goes in a matrix that is otherwise valid: text before its line and
/// after it.
struct placement {
  std::string before, after;
};

const std::string two_cells = "[axes]\nA = [\"0\", \"1\"]\n";

placement place(const std::string &section, const std::string &key) {
  static const std::map<std::string, placement> places{
      {"[matrix]", {two_cells + "[matrix]\n", ""}},
      {"[[include]]", {two_cells + "[[include]]\nA = \"2\"\n", ""}},
      {"[[expect]]", {two_cells + "[[include]]\nA = \"1\"\nlabel = \"lab\"\n[[expect]]\n", ""}},
      {"[[expect.allow]]", {two_cells + "[[expect]]\n[[expect.allow]]\n", ""}},
      {"[latency]", {two_cells + "[latency]\n", ""}},
      {"[[suite]]", {two_cells + "[[suite]]\n", ""}},
      {"[[program]]", {two_cells + "[[program]]\n", ""}},
      {"[[benchmark]]", {two_cells + "[[benchmark]]\n", ""}},
      {"[packages]", {"[axes]\npackages = [\"a==1\", false]\n[packages]\n", ""}},
  };
  if (section == "[matrix]" && key == "known_changes") // changes against a reference
    return {two_cells + "[matrix]\nreference = { A = \"0\" }\n", ""};
  if (section == "the matrix file" && key == "packages") // [packages] needs the axis
    return {"", "[axes]\npackages = [\"a==1\", \"a==2\"]\n"};
  if (section == "the matrix file") // its keys come before any [section]
    return {"", key == "axes" ? "[[include]]\nB = \"1\"\n" : two_cells};
  auto it = places.find(section);
  return it == places.end() ? placement{} : it->second;
}

/// A valid value for every key of every table (a new row needs one here).
const std::map<std::string, std::map<std::string, std::string>> samples{
    {"the matrix file",
     {{"matrix", "{ name = \"n\" }"},
      {"axes", "{ A = [\"0\", \"1\"] }"},
      {"include", "[{ A = \"0\", B = \"x\" }]"},
      {"exclude", "[{ A = \"1\" }]"},
      {"expect", "[{ when = { A = \"0\" } }]"},
      {"latency", "{ rounds = 3 }"},
      {"packages", "{ installer = \"pip\" }"},
      {"suite", "[{ name = \"nope\", command = [\"x\"] }]"},
      {"program", "[{ name = \"nope\", command = [\"x\"] }]"},
      {"benchmark",
       "[{ name = \"b\", format = \"pyperf\", command = [\"x\", \"-o\", \"{json}\"] }]"}}},
    {"[packages]",
     {{"find_links", "[\"{matrix_dir}/wheels\"]"},
      {"index_url", "\"https://example.invalid/simple\""},
      {"installer", "\"uv\""},
      {"python", "\"python3\""},
      {"cache", "\"{matrix_dir}/cache\""},
      {"no_deps", "false"}}},
    {"[matrix]",
     {{"name", "\"n\""},
      {"description", "\"d\""},
      {"cases", "[\"a.*\"]"},
      {"exclude_cases", "\"b\""},
      {"case_timeout_s", "2.5"},
      {"baseline", "\"{matrix_dir}/b.txt\""},
      {"reference", "{ A = \"0\" }"},
      {"fail_on_change", "true"},
      {"inert", "{ A = \"only a label\" }"},
      {"known_changes", "\"/dev/null\""}}},
    {"[[include]]", {{"label", "\"lab\""}}},
    {"[[expect]]",
     {{"when", "{ A = \"1\" }"},
      {"label", "\"lab\""},
      {"binding", "\"nvidia\""},
      {"stream0", "\"per-thread\""},
      {"fallback", "true"},
      {"warnings", "[\"w\"]"},
      {"warning_count", "3"},
      {"allow", "[{ cases = \"x\", outcomes = \"fail\", reason = \"r\" }]"}}},
    {"[[expect.allow]]",
     {{"cases", "\"x\""},
      {"outcomes", "[\"fail\", \"timeout\"]"},
      {"reason", "\"r\""},
      {"link", "\"https://example.invalid/1\""}}},
    {"[latency]",
     {{"enabled", "false"},
      {"probes", "[\"stream.*\"]"},
      {"rounds", "3"},
      {"max_rounds", "7"},
      {"budget_s", "60"},
      {"min_time_s", "0.5"},
      {"block_time_s", "0.001"},
      {"target_cv", "0.1"},
      {"regression_threshold", "0.2"},
      {"paired_threshold", "0.02"},
      {"fail_on_regression", "true"},
      {"thresholds", "{ p = 0.5 }"},
      {"min_times", "{ p = 0.5 }"},
      {"processes", "\"persistent\""},
      {"python", "true"},
      {"python_interpreter", "\"{matrix_dir}/bin/python3\""},
      {"python_requires", "[\"numba\", \"cuda.bindings\"]"},
      {"python_environment", "{ PYTHONPATH = \"{matrix_dir}/site\" }"}}},
    {"[[suite]]",
     {{"name", "\"nope\""},
      {"command", "[\"x\", \"--junitxml={junit}\", \"{matrix_dir}/t\"]"},
      {"junit", "\"{out}/j.xml\""},
      {"environment", "{ PYTHONPATH = \"{matrix_dir}\" }"},
      {"root", "\"{matrix_dir}\""},
      {"timeout_s", "60"},
      {"jobs", "2"},
      {"retries", "1"},
      {"rerun_alone", "0"},
      {"environment_after", "10"},
      {"max_fails", "5"},
      {"flakes", "\"/dev/null\""}}},
    {"[[program]]",
     {{"name", "\"nope\""},
      {"command", "[\"x\", \"{out}/log\", \"{matrix_dir}/p.py\"]"},
      {"environment", "{ PYTHONPATH = \"{matrix_dir}\" }"},
      {"timeout_s", "60"},
      {"retries", "1"},
      {"exit_code", "3"},
      {"skip_exit_code", "77"}}},
    {"[[benchmark]]",
     {{"name", "\"b\""},
      {"format", "\"pytest-benchmark\""},
      {"command", "[\"x\", \"--benchmark-json={json}\", \"{out}/log\", \"{matrix_dir}/t\"]"},
      {"environment", "{ PYTHONPATH = \"{matrix_dir}\" }"},
      {"root", "\"{matrix_dir}\""},
      {"timeout_s", "60"},
      {"rounds", "5"},
      {"control", "true"}}},
};

/// A section's required keys, each with its sample, except `key`.
std::string required_lines(const matrix_section_doc &s, const std::string &key) {
  std::string out;
  for (const auto &k : s.keys)
    if (k.required && k.name != key)
      out += k.name + " = " + samples.at(s.name).at(k.name) + "\n";
  return out;
}

/// `section`'s `key` written as `key = value`, in an otherwise valid matrix.
std::string with_key(const matrix_section_doc &s, const std::string &key,
                     const std::string &value) {
  placement p = place(s.name, key);
  return p.before + required_lines(s, key) + key + " = " + value + "\n" + p.after;
}

int lines_before(const matrix_section_doc &s, const std::string &key) {
  placement p = place(s.name, key);
  const std::string text = p.before + required_lines(s, key);
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

std::string number_text(double d) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d);
  return std::string(buf, end);
}

/// Values an integer or number key must refuse, with what the message says.
std::vector<std::pair<std::string, std::string>> refused_values(const matrix_key_doc &k) {
  std::vector<std::pair<std::string, std::string>> out{{"inf", "must be a finite number, not inf"},
                                                       {"-inf", "must be a finite number"},
                                                       {"nan", "must be a finite number"}};
  const bool integer = k.type == "integer";
  if (integer) {
    out.push_back({"2.5", "must be a whole number, not 2.5"});
    out.push_back({"0.5", "must be a whole number, not 0.5"});
  }
  if (k.min && integer && *k.min > -9e18)
    out.push_back({std::to_string(static_cast<long long>(*k.min) - 1), "must be at least"});
  if (k.min && !integer && k.min_exclusive)
    out.push_back({number_text(*k.min), "must be greater than " + number_text(*k.min)});
  if (k.min && !integer && !k.min_exclusive)
    out.push_back({number_text(*k.min > 0 ? *k.min / 2 : *k.min - 1), "must be at least"});
  if (k.max && *k.max < 9e18)
    out.push_back(
        {integer ? std::to_string(static_cast<long long>(*k.max) + 1) : number_text(*k.max + 1),
         "must be at most " + number_text(*k.max)});
  return out;
}

} // namespace

TEST_CASE("every key of every key table is accepted with a valid value", "[matrix][keys]") {
  std::set<std::string> documented;
  for (const auto &s : matrix_key_docs()) {
    INFO(s.name);
    REQUIRE(samples.count(s.name) == 1);
    for (const auto &k : s.keys) {
      INFO(k.name);
      documented.insert(s.name + " " + k.name);
      CHECK_FALSE(k.doc.empty());
      CHECK_FALSE(k.type.empty());
      REQUIRE(samples.at(s.name).count(k.name) == 1);
      const std::string text = with_key(s, k.name, samples.at(s.name).at(k.name));
      INFO(text);
      CHECK(error_of("sample", text).empty());
    }
  }
  for (const auto &[section, keys] : samples)
    for (const auto &[key, value] : keys) {
      INFO(section << " " << key << ": a sample for a key no table has");
      CHECK(documented.count(section + " " + key) == 1);
    }
}

TEST_CASE("integer and number keys refuse fractions, inf, nan and out-of-range values at "
          "file:line:column",
          "[matrix][keys][errors]") {
  std::set<std::string> tested;
  for (const auto &s : matrix_key_docs())
    for (const auto &k : s.keys) {
      const bool table_of_numbers = k.type == "table of numbers";
      if (k.type != "integer" && k.type != "number" && !table_of_numbers)
        continue;
      INFO(s.name << " " << k.name);
      const std::string key = s.key_prefix + "." + k.name + (table_of_numbers ? ".p" : "");
      tested.insert(key);
      for (const auto &[value, what] : refused_values(k)) {
        INFO(value);
        const std::string written = table_of_numbers ? "{ p = " + value + " }" : value;
        const std::string path = write_matrix("bounds", with_key(s, k.name, written));
        const int column = static_cast<int>(k.name.size()) + 4 + (table_of_numbers ? 6 : 0);
        std::string msg;
        try {
          (void)load_matrix(path, any_case);
        } catch (const matrix_error &e) {
          msg = e.what();
        }
        const std::string where = path + ":" + std::to_string(lines_before(s, k.name) + 1) + ":" +
                                  std::to_string(column) + ": " + key + ": ";
        CHECK_THAT(msg, Catch::StartsWith(where) && Catch::Contains(what));
      }
    }
  for (const char *key :
       {"matrix.case_timeout_s", "expect.warning_count", "latency.rounds", "latency.max_rounds",
        "latency.min_time_s", "latency.target_cv", "latency.regression_threshold",
        "latency.paired_threshold", "latency.block_time_s", "latency.budget_s",
        "latency.thresholds.p", "latency.min_times.p"}) {
    INFO(key);
    CHECK(tested.count(key) == 1);
  }
}

TEST_CASE("the bounds the tables give", "[matrix][keys]") {
  std::map<std::string, std::string> bounds;
  for (const auto &s : matrix_key_docs())
    for (const auto &k : s.keys)
      bounds[s.key_prefix + "." + k.name] = k.bounds;
  CHECK(bounds.at("latency.rounds") == ">= 1, <= 10000");
  CHECK(bounds.at("latency.max_rounds") == ">= 1, <= 10000");
  CHECK(bounds.at("latency.min_time_s") == ">= 0.001, <= 3600");
  CHECK(bounds.at("latency.budget_s") == "> 0, <= 86400");
  CHECK(bounds.at("latency.thresholds") == "> 0, <= 10");
  CHECK(bounds.at("latency.min_times") == ">= 0.001, <= 3600");
  CHECK(bounds.at("latency.target_cv") == "> 0, <= 10");
  CHECK(bounds.at("matrix.case_timeout_s") == ">= 0.001, <= 86400");
  CHECK(bounds.at("expect.warning_count") == ">= 0, <= 10000");
  CHECK(bounds.at("matrix.name").empty());
}

TEST_CASE("whole floats are still taken for integer keys", "[matrix][keys]") {
  auto m = load("whole_floats", two_cells + "[[expect]]\nwarning_count = 2.0\n[latency]\n"
                                            "rounds = 4.0\nmax_rounds = 8.0\n");
  CHECK(m.expectations.at(0).warning_count == std::size_t{2});
  CHECK(m.latency.rounds == 4);
  CHECK(m.latency.max_rounds == 8);
}

TEST_CASE("max_rounds is at least rounds; rounds alone raises it", "[matrix][keys]") {
  CHECK(load("rounds_alone", two_cells + "[latency]\nrounds = 20\n").latency.max_rounds == 20);
  CHECK(load("rounds_low", two_cells + "[latency]\nrounds = 3\n").latency.max_rounds == 15);
  CHECK_THAT(error_of("max_below", two_cells + "[latency]\nrounds = 9\nmax_rounds = 3\n"),
             Catch::Contains("max_below.toml:5:14: latency.max_rounds: must be at least rounds "
                             "(9), not 3"));
  // Without rounds, the default (5) is the floor.
  CHECK_THAT(error_of("max_below_default", two_cells + "[latency]\nmax_rounds = 3\n"),
             Catch::Contains(":4:14: latency.max_rounds: must be at least rounds (5), not 3"));
}

TEST_CASE("every [matrix] and [latency] key reaches its field", "[matrix][keys]") {
  auto m = load("fields", two_cells + R"([matrix]
name = "n"
description = "d"
cases = ["a.*", "b"]
exclude_cases = "c"
case_timeout_s = 2.5
baseline = "{matrix_dir}/../b.txt"
[latency]
enabled = false
probes = ["stream.*"]
rounds = 3
max_rounds = 7
min_time_s = 1
target_cv = 0.5
regression_threshold = 2
paired_threshold = 1.5
block_time_s = 0.002
budget_s = 90
fail_on_regression = true
processes = "persistent"
thresholds = { a = 0.1, b = 3 }
min_times = { a = 2.5 }
)");
  CHECK(m.name == "n");
  CHECK(m.description == "d");
  CHECK(m.cases == std::vector<std::string>{"a.*", "b"});
  CHECK(m.exclude_cases == std::vector<std::string>{"c"});
  CHECK(m.case_timeout == std::chrono::milliseconds(2500));
  CHECK(m.baseline == (std::filesystem::temp_directory_path() / "b.txt").string());
  const auto &l = m.latency;
  CHECK_FALSE(l.enabled);
  CHECK(l.probes == std::vector<std::string>{"stream.*"});
  CHECK(l.rounds == 3);
  CHECK(l.max_rounds == 7);
  CHECK(l.min_time_s == 1);
  CHECK(l.target_cv == 0.5);
  CHECK(l.regression_threshold == 2);
  CHECK(l.paired_threshold == 1.5);
  CHECK(l.block_time_s == 0.002);
  CHECK(l.budget_s == 90);
  CHECK(l.fail_on_regression);
  CHECK(l.persistent);
  CHECK(l.thresholds == std::map<std::string, double>{{"a", 0.1}, {"b", 3}});
  CHECK(l.min_times == std::map<std::string, double>{{"a", 2.5}});
  CHECK(load("latency_on", two_cells + "[latency]\n").latency.enabled); // written = enabled
}

TEST_CASE("[latency] probes: each glob goes to the probe processes whose probes it selects",
          "[matrix][latency][python]") {
  const auto known = [](const std::string &g) { return g == "ctx.*" || g == "*.get_current"; };
  const auto read = [&](const std::string &name, const std::string &latency) {
    return load_matrix(write_matrix(name, two_cells + "[latency]\n" + latency), any_case, known);
  };
  const matrix m = read("py_split", "probes = [\"ctx.*\", \"py.launch.*\", \"*.get_current\"]\n"
                                    "min_times = { \"py.ctx.get_current\" = 0.5 }\n");
  CHECK(m.latency.native_probes == std::vector<std::string>{"ctx.*", "*.get_current"});
  CHECK(m.latency.python_probes == std::vector<std::string>{"py.launch.*", "*.get_current"});
  CHECK(m.latency.min_times.at("py.ctx.get_current") == 0.5);
  CHECK_FALSE(m.latency.python); // a py.* glob alone starts the Python process
  const matrix only = read("py_only", "probes = [\"py.*\"]\npython = true\n"
                                      "python_requires = [\"numba\"]\n");
  CHECK(only.latency.native_probes.empty());
  CHECK(only.latency.python_requires == std::vector<std::string>{"numba"});
  CHECK_THAT(error_of("py_unknown", two_cells + "[latency]\nprobes = [\"py.nope\"]\n"),
             Catch::Contains("'py.nope' names no probe"));
  CHECK_THAT(error_of("py_module", two_cells + "[latency]\npython_requires = [\"a b\"]\n"),
             Catch::Contains("is no Python module name"));
}

TEST_CASE("unknown keys list the table's keys", "[matrix][keys][errors]") {
  CHECK_THAT(error_of("unknown_latency", two_cells + "[latency]\nroudns = 3\n"),
             Catch::Contains(":4:1: unknown key 'roudns' in [latency] (known: enabled, probes, "
                             "rounds, max_rounds, budget_s, min_time_s, block_time_s, target_cv, "
                             "regression_threshold, paired_threshold, fail_on_regression, "
                             "thresholds, min_times, processes, python, python_interpreter, "
                             "python_requires, python_environment)"));
  CHECK_THAT(
      error_of("unknown_top", "foo = 1\n" + two_cells),
      Catch::Contains(":1:1: unknown key 'foo' in the matrix file (known: matrix, axes, "
                      "include, exclude, expect, latency, suite, packages, program, benchmark)"));
  CHECK_THAT(error_of("allow_missing", two_cells + "[[expect]]\n[[expect.allow]]\ncases = \"a\"\n"),
             Catch::Contains(":4:1: [[expect.allow]] needs cases, outcomes and reason"));
}

TEST_CASE("load_matrix_reporting prints 'cuparity <command>: <error>' and returns nothing",
          "[matrix][errors]") {
  const std::string bad = "[axes]\nA = [1.5]\n";
  const std::string path = write_matrix("reporting", bad);
  std::ostringstream err;
  CHECK_FALSE(load_matrix_reporting(path, any_case, err, "list").has_value());
  CHECK(err.str() == "cuparity list: " + error_of("reporting", bad) + "\n");
  std::ostringstream plain;
  CHECK_FALSE(load_matrix_reporting(path, any_case, plain, "").has_value());
  CHECK(plain.str() == "cuparity: " + error_of("reporting", bad) + "\n");
  std::ostringstream quiet;
  auto m = load_matrix_reporting(write_matrix("reporting_ok", two_cells), any_case, quiet, "run");
  REQUIRE(m.has_value());
  CHECK(m->cells.size() == 2);
  CHECK(quiet.str().empty());
}

TEST_CASE("the packages axis: requirement lists as values, [packages] as their installer",
          "[matrix][packages]") {
  const std::string axis = "[axes]\npackages = [\"a == 1\", [\"a==2\", \"b>=3,<4\"], false]\n"
                           "B = [\"0\", \"1\"]\n";
  SECTION("values lose their blanks; a list is joined by spaces; false installs nothing") {
    const matrix m = load("pkg-values", axis + "[matrix]\nreference = { packages = \"a==1\" }\n");
    REQUIRE(m.packages);
    CHECK(m.packages->installer == "auto");
    CHECK(m.packages->no_deps);
    CHECK(m.packages->find_links.empty());
    CHECK(ids(m) == std::vector<std::string>{
                        "packages=a==1,B=0", "packages=a==1,B=1", "packages=a==2 b>=3,<4,B=0",
                        "packages=a==2 b>=3,<4,B=1", "packages=-,B=0", "packages=-,B=1"});
    CHECK(reference_pairs(m).size() == 4); // every cell but the two reference cells
  }
  SECTION("[packages] keys reach their fields; find_links and cache are relative to the matrix") {
    const matrix m = load("pkg-keys", axis + "[packages]\nfind_links = [\"w\", \"/abs\"]\n"
                                             "index_url = \"file:///idx\"\ninstaller = \"pip\"\n"
                                             "python = \"python3.12\"\ncache = \"{matrix_dir}/c\"\n"
                                             "no_deps = false\n");
    REQUIRE(m.packages);
    const auto dir = std::filesystem::absolute(m.path).parent_path();
    CHECK(m.packages->find_links == std::vector<std::string>{(dir / "w").string(), "/abs"});
    CHECK(m.packages->index_url == "file:///idx");
    CHECK(m.packages->installer == "pip");
    CHECK(m.packages->python == "python3.12");
    CHECK(m.packages->cache == (dir / "c").string());
    CHECK_FALSE(m.packages->no_deps);
  }
  SECTION("a matrix without the axis has no package settings") {
    CHECK_FALSE(load("pkg-none", "[axes]\nB = [\"0\"]\n").packages);
  }
  SECTION("bad values and keys are errors at file:line:column") {
    const auto at = [](const std::string &name, const std::string &where) {
      return write_matrix(name, "") + ":" + where + ": ";
    };
    CHECK(error_of("pkg-e1", "[axes]\npackages = [1]\n") ==
          at("pkg-e1", "2:13") + "packages: a value must be a requirement, an array of "
                                 "requirements or false (nothing installed), not an integer");
    CHECK(error_of("pkg-e2", "[axes]\npackages = [[]]\n") ==
          at("pkg-e2", "2:13") +
              "packages: an empty array installs nothing; write false for the site's own");
    CHECK(error_of("pkg-e3", "[axes]\npackages = [\"a==1; python_version>'3'\"]\n")
              .starts_with(at("pkg-e3", "2:13") + "packages: 'a==1; python_version>'3'' has an "
                                                  "environment marker"));
    CHECK(error_of("pkg-e4", "[axes]\npackages = [\"--pre\"]\n")
              .starts_with(at("pkg-e4", "2:13") + "packages: '--pre' is an installer option"));
    CHECK(error_of("pkg-e21", "[axes]\npackages = [\"numpy==2.4.6 pytest==8.4.2\"]\n") ==
          at("pkg-e21", "2:13") +
              "packages: 'numpy==2.4.6 pytest==8.4.2' holds two requirements ('numpy==2.4.6' then "
              "'pytest==8.4.2'); give a value of several as an array, one string each: "
              "[\"numpy==2.4.6\", \"pytest==8.4.2\", ...]");
    CHECK(error_of("pkg-e22", "[axes]\npackages = [\"numpy pytest\"]\n")
              .starts_with(at("pkg-e22", "2:13") + "packages: 'numpy pytest' holds two"));
    CHECK(error_of("pkg-e23", "[axes]\npackages = [\"a[x] b\"]\n").find("holds two") !=
          std::string::npos);
    // Blanks inside one requirement stay allowed: around operators, before a version list, `@`.
    CHECK(load("pkg-one", "[axes]\npackages = [\"a >= 1 , < 2\", \"b === rc\", "
                          "\"c @ https://x/c-1-py3-none-any.whl\"]\n")
              .packages);
    CHECK(error_of("pkg-e5", "[axes]\npackages = [\"a==1\", \"a == 1\"]\n") ==
          at("pkg-e5", "2:21") + "axis packages lists a value twice");
    CHECK(error_of("pkg-e6", "[axes]\nB = [\"0\"]\n[packages]\n") ==
          at("pkg-e6", "3:1") + "[packages] installs the values of a `packages` axis, and no cell "
                                "has one (packages = [\"name==version\", ...] in [axes])");
    CHECK(
        error_of("pkg-e7", "[axes]\npackages = [\"a\"]\n[packages]\nindex_url = \"pypi.org\"\n") ==
        at("pkg-e7", "4:13") +
            "packages.index_url: 'pypi.org' is no index URL (https://, http:// or file://)");
    CHECK(error_of("pkg-e8", "[axes]\npackages = [\"a\"]\n[packages]\ninstaller = \"conda\"\n") ==
          at("pkg-e8", "4:13") + "packages.installer must be \"auto\", \"uv\" or \"pip\"");
    CHECK(error_of("pkg-e9", "[axes]\npackages = [\"a\"]\n[packages]\nwheels = \"w\"\n")
              .starts_with(at("pkg-e9", "4:1") + "unknown key 'wheels' in [packages]"));
    CHECK(error_of("pkg-e10", "[axes]\npackages = [\"a\"]\n[packages]\npython = \"py thon\"\n") ==
          at("pkg-e10", "4:10") + "packages.python: 'py thon' is no interpreter (a name on PATH "
                                  "or a path)");
    CHECK(error_of("pkg-e11",
                   "[axes]\npackages = [\"a\"]\n[packages]\nfind_links = \"{wheels}\"\n") ==
          at("pkg-e11", "4:14") + "packages.find_links: unknown placeholder {wheels} (known: "
                                  "{bin}, {matrix_dir})");
    CHECK(error_of("pkg-e12", "[axes]\nB = [\"0\"]\n[[include]]\nB = \"1\"\npackages = 2\n") ==
          at("pkg-e12", "5:12") + "packages: a value must be a requirement, an array of "
                                  "requirements or false (nothing installed), not an integer");
  }
}
