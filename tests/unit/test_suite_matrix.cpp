// [[suite]] tables and flakes files as the matrix reads them, and the plugin's progress file.
#include "harness/external/suite_progress.hpp"
#include "harness/matrix/matrix.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>

using namespace cuparity;

namespace {

std::filesystem::path suite_dir() {
  auto dir = std::filesystem::temp_directory_path() / "cuparity-suite-matrix-tests";
  std::filesystem::create_directories(dir);
  return dir;
}

bool builtin_only(const std::string &glob) {
  return glob == "*" || glob == "alloc" || glob.rfind("alloc.", 0) == 0;
}

matrix load_text(const std::string &name, const std::string &text) {
  const auto path = (suite_dir() / (name + ".toml")).string();
  std::ofstream(path) << text;
  return load_matrix(path, builtin_only);
}

const std::string head = "[axes]\nV = [\"0\", \"1\"]\n";
const std::string suite = "[[suite]]\nname = \"pkg\"\ncommand = [\"python3\", \"-m\", "
                          "\"pytest\", \"--junitxml={junit}\", \"{matrix_dir}/tests\"]\n";

std::string load_error(const std::string &name, const std::string &text) {
  try {
    (void)load_text(name, text);
  } catch (const matrix_error &e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST_CASE("suite matrix: [[suite]] reads its command with {matrix_dir} now, {junit} and {out} "
          "at run time",
          "[matrix][suite]") {
  const matrix m = load_text("suite_ok", head + suite + "timeout_s = 60\nretries = 1\njobs = 2\n");
  REQUIRE(m.suites.size() == 1);
  const external_suite &x = m.suites[0];
  CHECK(x.name == "pkg");
  CHECK(x.command.at(3) == "--junitxml={junit}");
  CHECK(x.command.at(4) == suite_dir().string() + "/tests");
  CHECK(x.junit == "{out}/junit.xml");
  CHECK(x.timeout_s == 60);
  CHECK(x.retries == 1);
  CHECK(x.jobs == 2);
  CHECK(m.cells.size() == 2);
  CHECK(m.cases.empty()); // no built-in case runs beside a suite
}

TEST_CASE("suite matrix: expectations may name the suite's tests, which exist only once it runs",
          "[matrix][suite]") {
  const matrix m =
      load_text("suite_allow", head + suite +
                                   "[[expect]]\nwhen = { V = \"1\" }\n[[expect.allow]]\n"
                                   "cases = [\"pkg.test_x.*\"]\noutcomes = [\"fail\"]\n"
                                   "reason = \"known\"\n");
  CHECK(m.expectations.size() == 1);
}

TEST_CASE("suite matrix: what cannot be a suite is an error at its place", "[matrix][suite]") {
  CHECK_THAT(load_error("s1", head + "[[suite]]\nname = \"pkg\"\ncommand = \"pytest -q\"\n"),
             Catch::Contains("suite.command: must be an array of strings"));
  CHECK_THAT(
      load_error("s2", head + "[[suite]]\nname = \"pkg\"\ncommand = [\"x\", \"{outdir}\"]\n"),
      Catch::Contains("unknown placeholder {outdir}"));
  CHECK_THAT(load_error("s3", head + "[[suite]]\nname = \"p.k\"\ncommand = [\"x\"]\n"),
             Catch::Contains("use lowercase letters"));
  CHECK_THAT(load_error("s4", head + "[[suite]]\nname = \"alloc\"\ncommand = [\"x\"]\n"),
             Catch::Contains("is a suite of cuparity's own cases"));
  CHECK_THAT(load_error("s5", head + suite + suite),
             Catch::Contains("already the name of the suite"));
  CHECK_THAT(load_error("s6", "[matrix]\ncases = [\"alloc\"]\n" + head + suite),
             Catch::Contains("matrix.cases cannot be set in a matrix with [[suite]]"));
  CHECK_THAT(load_error("s7", head + suite + "[latency]\nrounds = 1\n"),
             Catch::Contains("[latency] cannot be set"));
  CHECK_THAT(load_error("s8", head + "[[suite]]\ncommand = [\"x\"]\n"), Catch::Contains("name"));
  CHECK_THAT(load_error("s9", head + "[[suite]]\nname = \"pkg\"\ncommand = []\n"),
             Catch::Contains("names no program"));
  CHECK_THAT(load_error("s10", head + suite + "retries = 11\n"), Catch::Contains("suite.retries"));
}

TEST_CASE("suite matrix: a flakes file needs a reason per glob and globs of its own suite",
          "[matrix][suite]") {
  std::ofstream(suite_dir() / "ok.flakes") << "# comment\n\npkg.t.test_a  races a timer\n";
  const matrix m = load_text("flakes_ok", head + suite + "flakes = \"ok.flakes\"\n");
  REQUIRE(m.suites[0].flakes.size() == 1);
  CHECK(m.suites[0].flakes[0].glob == "pkg.t.test_a");
  CHECK(m.suites[0].flakes[0].reason == "races a timer");
  CHECK(m.suites[0].flakes[0].where.line == 3);

  std::ofstream(suite_dir() / "noreason.flakes") << "pkg.t.test_a\n";
  CHECK_THAT(load_error("flakes_reason", head + suite + "flakes = \"noreason.flakes\"\n"),
             Catch::Contains("noreason.flakes:1:1: 'pkg.t.test_a' has no reason"));
  std::ofstream(suite_dir() / "other.flakes") << "\nother.t.test_a flaky\n";
  CHECK_THAT(load_error("flakes_other", head + suite + "flakes = \"other.flakes\"\n"),
             Catch::Contains("other.flakes:2:1: 'other.t.test_a' does not start with \"pkg.\""));
  CHECK_THAT(load_error("flakes_missing", head + suite + "flakes = \"gone.flakes\"\n"),
             Catch::Contains("gone.flakes: no such flakes file"));
}

TEST_CASE("suite progress: a test that started and never ended is the one in flight",
          "[suite][progress]") {
  const auto path = (suite_dir() / "progress.jsonl").string();
  std::ofstream(path)
      << R"({"event": "collected", "count": 3})"
      << "\n"
      << R"({"event": "start", "nodeid": "t.py::T::a", "classname": "t.T", "name": "a"})"
      << "\n"
      << R"({"event": "end", "nodeid": "t.py::T::a", "outcome": "skipped", "duration": 0.5, )"
      << R"("message": "no GPU"})"
      << "\n"
      << R"({"event": "start", "nodeid": "t.py::T::b[1-x]", "classname": "t.T", "name": "b[1-x]", )"
      << R"("time": 1700000000.5})"
      << "\n{\"event\": \"end\", \"nodeid\": \"t.py::T::b"; // torn by a kill
  const suite_progress p = read_suite_progress(path);
  CHECK(p.collected == 3);
  REQUIRE(p.tests.size() == 2);
  CHECK(p.tests[0].outcome == "skipped");
  CHECK(p.tests[0].message == "no GPU");
  CHECK(p.tests[0].duration_s == 0.5);
  REQUIRE(p.in_flight() != nullptr);
  CHECK(p.in_flight()->nodeid == "t.py::T::b[1-x]");
  CHECK(p.in_flight()->started_unix == 1700000000.5);
  CHECK(p.find_junit("t.T", "a")->nodeid == "t.py::T::a");
  CHECK(p.find_junit("t.T", "c") == nullptr);
  CHECK(read_suite_progress((suite_dir() / "none.jsonl").string()).tests.empty());
}

TEST_CASE("suite progress: what a suite's process writes there is read within bounds",
          "[suite][progress]") {
  const auto path = (suite_dir() / "hostile-progress.jsonl").string();
  {
    std::ofstream out(path);
    out << std::string(100000, '[') << "\n" // deeper than JSON input may be
        << R"({"event": "start", "nodeid": ")" << std::string(suite_progress_line_limit, 'x')
        << "\"}\n" // longer than a line may be
        << R"({"event": "start", "nodeid": "t.py::a", "classname": "t", "name": "a"})"
        << "\n";
  }
  const suite_progress p = read_suite_progress(path);
  REQUIRE(p.tests.size() == 1); // the lines past the bounds are skipped, the next one read
  CHECK(p.tests[0].nodeid == "t.py::a");
  // A FIFO the suite put in the file's place is not opened (it would block the runner).
  const auto fifo = (suite_dir() / "fifo-progress.jsonl").string();
  std::filesystem::remove(fifo);
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(read_suite_progress(fifo).tests.empty());
  CHECK(open_regular_file(fifo) == -1);
}

TEST_CASE("suite matrix: a suite's environment is its own, never a variable of the cells",
          "[matrix][suite]") {
  const matrix m = load_text("suite_env", head + suite +
                                              "environment = { PYTHONPATH = "
                                              "\"{matrix_dir}/hide\" }\n");
  CHECK(m.suites[0].environment.at("PYTHONPATH") == suite_dir().string() + "/hide");
  CHECK_THAT(load_error("suite_env_cell", head + suite + "environment = { V = \"2\" }\n"),
             Catch::Contains("suite.environment: 'V' is a variable of the matrix's cells"));
  CHECK_THAT(load_error("suite_env_type", head + suite + "environment = { X = 1 }\n"),
             Catch::Contains("suite.environment.X: must be a string"));
}

namespace {

const std::string program = "[[program]]\nname = \"train\"\ncommand = [\"python3\", "
                            "\"{matrix_dir}/train.py\", \"--out\", \"{out}\"]\n";

} // namespace

TEST_CASE("program matrix: [[program]] reads its keys; one try and a pass on 0 by default",
          "[matrix][suite][program]") {
  const matrix plain = load_text("program_plain", head + program);
  REQUIRE(plain.suites.size() == 1);
  const external_suite &p = plain.suites[0];
  CHECK(p.program);
  CHECK(p.name == "train");
  CHECK(p.command.at(1) == suite_dir().string() + "/train.py");
  CHECK(p.command.at(3) == "{out}");
  CHECK(p.retries == 0); // a suite's default is 2: a program runs again only when asked
  CHECK(p.exit_code == 0);
  CHECK_FALSE(p.skip_exit_code);
  CHECK(plain.cases.empty());

  const matrix full = load_text(
      "program_full", head + suite + program +
                          "environment = { PYTHONPATH = \"{matrix_dir}\" }\ntimeout_s = 30\n"
                          "retries = 1\nexit_code = 3\nskip_exit_code = 77\n");
  REQUIRE(full.suites.size() == 2); // suites first, then programs
  CHECK_FALSE(full.suites[0].program);
  CHECK(full.suites[0].retries == 2);
  const external_suite &q = full.suites[1];
  CHECK(q.program);
  CHECK(q.environment.at("PYTHONPATH") == suite_dir().string());
  CHECK(q.timeout_s == 30);
  CHECK(q.retries == 1);
  CHECK(q.exit_code == 3);
  CHECK(q.skip_exit_code == 77);
}

TEST_CASE("program matrix: what cannot be a program is an error at its place",
          "[matrix][suite][program]") {
  CHECK_THAT(load_error("p1", head + "[[program]]\nname = \"t\"\ncommand = [\"x\", \"{junit}\"]\n"),
             Catch::Contains("program.command: {junit} is a suite's JUnit file"));
  CHECK_THAT(load_error("p2", head + program + "junit = \"{out}/j.xml\"\n"),
             Catch::Contains("junit"));
  CHECK_THAT(load_error("p3", head + program + "jobs = 2\n"), Catch::Contains("jobs"));
  CHECK_THAT(load_error("p4", head + program + "skip_exit_code = 0\n"),
             Catch::Contains("program.skip_exit_code: is the exit status that is a pass"));
  CHECK_THAT(load_error("p5", head + program + "exit_code = 256\n"),
             Catch::Contains("program.exit_code"));
  CHECK_THAT(load_error("p6", head + program + "retries = 11\n"),
             Catch::Contains("program.retries"));
  CHECK_THAT(load_error("p7", head + "[[suite]]\nname = \"train\"\ncommand = [\"x\"]\n" + program),
             Catch::Contains("program.name: 'train' is already the name of the suite at"));
  CHECK_THAT(load_error("p8", "[matrix]\ncases = [\"alloc\"]\n" + head + program),
             Catch::Contains("matrix.cases cannot be set in a matrix with [[suite]] or [[program]]"));
  CHECK_THAT(load_error("p9", head + program + "[latency]\nrounds = 1\n"),
             Catch::Contains("[latency] cannot be set"));
  CHECK_THAT(load_error("p10", head + "[[program]]\nname = \"alloc\"\ncommand = [\"x\"]\n"),
             Catch::Contains("is a suite of cuparity's own cases"));
  CHECK_THAT(load_error("p11", head + program + "environment = { V = \"1\" }\n"),
             Catch::Contains("program.environment: 'V' is a variable of the matrix's cells"));
  CHECK_THAT(load_error("p12", head + "[[program]]\nname = \"t\"\n"), Catch::Contains("command"));
}

TEST_CASE("the shipped program matrices load: one variable at a time, and versions of cuda.bindings",
          "[matrix][suite][program]") {
  const std::string dir = std::string(CUPARITY_SOURCE_DIR) + "/matrices/";
  const matrix programs = load_matrix(dir + "programs.toml", builtin_only);
  CHECK(programs.cells.size() == 7); // every variable unset, then each alone at "0" and "1"
  REQUIRE(programs.suites.size() == 6);
  for (const auto &x : programs.suites) {
    INFO(x.name);
    CHECK(x.program);
    CHECK(x.skip_exit_code == 77); // a missing package is not_supported, and the run goes on
  }
  const matrix versions = load_matrix(dir + "cuda-bindings-versions.toml", builtin_only);
  CHECK(versions.cells.size() == 9);
  REQUIRE(versions.packages);
  CHECK(versions.suites.at(0).name == "cuda-bindings");
}
