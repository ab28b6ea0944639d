// The gate never lies and never loses: coverage, torn and garbled results, plans, --out owners.
#include "harness/protocol/exit_codes.hpp"
#include "harness/protocol/results.hpp"
#include "harness/report/terminal_text.hpp"
#include "harness/report/text_table.hpp"
#include "harness/run/out_lock.hpp"
#include "harness/run/outputs.hpp"
#include "harness/verdict/coverage.hpp"
#include "run_support.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

using namespace cuparity;
using namespace cuparity::test;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string scratch(const std::string &name) {
  return fresh_dir("cuparity-gate-tests", name);
}

/// Two cells, three cases: six pairs, a second or two on the simulated driver.
std::string small_matrix(const std::string &dir, const std::string &extra = "",
                         const std::string &name = "gate") {
  return write_file(dir + "/m.toml",
                    "[matrix]\nname = \"" + name + "\"\n" +
                        "cases = [\"binding.config.effective\", "
                        "\"context.current.none\", \"stream.query.not_ready\"]\n"
                        "[axes]\nNUMBA_CUDA_USE_NVIDIA_BINDING = [\"0\", \"1\"]\n" +
                        extra);
}

process_result run_tool(std::vector<std::string> args, vars env = {}) {
  return run_cuparity(std::move(args), with_sim_driver(std::move(env)));
}

std::size_t count_lines(const std::string &path) {
  std::ifstream in(path);
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);)
    ++n;
  return n;
}

/// (cell, case) of every case record, with how often each appears.
std::map<std::pair<std::string, std::string>, int> pairs_of(const std::string &dir) {
  std::map<std::pair<std::string, std::string>, int> out;
  for (const auto &r : read_results(dir + "/results.jsonl").records)
    if (r["type"] == "case")
      ++out[{r["cell"], r["case"]}];
  return out;
}

} // namespace

TEST_CASE("coverage: missing, doubled and foreign pairs, and an empty plan, are incomplete",
          "[gate][coverage]") {
  const std::vector<planned_pair> plan{{"a", "x"}, {"a", "y"}, {"b", "x"}};
  auto rec = [](const std::string &cell, const std::string &c) {
    return json{{"type", "case"}, {"cell", cell}, {"case", c}, {"outcome", "pass"}};
  };
  const std::vector<json> all{rec("a", "x"), rec("a", "y"), rec("b", "x")};
  CHECK(check_coverage(plan, all).complete());
  CHECK(check_coverage(plan, all).recorded == 3);
  CHECK(coverage_message(check_coverage(plan, all)).empty());

  auto missing = check_coverage(plan, {rec("a", "x"), rec("b", "x")});
  CHECK_FALSE(missing.complete());
  REQUIRE(missing.missing.size() == 1);
  CHECK(missing.missing[0] == planned_pair{"a", "y"});
  CHECK_THAT(coverage_message(missing),
             Catch::Contains("1 of 3 planned pairs have no result") && Catch::Contains("case 'y'"));

  auto doubled = all;
  doubled.push_back(rec("b", "x"));
  auto twice = check_coverage(plan, doubled);
  CHECK_FALSE(twice.complete());
  CHECK(twice.duplicated == std::vector<planned_pair>{{"b", "x"}});
  CHECK_THAT(coverage_message(twice), Catch::Contains("more than one result"));

  auto foreign = all;
  foreign.push_back(rec("c", "x"));
  CHECK_FALSE(check_coverage(plan, foreign).complete());
  CHECK(check_coverage(plan, foreign).unplanned == std::vector<planned_pair>{{"c", "x"}});

  CHECK_FALSE(check_coverage({}, {}).complete());
  CHECK_THAT(coverage_message(check_coverage({}, {})), Catch::Contains("no (cell, case) pair"));

  // The JSON form reads back to the same judgement.
  const auto j = coverage_json(missing);
  CHECK(j["complete"] == false);
  CHECK_FALSE(coverage_from_json(j, "coverage").complete());
  CHECK(coverage_from_json(coverage_json(check_coverage(plan, all)), "coverage").complete());
}

TEST_CASE("merging shards: only all of them, once each, is complete", "[gate][coverage][merge]") {
  const auto dir = scratch("shards");
  const auto m = small_matrix(dir);
  for (const char *shard : {"0/2", "1/2", "0/3"}) {
    const std::string out = dir + "/s" + std::string(shard).replace(1, 1, "of");
    auto r = run_tool({"run", m, "--shard", shard, "--out", out});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == exit_code::ok); // a shard judges its own share
  }
  auto merge = [&](std::vector<std::string> dirs, const std::string &out) {
    std::vector<std::string> args{"merge", m};
    for (auto &d : dirs)
      args.push_back(dir + "/" + d);
    args.insert(args.end(), {"--out", dir + "/" + out});
    return run_tool(args);
  };
  auto both = merge({"s0of2", "s1of2"}, "both");
  INFO(both.out << both.err);
  CHECK(both.exit_code == exit_code::ok);
  CHECK(read_summary_json(dir + "/both")["coverage"]["complete"] == true);

  auto one = merge({"s0of2"}, "one");
  CHECK(one.exit_code == exit_code::failures);
  CHECK_THAT(one.out, Catch::Contains("INCOMPLETE") && Catch::Contains("have no result"));
  const auto s = read_summary_json(dir + "/one");
  CHECK(s["verdict"] == "incomplete");
  CHECK(s["coverage"]["missing_count"] == 3);
  CHECK_THAT(read_text(dir + "/one/junit.xml"), Catch::Contains("type=\"incomplete\""));

  auto twice = merge({"s0of2", "s0of2"}, "twice");
  CHECK(twice.exit_code == exit_code::failures);
  CHECK(read_summary_json(dir + "/twice")["coverage"]["duplicated_count"] == 3);

  auto mixed = merge({"s0of2", "s0of3", "s1of2"}, "mixed"); // overlapping shard families
  CHECK(mixed.exit_code == exit_code::failures);
  CHECK(read_summary_json(dir + "/mixed")["coverage"]["duplicated_count"].get<int>() > 0);

  // A merge narrowed like the run was: complete again.
  auto narrowed = run_tool({"merge", m, dir + "/s0of2", dir + "/s1of2", "--out", dir + "/narrow",
                            "--case", "context.*"});
  INFO(narrowed.out << narrowed.err);
  CHECK(narrowed.exit_code == exit_code::failures); // binding.* and stream.* are unplanned now
  CHECK(read_summary_json(dir + "/narrow")["coverage"]["unplanned_count"] == 4);
}

TEST_CASE("an empty selection is incomplete, never equivalent", "[gate][coverage]") {
  const auto dir = scratch("empty");
  const auto m = small_matrix(dir, "", "empty");
  // Narrowed to a cell and a case that exist, then the matrix excludes what is left.
  write_file(m, read_text(m) + "[[exclude]]\nNUMBA_CUDA_USE_NVIDIA_BINDING = \"0\"\n"
                               "[[exclude]]\nNUMBA_CUDA_USE_NVIDIA_BINDING = \"1\"\n");
  auto r = run_tool({"run", m, "--out", dir + "/out"});
  INFO(r.out << r.err);
  CHECK(r.exit_code != exit_code::ok);
  if (r.exit_code == exit_code::failures)
    CHECK(read_summary_json(dir + "/out")["verdict"] == "incomplete");
}

TEST_CASE("a driver that crashes in cuInit is a recorded failure, with summary and junit",
          "[gate][crash]") {
  const auto dir = scratch("cuinit_crash");
  const auto m = small_matrix(dir, "CUPARITY_SIM_FAULTS = [false, \"cuInit:crash\"]\n");
  auto r = run_tool({"run", m, "--out", dir + "/out"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == exit_code::failures);
  CHECK(fs::exists(dir + "/out/junit.xml"));
  const auto s = read_summary_json(dir + "/out");
  CHECK(s["verdict"] != "equivalent");
  // Resume and merge read the same records without aborting.
  CHECK(run_tool({"run", m, "--out", dir + "/out", "--resume"}).exit_code == exit_code::failures);
  CHECK(run_tool({"merge", m, dir + "/out", "--out", dir + "/merged"}).exit_code ==
        exit_code::failures);
}

TEST_CASE("a library without cuInit as the driver is a cell error, not an abort", "[gate][crash]") {
  const auto dir = scratch("libz");
  const auto m = small_matrix(dir, "NUMBA_CUDA_DRIVER = [\"{bin}/libcuparity_simdriver.so\", "
                                   "\"libz.so.1\"]\n");
  auto r = run_tool({"run", m, "--out", dir + "/out"});
  INFO(r.out << r.err);
  CHECK((r.exit_code == exit_code::failures || r.exit_code == exit_code::environment));
  CHECK(fs::exists(dir + "/out/summary.json"));
}

TEST_CASE("--resume after a torn last record sets it aside and completes the run",
          "[gate][resume]") {
  const auto dir = scratch("torn");
  const auto m = small_matrix(dir);
  const auto out = dir + "/out";
  REQUIRE(run_tool({"run", m, "--out", out, "--case", "binding.*"}).exit_code == exit_code::ok);
  // Rebuild the state of a run killed mid-record: the first records, then half a line.
  REQUIRE(run_tool({"run", m, "--out", dir + "/full"}).exit_code == exit_code::ok);
  const std::string full = read_text(dir + "/full/results.jsonl");
  std::string kept;
  std::size_t at = 0;
  for (int lines = 0; lines < 3; ++lines)
    at = full.find('\n', at) + 1;
  kept = full.substr(0, at) + full.substr(at, 40); // three records and a cut-off fourth
  fs::create_directories(dir + "/killed/logs");
  write_file(dir + "/killed/results.jsonl", kept);
  auto resumed = run_tool({"run", m, "--out", dir + "/killed", "--resume"});
  INFO(resumed.out << resumed.err);
  CHECK(resumed.exit_code == exit_code::ok);
  CHECK_THAT(resumed.err, Catch::Contains("cut-off record"));
  CHECK(fs::exists(dir + "/killed/results.jsonl.torn-1"));
  CHECK(read_text(dir + "/killed/results.jsonl.torn-1") == full.substr(at, 40));
  for (const auto &[pair, n] : pairs_of(dir + "/killed"))
    CHECK(n == 1);
  CHECK(pairs_of(dir + "/killed").size() == 6);
  // And the file stays readable: a second resume has nothing left to do.
  CHECK(run_tool({"run", m, "--out", dir + "/killed", "--resume"}).exit_code == exit_code::ok);
}

TEST_CASE("garbled or foreign lines in results.jsonl are refused with file:line",
          "[gate][resume]") {
  const auto dir = scratch("garbled");
  const auto m = small_matrix(dir);
  REQUIRE(run_tool({"run", m, "--out", dir + "/good"}).exit_code == exit_code::ok);
  const std::string good = read_text(dir + "/good/results.jsonl");
  const std::size_t second_line = good.find('\n') + 1;
  for (const std::string bad :
       {"42", "null", "\"text\"", "[1]", "{\"cell\":5}", "{\"type\":\"nope\"}",
        "{\"type\":\"case\",\"cell\":5,\"case\":\"x\",\"outcome\":\"pass\",\"message\":\"\","
        "\"observations\":{},\"duration_ms\":1}",
        "{\"type\":\"case\",\"cell\":\"c\",\"case\":\"x\",\"outcome\":\"great\",\"message\":\"\","
        "\"observations\":{},\"duration_ms\":1}",
        "{not json"}) {
    INFO(bad);
    const auto d = scratch("garbled-case");
    fs::create_directories(d + "/logs");
    write_file(d + "/results.jsonl",
               good.substr(0, second_line) + bad + "\n" + good.substr(second_line));
    const std::size_t lines = count_lines(d + "/results.jsonl");
    auto resumed = run_tool({"run", m, "--out", d, "--resume"});
    CHECK(resumed.exit_code == exit_code::bad_input);
    CHECK_THAT(resumed.err, Catch::Contains("results.jsonl:2:"));
    auto merged = run_tool({"merge", m, d, "--out", d + "/merged"});
    CHECK(merged.exit_code == exit_code::bad_input);
    CHECK_THAT(merged.err, Catch::Contains("results.jsonl:2:"));
    CHECK(count_lines(d + "/results.jsonl") == lines); // nothing appended, nothing lost
  }
}

TEST_CASE("results.jsonl that is a folder or a dangling link is refused, not an abort",
          "[gate][resume]") {
  const auto dir = scratch("not_a_file");
  const auto m = small_matrix(dir);
  fs::create_directories(dir + "/folder/results.jsonl");
  auto folder = run_tool({"run", m, "--out", dir + "/folder", "--resume"});
  CHECK(folder.exit_code == exit_code::bad_input);
  CHECK_THAT(folder.err, Catch::Contains("not a regular file"));
  fs::create_directories(dir + "/link");
  fs::create_symlink(dir + "/nowhere", dir + "/link/results.jsonl");
  auto link = run_tool({"run", m, "--out", dir + "/link", "--resume"});
  CHECK(link.exit_code == exit_code::bad_input);
  CHECK_THAT(link.err, Catch::Contains("a link to nothing"));
  CHECK(run_tool({"merge", m, dir + "/link", "--out", dir + "/m"}).exit_code ==
        exit_code::bad_input);
}

TEST_CASE("--resume refuses results of another plan and names what differs", "[gate][plan]") {
  const auto dir = scratch("plan");
  const auto m = small_matrix(dir);
  REQUIRE(run_tool({"run", m, "--out", dir + "/out", "--case", "binding.*"}).exit_code == 0);
  // Another matrix with the same name: a cell's environment edited.
  const auto edited = small_matrix(dir + "/..", "NUMBA_CUDA_INCLUDE_PATH = [\"/tmp\"]\n");
  auto r = run_tool({"run", edited, "--out", dir + "/out", "--resume", "--case", "binding.*"});
  CHECK(r.exit_code == exit_code::bad_input);
  CHECK_THAT(r.err, Catch::Contains("another plan") && Catch::Contains("cell"));
  // Other options: another case selection.
  auto cases = run_tool({"run", m, "--out", dir + "/out", "--resume"});
  CHECK(cases.exit_code == exit_code::bad_input);
  CHECK_THAT(cases.err, Catch::Contains("case_filter"));
  // Another shard.
  auto shard = run_tool(
      {"run", m, "--out", dir + "/out", "--resume", "--case", "binding.*", "--shard", "0/2"});
  CHECK(shard.exit_code == exit_code::bad_input);
  CHECK_THAT(shard.err, Catch::Contains("shard"));
  // The same plan resumes.
  CHECK(run_tool({"run", m, "--out", dir + "/out", "--resume", "--case", "binding.*"}).exit_code ==
        exit_code::ok);
  // Merge refuses results whose cells differ from the matrix given.
  auto merged = run_tool({"merge", edited, dir + "/out", "--out", dir + "/merged"});
  CHECK(merged.exit_code == exit_code::bad_input);
  CHECK_THAT(merged.err, Catch::Contains("another plan"));
}

TEST_CASE("--out has one owner; a folder of another run is not overwritten", "[gate][out]") {
  const auto dir = scratch("owner");
  const auto m = small_matrix(dir);
  fs::create_directories(dir + "/busy");
  {
    out_lock held(dir + "/busy");
    auto r = run_tool({"run", m, "--out", dir + "/busy"});
    CHECK(r.exit_code == exit_code::bad_input);
    CHECK_THAT(r.err, Catch::Contains("in use by another cuparity process (pid " +
                                      std::to_string(getpid())));
    CHECK_FALSE(fs::exists(dir + "/busy/results.jsonl"));
    auto merged = run_tool({"merge", m, dir + "/busy", "--out", dir + "/busy"});
    CHECK(merged.exit_code == exit_code::bad_input);
  }
  // Released with its owner: the folder is usable again.
  CHECK(run_tool({"run", m, "--out", dir + "/busy"}).exit_code == exit_code::ok);

  // A committed run: a summary and junit, no results.
  fs::create_directories(dir + "/committed");
  write_file(dir + "/committed/summary.json", "{}");
  write_file(dir + "/committed/junit.xml", "<x/>");
  auto refused = run_tool({"run", m, "--out", dir + "/committed"});
  CHECK(refused.exit_code == exit_code::bad_input);
  CHECK_THAT(refused.err, Catch::Contains("holds the summary of another run"));
  CHECK(read_text(dir + "/committed/summary.json") == "{}");

  // --force twice within one second: every earlier file is kept under a name of its own.
  REQUIRE(run_tool({"run", m, "--out", dir + "/committed", "--force"}).exit_code == 0);
  REQUIRE(run_tool({"run", m, "--out", dir + "/committed", "--force"}).exit_code == 0);
  std::set<std::string> baks;
  for (const auto &e : fs::directory_iterator(dir + "/committed"))
    if (e.path().extension() == ".bak")
      baks.insert(e.path().filename().string());
  CHECK(baks.size() == 5); // summary, junit; then results, summary, junit of the first --force
}

TEST_CASE("flags naming what does not exist are refused before anything starts", "[gate][flags]") {
  const auto dir = scratch("flags");
  const auto m = small_matrix(dir);
  auto cell = run_tool({"run", m, "--out", dir + "/cell", "--cell", "nope"});
  CHECK(cell.exit_code == exit_code::bad_input);
  CHECK_THAT(cell.err, Catch::Contains("--cell 'nope'"));
  CHECK_FALSE(fs::exists(dir + "/cell")); // refused before --out was made
  auto gpus = run_tool({"run", m, "--out", dir + "/gpus", "--gpus", "7"});
  CHECK(gpus.exit_code == exit_code::bad_input);
  CHECK_THAT(gpus.err, Catch::Contains("device 7 does not exist"));
}

TEST_CASE("cells whose ids differ only in replaced characters keep their own logs",
          "[gate][layout]") {
  const auto dir = scratch("labels");
  const auto m = write_file(dir + "/m.toml", R"(
[matrix]
name = "labels"
cases = ["binding.config.effective"]
[axes]
NUMBA_CUDA_USE_NVIDIA_BINDING = ["0"]
NUMBA_CUDA_INCLUDE_PATH = [false]
[[include]]
label = "a/b"
NUMBA_CUDA_INCLUDE_PATH = "/tmp/a"
[[include]]
label = "a_b"
NUMBA_CUDA_INCLUDE_PATH = "/tmp/b"
)");
  auto r = run_tool({"run", m, "--out", dir + "/out"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == exit_code::ok);
  std::size_t logs = 0;
  for (const auto &e : fs::directory_iterator(dir + "/out/logs"))
    logs += e.path().extension() == ".log";
  CHECK(logs == 3);
}

TEST_CASE("control characters from records and summaries are escaped on the console",
          "[gate][terminal]") {
  CHECK(terminal_text("plain: ok") == "plain: ok");
  CHECK(terminal_text("\x1b[31mred\x1b[0m") == "\\x1b[31mred\\x1b[0m");
  CHECK(terminal_text("two\nlines\r\t") == "two\\x0alines\\x0d\\x09");
  CHECK(terminal_text("del\x7f") == "del\\x7f");
  CHECK(terminal_text("csi\xc2\x9b"
                      "2J") == "csi\\u009b2J");
  CHECK(terminal_text("caf\xc3\xa9") == "caf\xc3\xa9"); // printable UTF-8 stays
  std::ostringstream table;
  print_text_table(table, {"a", "b"}, {{"\x1b[2J", "x"}});
  CHECK(table.str().find('\x1b') == std::string::npos);
  CHECK_THAT(table.str(), Catch::Contains("\\x1b[2J  x"));
}

TEST_CASE("a resumed latency phase replaces the rounds of the attempt it repeats; functional "
          "time sums over attempts",
          "[gate][resume]") {
  const auto dir = scratch("latency_attempts");
  auto sample = [](int round, double value) {
    return json{{"type", "latency_sample"}, {"round", round}, {"cell", "c"},  {"probe", "p"},
                {"series", "facade"},       {"kind", "host"}, {"unit", "ns"}, {"value", value}};
  };
  const json run{{"type", "run"}, {"schema", results_schema}, {"matrix", "m"},
                 {"shard", ""},   {"started", "t"},           {"provenance", json::object()}};
  const json resume{{"type", "resume"}, {"started", "t2"}, {"pending", 0}};
  std::ofstream(dir + "/results.jsonl")
      << run.dump() << "\n"
      << json{{"type", "functional_phase"}, {"wall_s", 30.0}, {"interrupted", true}}.dump() << "\n"
      << resume.dump() << "\n"
      << json{{"type", "functional_phase"}, {"wall_s", 50.0}}.dump() << "\n"
      << sample(0, 1).dump() << "\n"
      << sample(1, 2).dump() << "\n"
      << resume.dump() << "\n"
      << sample(0, 3).dump() << "\n";
  const auto got = read_all({dir});
  std::vector<double> values;
  for (const auto &r : got.records)
    if (r["type"] == "latency_sample")
      values.push_back(r["value"]);
  CHECK(values == std::vector<double>{3}); // the interrupted attempt's two rounds are gone
  CHECK(got.functional_wall_s == Approx(80.0));
  // Without a later latency attempt, the earlier rounds stay.
  std::ofstream(dir + "/results.jsonl", std::ios::app) << resume.dump() << "\n";
  CHECK(read_all({dir}).records.size() == got.records.size() + 1);
}
