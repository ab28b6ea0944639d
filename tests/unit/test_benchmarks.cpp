// [[benchmark]] tables and the readers of pytest-benchmark's and pyperf's JSON.
#include "harness/io/input_file.hpp"
#include "harness/io/json_input.hpp"
#include "harness/matrix/matrix.hpp"
#include "harness/run/benchmark_json.hpp"
#include "harness/run/benchmark_phase.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

using namespace cuparity;
using nlohmann::json;

namespace {

std::string write_file(const std::string &name, const std::string &text) {
  auto dir = std::filesystem::temp_directory_path() / "cuparity-benchmark-tests";
  std::filesystem::create_directories(dir);
  auto path = (dir / name).string();
  std::ofstream(path) << text;
  return path;
}

std::string load_error(const std::string &name, const std::string &text) {
  try {
    (void)load_matrix(write_file(name + ".toml", text), [](const std::string &) { return true; });
  } catch (const matrix_error &e) {
    return e.what();
  }
  return "";
}

const std::string two_cells = "[axes]\nA = [\"0\", \"1\"]\n";

/// pytest-benchmark 5's shape, as --benchmark-json writes it (members the reader ignores left out).
json pytest_doc() {
  return json::parse(R"({"machine_info": {}, "version": "5.3.1", "benchmarks": [
    {"name": "test_a", "fullname": "t.py::test_a", "stats": {"median": 2e-6,
     "data": [1e-6, 3e-6, 2.5e-6, 2e-6, 1.5e-6]}},
    {"name": "test_b", "fullname": "t.py::test_b", "stats": {"median": 4e-7}}]})");
}

/// pyperf 2.10's shape: a calibration run without values, the name in the benchmark's metadata,
/// the unit in the file's.
json pyperf_doc() {
  return json::parse(R"({"version": "1.0", "metadata": {"unit": "second", "timer": "x"},
    "benchmarks": [{"metadata": {"name": "sum10", "loops": 8},
      "runs": [{"metadata": {}, "warmups": [[1, 5e-7]]},
               {"metadata": {}, "values": [1e-7, 3e-7], "warmups": [[8, 2e-7]]},
               {"metadata": {}, "values": [2e-7]}]}]})");
}

} // namespace

TEST_CASE("pytest-benchmark JSON: the median of stats.data, else stats.median, in ns",
          "[benchmark]") {
  const auto t = read_pytest_benchmark(pytest_doc());
  REQUIRE(t.size() == 2);
  CHECK(t[0].test == "t.py::test_a");
  CHECK(t[0].median_ns == Approx(2000));
  CHECK(t[0].values == 5);
  CHECK(t[1].test == "t.py::test_b");
  CHECK(t[1].median_ns == Approx(400));
  CHECK(t[1].values == 1);
}

TEST_CASE("pyperf JSON: every run's values, calibration runs skipped, in ns", "[benchmark]") {
  const auto t = read_pyperf(pyperf_doc());
  REQUIRE(t.size() == 1);
  CHECK(t[0].test == "sum10");
  CHECK(t[0].median_ns == Approx(200));
  CHECK(t[0].values == 3);
}

TEST_CASE("a benchmark's own word on its binding: extra_info or metadata cuparity_binding",
          "[benchmark]") {
  json d = pytest_doc();
  d["benchmarks"][1]["extra_info"] = {{"cuparity_binding", "internal"}};
  auto t = read_pytest_benchmark(d);
  CHECK(t[0].binding.empty());
  CHECK(t[1].binding == "internal");
  CHECK(t[1].binding_at == "benchmarks[1].extra_info.cuparity_binding");
  json y = pyperf_doc();
  y["metadata"]["cuparity_binding"] = "nvidia"; // the file's, shared by its benchmarks
  CHECK(read_pyperf(y)[0].binding == "nvidia");
  y["benchmarks"][0]["metadata"]["cuparity_binding"] = "internal"; // its own comes first
  CHECK(read_pyperf(y)[0].binding == "internal");
  d["benchmarks"][1]["extra_info"]["cuparity_binding"] = "ctypes";
  CHECK_THROWS_WITH(read_pytest_benchmark(d),
                    Catch::StartsWith("benchmarks[1].extra_info.cuparity_binding: 'ctypes' is no "
                                      "binding (expected internal or nvidia)"));
}

TEST_CASE("a benchmark that bound another binding than its cell's is left out, named",
          "[benchmark]") {
  std::vector<benchmark_timing> t(2);
  t[0].test = "t.py::test_a", t[1].test = "t.py::test_b";
  CHECK(benchmark_binding_problem(t, "nvidia").empty()); // it says nothing: the cell's word
  t[1].binding = "nvidia", t[1].binding_at = "benchmarks[1].extra_info.cuparity_binding";
  CHECK(benchmark_binding_problem(t, "nvidia").empty());
  CHECK(benchmark_binding_problem(t, "").empty()); // the cell's binding unread: nothing to hold
  CHECK(benchmark_binding_problem(t, "internal") ==
        "'t.py::test_b' reports it bound nvidia (benchmarks[1].extra_info.cuparity_binding) where "
        "the cell's variables select internal (a fallback): its figures are left out, never "
        "compared as internal");
}

TEST_CASE("benchmark JSON that cannot be read names the member and what is wrong",
          "[benchmark][errors]") {
  auto pytest_error = [](const json &doc) {
    try {
      (void)read_pytest_benchmark(doc);
    } catch (const json_input_error &e) {
      return std::string(e.what());
    }
    return std::string();
  };
  auto pyperf_error = [](const json &doc) {
    try {
      (void)read_pyperf(doc);
    } catch (const json_input_error &e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK_THAT(pytest_error(json::parse(R"({"benchmarks": []})")),
             Catch::StartsWith("benchmarks: lists no benchmark"));
  CHECK_THAT(pytest_error(json::parse(R"({"machine_info": {}})")),
             Catch::StartsWith("benchmarks:"));
  json d = pytest_doc();
  d["benchmarks"][1]["stats"].erase("median");
  CHECK_THAT(pytest_error(d), Catch::StartsWith("benchmarks[1].stats.median:"));
  d = pytest_doc();
  d["benchmarks"][0]["stats"]["data"][2] = -1;
  CHECK_THAT(pytest_error(d), Catch::StartsWith("benchmarks[0].stats.data[2]: a time must be "
                                                "a positive number"));
  d = pytest_doc();
  d["benchmarks"][1]["fullname"] = "t.py::test_a";
  CHECK_THAT(pytest_error(d), Catch::Contains("'t.py::test_a' is listed twice"));
  d = pyperf_doc();
  d["metadata"]["unit"] = "byte";
  CHECK_THAT(pyperf_error(d),
             Catch::StartsWith("metadata.unit: 'byte' of 'sum10' is no time (expected second)"));
  d = pyperf_doc();
  d["benchmarks"][0]["runs"] = json::parse(R"([{"warmups": [[1, 1e-7]]}])");
  CHECK_THAT(pyperf_error(d), Catch::StartsWith("benchmarks[0].runs: no run of 'sum10' has"));
  d = pyperf_doc();
  d["benchmarks"][0]["metadata"].erase("name");
  CHECK_THAT(pyperf_error(d), Catch::StartsWith("benchmarks[0].metadata: has no name"));
}

TEST_CASE("a benchmark file that is no JSON, or not the format's, names the file",
          "[benchmark][errors]") {
  const std::string broken = write_file("broken.json", "{\"benchmarks\": [");
  CHECK_THROWS_WITH(read_benchmark_file(broken, benchmark_format::pytest_benchmark),
                    Catch::StartsWith(broken + ":"));
  const std::string pytest_file = write_file("pytest.json", pytest_doc().dump());
  CHECK_THROWS_WITH(read_benchmark_file(pytest_file, benchmark_format::pyperf),
                    Catch::StartsWith(pytest_file + ": benchmarks[0].metadata") &&
                        Catch::Contains("(read as pyperf JSON)"));
  CHECK(read_benchmark_file(pytest_file, benchmark_format::pytest_benchmark).size() == 2);
  CHECK_THROWS_AS(read_benchmark_file(pytest_file + ".missing", benchmark_format::pyperf),
                  bad_input_error);
  CHECK(benchmark_probe("drv", "t.py::test_a") == "bench:drv:t.py::test_a");
}

TEST_CASE("[[benchmark]] tables are read, defaults and all", "[benchmark][matrix]") {
  const auto m = load_matrix(
      write_file("bench_ok.toml",
                 two_cells + "[[benchmark]]\nname = \"drv\"\nformat = \"pyperf\"\n"
                             "command = [\"python3\", \"b.py\", \"-o\", \"{json}\"]\n"
                             "[[benchmark]]\nname = \"pb\"\nformat = \"pytest-benchmark\"\n"
                             "command = [\"pytest\", \"--benchmark-json={json}\"]\n"
                             "rounds = 4\ncontrol = true\n"),
      [](const std::string &) { return true; });
  REQUIRE(m.benchmarks.size() == 2);
  CHECK(m.benchmarks[0].format == benchmark_format::pyperf);
  CHECK(m.benchmarks[0].rounds == 3);
  CHECK_FALSE(m.benchmarks[0].control);
  CHECK(m.benchmarks[0].command.back() == "{json}");
  CHECK(m.benchmarks[1].format == benchmark_format::pytest_benchmark);
  CHECK(m.benchmarks[1].rounds == 4);
  CHECK(m.benchmarks[1].control);
}

TEST_CASE("[[benchmark]] errors name the key and its position", "[benchmark][matrix][errors]") {
  const std::string head = two_cells + "[[benchmark]]\nname = \"drv\"\n";
  CHECK_THAT(
      load_error("bench_fmt", head + "format = \"asv\"\ncommand = [\"x\", \"{json}\"]\n"),
      Catch::Contains(
          "bench_fmt.toml:5:10: benchmark.format must be \"pytest-benchmark\" or \"pyperf\""));
  CHECK_THAT(load_error("bench_nojson", head + "format = \"pyperf\"\ncommand = [\"x\", \"-o\"]\n"),
             Catch::Contains("bench_nojson.toml:6:11: benchmark.command: names no {json}"));
  CHECK_THAT(load_error("bench_ph", head + "format = \"pyperf\"\ncommand = [\"x\", \"{junit}\"]\n"),
             Catch::Contains("benchmark.command: unknown placeholder {junit}"));
  CHECK_THAT(load_error("bench_key", head + "format = \"pyperf\"\ncommand = [\"{json}\"]\n"
                                            "junit = \"x\"\n"),
             Catch::Contains("unknown key 'junit'"));
  CHECK_THAT(load_error("bench_missing", two_cells + "[[benchmark]]\nname = \"drv\"\n"),
             Catch::Contains("bench_missing.toml:3:1:") && Catch::Contains("format") &&
                 Catch::Contains("command"));
  CHECK_THAT(load_error("bench_name", two_cells + "[[benchmark]]\nname = \"Drv:x\"\n"
                                                  "format = \"pyperf\"\ncommand = [\"{json}\"]\n"),
             Catch::Contains("benchmark.name: 'Drv:x': use lowercase letters"));
  const std::string twice = "[[benchmark]]\nname = \"drv\"\nformat = \"pyperf\"\n"
                            "command = [\"{json}\"]\n";
  CHECK_THAT(load_error("bench_twice", two_cells + twice + twice),
             Catch::Contains("bench_twice.toml:8:8: benchmark.name: 'drv' is already the name of "
                             "the benchmark at"));
  CHECK_THAT(load_error("bench_env", two_cells + twice + "environment = { A = \"1\" }\n"),
             Catch::Contains("benchmark.environment: 'A' is a variable of the matrix's cells"));
  CHECK_THAT(load_error("bench_rounds", two_cells + twice + "rounds = 0\n"),
             Catch::Contains("benchmark.rounds: must be at least 1"));
  CHECK_THAT(
      load_error("bench_root", two_cells + twice + "root = \"{env:CUPARITY_NO_SUCH_VAR}\"\n"),
      Catch::Contains("benchmark.root: {env:CUPARITY_NO_SUCH_VAR}: the variable "
                      "CUPARITY_NO_SUCH_VAR is unset"));
}
