// The no-op rule in every kind of matrix: a variable that changed nothing the run recorded is a
// problem naming it, where it was written and the known variable closest to it (issue 47, N1).
#include "verdict_records.hpp"

#include <catch2/catch.hpp>

using namespace cuparity;
using namespace cuparity::verdict_test;

namespace {

/// A matrix file of built-in cases with `body` after its [matrix] table (`settings` inside it).
matrix load_builtin(const std::string &name, const std::string &body,
                    const std::string &settings = "") {
  const auto path = (scratch_dir() / (name + ".toml")).string();
  std::ofstream(path) << "[matrix]\nname = \"" << name << "\"\n" << settings << body;
  // Only "*" names a case, so no suite name is one of cuparity's own.
  return load_matrix(path, [](const std::string &g) { return g == "*"; });
}

/// The same with a [[suite]], so the cells run another package's tests.
matrix load_suite(const std::string &name, const std::string &axes) {
  return load_builtin(name, axes + "[[suite]]\nname = \"ext\"\ncommand = [\"true\"]\n");
}

const std::string typo_axis = "[axes]\nNUMBA_CUDA_USE_NVIDA_BINDING = [\"0\", \"1\"]\n";
const std::string cell0 = "NUMBA_CUDA_USE_NVIDA_BINDING=0",
                  cell1 = "NUMBA_CUDA_USE_NVIDA_BINDING=1";

std::size_t noops(const comparison &c) {
  const auto all = kinds(c);
  return static_cast<std::size_t>(std::count(all.begin(), all.end(), "no_op_configuration"));
}

const json dlsym_bindings = {{"cuInit", {"cuInit (dlsym)"}}};

} // namespace

TEST_CASE("no-op rule: a misspelt variable of built-in cases is a problem naming its line and the "
          "variable it is closest to",
          "[verdict][noop]") {
  auto m = load_builtin("typo", typo_axis);
  auto c = compare(m, {cell_rec(cell0), cell_rec(cell1), result(cell0, "a.b", outcome::pass),
                       result(cell1, "a.b", outcome::pass)});
  REQUIRE(kinds(c) == std::vector<std::string>{"no_op_configuration"});
  const std::string &text = c.problems[0].message;
  CHECK(text.rfind("NUMBA_CUDA_USE_NVIDA_BINDING changed nothing (written at ", 0) == 0);
  CHECK(text.find("typo.toml:4:1)") != std::string::npos);
  CHECK(text.find("closest to it is NUMBA_CUDA_USE_NVIDIA_BINDING;") != std::string::npos);
  CHECK(text.find("1 pair(s)") != std::string::npos);
  CHECK(text.find("inert") != std::string::npos);
}

TEST_CASE("no-op rule: a variable spelt like no known one is not given a far-off suggestion",
          "[verdict][noop]") {
  auto m = load_builtin("far", "[axes]\nMY_TOOL_KNOB = [\"0\", \"1\"]\n");
  auto c = compare(m, {cell_rec("MY_TOOL_KNOB=0"), cell_rec("MY_TOOL_KNOB=1"),
                       result("MY_TOOL_KNOB=0", "a.b", outcome::pass),
                       result("MY_TOOL_KNOB=1", "a.b", outcome::pass)});
  REQUIRE(kinds(c) == std::vector<std::string>{"no_op_configuration"});
  const std::string &text = c.problems[0].message;
  CHECK(text.find("No known variable is spelt like it;") != std::string::npos);
  CHECK(text.find("closest to it is") == std::string::npos);
}

TEST_CASE("no-op rule: a variable is read when any pair differing in it alone differs",
          "[verdict][noop]") {
  auto m = load_builtin("read", typo_axis);
  // Another effective configuration in one cell: read (by whatever chose it).
  auto config_changed =
      compare(m, {cell_rec(cell0), cell_rec(cell1, config({{"fallback", true}}))});
  CHECK(kinds(config_changed).empty());
  // The same configuration, another outcome: read (the driver reads a fault to inject).
  auto outcome_changed =
      compare(m, {cell_rec(cell0), cell_rec(cell1), result(cell0, "a.b", outcome::pass),
                  result(cell1, "a.b", outcome::crash)});
  CHECK(noops(outcome_changed) == 0);
  // The same outcome, another observation (a checksum): read.
  auto observed = compare(m, {cell_rec(cell0), cell_rec(cell1),
                              result(cell0, "a.b", outcome::pass, {{"checksum", 1}}),
                              result(cell1, "a.b", outcome::pass, {{"checksum", 2}})});
  CHECK(noops(observed) == 0);
  // A cell that recorded nothing (it did not start) makes no pair: the variable is still one
  // nothing is known to read, and a cell ran.
  auto one_ran = compare(m, {cell_rec(cell0), cell_error(cell1, "start")});
  REQUIRE(noops(one_ran) == 1);
  CHECK(problems(one_ran).back().find("no two cells that ran differ in it alone") !=
        std::string::npos);
  // No cell ran at all: the cell errors say why; nothing is known of any variable.
  CHECK(noops(compare(m, {cell_error(cell0, "start"), cell_error(cell1, "start")})) == 0);
}

TEST_CASE("no-op rule: a misspelt variable with no pair of cells to compare is still named",
          "[verdict][noop]") {
  // A copy of smoke.toml with the typo everywhere: its one-value axis never differs alone.
  auto m = load_builtin("smoke_typo", "[axes]\nNUMBA_CUDA_USE_NVIDIA_BINDING = [\"0\", \"1\"]\n"
                                      "NUMBA_CUDA_PER_THREAD_DEFAULT_STREM = [\"0\"]\n"
                                      "[[include]]\nNUMBA_CUDA_USE_NVIDIA_BINDING = \"0\"\n"
                                      "NUMBA_CUDA_PER_THREAD_DEFAULT_STREM = \"1\"\n"
                                      "label = \"internal-ptds\"\n");
  auto c = compare(m, {cell_rec("nv=0,NUMBA_CUDA_PER_THREAD_DEFAULT_STREM=0"),
                       cell_rec("nv=1,NUMBA_CUDA_PER_THREAD_DEFAULT_STREM=0"),
                       cell_rec("internal-ptds")});
  REQUIRE(kinds(c) == std::vector<std::string>{"no_op_configuration"});
  CHECK(c.problems[0].message.rfind("NUMBA_CUDA_PER_THREAD_DEFAULT_STREM changed nothing "
                                    "(written at ",
                                    0) == 0);
  CHECK(c.problems[0].message.find("smoke_typo.toml:5:1)") != std::string::npos);
  CHECK(c.problems[0].message.find("closest to it is NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM;") !=
        std::string::npos);
}

TEST_CASE("matrix: an [[expect]] naming a variable no cell sets says so, with the closest one",
          "[matrix][noop]") {
  CHECK_THROWS_WITH(
      load_builtin("expect_typo", "[axes]\nNUMBA_CUDA_PER_THREAD_DEFAULT_STREM = [\"0\"]\n"
                                  "[[expect]]\nwhen = { NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM = "
                                  "\"0\" }\nbinding = \"internal\"\n"),
      Catch::Contains("matches no cell: its `when` asks NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM = "
                      "\"0\", which no cell has (the matrix's closest other variable is "
                      "NUMBA_CUDA_PER_THREAD_DEFAULT_STREM, written at ") &&
          Catch::Contains("expect_typo.toml:4:1)"));
}

TEST_CASE("no-op rule: a variable declared inert, with its reason, is let be", "[verdict][noop]") {
  auto m = load_builtin("inert", typo_axis,
                        "inert = { NUMBA_CUDA_USE_NVIDA_BINDING = \"kept to show the typo\" }\n");
  CHECK(m.inert.at("NUMBA_CUDA_USE_NVIDA_BINDING") == "kept to show the typo");
  CHECK(kinds(compare(m, {cell_rec(cell0), cell_rec(cell1)})).empty());
}

TEST_CASE("no-op rule: variables the driver or the shim read are not judged by the records",
          "[verdict][noop]") {
  // A delay the shim injects moves a latency only; CUDA_CACHE_PATH moves nothing a case sees.
  auto shim = load_builtin("shim", "[axes]\nCUPARITY_SHIM_FAULTS = [\"a\", \"b\"]\n");
  CHECK(
      kinds(compare(shim, {cell_rec("CUPARITY_SHIM_FAULTS=a"), cell_rec("CUPARITY_SHIM_FAULTS=b")}))
          .empty());
  // Misspelt, it is judged, and the right spelling is named.
  auto typo = load_builtin("cache", "[axes]\nCUDA_CACHE_PAHT = [\"/a\", \"/b\"]\n");
  auto c = compare(typo, {cell_rec("CUDA_CACHE_PAHT=/a"), cell_rec("CUDA_CACHE_PAHT=/b")});
  REQUIRE(kinds(c) == std::vector<std::string>{"no_op_configuration"});
  CHECK(c.problems[0].message.find("closest to it is CUDA_CACHE_PATH;") != std::string::npos);
}

TEST_CASE("no-op rule: in built-in cases cuparity's configuration reads its own variables; a "
          "suite's package may not",
          "[verdict][noop]") {
  const std::string axis = "[axes]\nNUMBA_CUDA_USE_NVIDIA_BINDING = [\"0\", \"1\"]\n";
  auto builtin = load_builtin("own", axis);
  CHECK(kinds(compare(builtin, {cell_rec("nv=0"), cell_rec("nv=1")})).empty());
  auto suite = load_suite("package", axis);
  auto c = compare(suite, {suite_end("nv=0", dlsym_bindings), suite_end("nv=1", dlsym_bindings)});
  REQUIRE(kinds(c) == std::vector<std::string>{"no_op_configuration"});
  CHECK(c.problems[0].message.find("the package does not read it") != std::string::npos);
  // A suite cell's own configuration is not what its package ran with: only bindings count.
  auto config_only =
      compare(suite, {cell_rec("nv=0"), cell_rec("nv=1", config({{"binding", "nvidia"}})),
                      suite_end("nv=0", dlsym_bindings), suite_end("nv=1", dlsym_bindings)});
  CHECK(kinds(config_only) == std::vector<std::string>{"no_op_configuration"});
  // One captured cell is no pair: the package may read it; nothing is known either way.
  auto one_captured = load_suite("one_captured", "[axes]\nSIMPKG_MODE = [\"a\", \"b\"]\n");
  CHECK(noops(compare(one_captured, {cell_rec("SIMPKG_MODE=a"), cell_rec("SIMPKG_MODE=b"),
                                     suite_end("SIMPKG_MODE=a", dlsym_bindings)})) == 0);
}

TEST_CASE("no-op rule: a variable only an [[include]] names is placed at the include",
          "[verdict][noop]") {
  auto m = load_builtin("include", "[axes]\nNUMBA_CUDA_USE_NVIDIA_BINDING = [\"0\", \"1\"]\n"
                                   "[[include]]\nNUMBA_CUDA_USE_NVIDIA_BINDING = \"1\"\n"
                                   "CUDA_VISIBLE_DEVICE = \"0\"\n");
  CHECK(m.variable_at.at("NUMBA_CUDA_USE_NVIDIA_BINDING").line == 4);
  CHECK(m.variable_at.at("CUDA_VISIBLE_DEVICE").line == 5);
}

TEST_CASE("matrix: inert names a variable of the cells, with a reason", "[matrix][noop]") {
  CHECK_THROWS_WITH(load_builtin("inert_unknown", typo_axis, "inert = { OTHER = \"why\" }\n"),
                    Catch::Contains("inert: 'OTHER' is no variable of this matrix's cells"));
  CHECK_THROWS_WITH(
      load_builtin("inert_empty", typo_axis, "inert = { NUMBA_CUDA_USE_NVIDA_BINDING = \" \" }\n"),
      Catch::Contains("give the reason"));
  CHECK_THROWS_WITH(
      load_builtin("inert_number", typo_axis, "inert = { NUMBA_CUDA_USE_NVIDA_BINDING = 1 }\n"),
      Catch::Contains("inert.NUMBA_CUDA_USE_NVIDA_BINDING"));
}

TEST_CASE("no-op rule: a packages axis is read by the Python probe processes and benchmarks, not "
          "by built-in cases",
          "[verdict][noop]") {
  const std::string axis = "[axes]\npackages = [[\"cuda-python==12.9.10\"], false]\n";
  const auto records = [](const matrix &m) {
    std::vector<json> out;
    for (const auto &c : m.cells)
      out.push_back(cell_rec(c.id));
    return out;
  };
  // Built-in cases alone never import the packages: the axis is named as changing nothing.
  auto cases_only = load_builtin("pkg_cases", axis);
  REQUIRE(cases_only.cells.size() == 2);
  CHECK(kinds(compare(cases_only, records(cases_only))) ==
        std::vector<std::string>{"no_op_configuration"});
  // The Python probe process runs under each cell's package set: the axis is read there.
  auto python = load_builtin("pkg_python", axis + "[latency]\npython = true\n");
  CHECK(kinds(compare(python, records(python))).empty());
  auto py_probes = load_builtin("pkg_py_probes", axis + "[latency]\nprobes = [\"py.*\"]\n");
  CHECK(kinds(compare(py_probes, records(py_probes))).empty());
  // A [[benchmark]] runs under each cell's package set too.
  auto bench = load_builtin("pkg_bench", axis + "[[benchmark]]\nname = \"b\"\nformat = "
                                                "\"pyperf\"\ncommand = [\"x\", \"{json}\"]\n");
  CHECK(kinds(compare(bench, records(bench))).empty());
  // Latency without the Python process reads no package either.
  auto native = load_builtin("pkg_native", axis + "[latency]\nprobes = [\"ctx.*\"]\n");
  CHECK(kinds(compare(native, records(native))) ==
        std::vector<std::string>{"no_op_configuration"});
}
