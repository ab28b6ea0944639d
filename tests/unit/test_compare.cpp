// Run against run (`cuparity compare`) on summaries alone: each class of outcome change, new and
// gone divergences, latency slower and same by the runner's own rule, and bad input by name.
#include "harness/latency/latency_summary.hpp"
#include "harness/protocol/exit_codes.hpp"
#include "harness/protocol/records.hpp"
#include "harness/report/run_comparison.hpp"
#include "test_support.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

using namespace cuparity;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

const char *legacy_group = "stream0=legacy driver=/usr/lib/libcuda.so.1 include=/usr/include";

/// A summary with the given (cell, case, outcome) results, no divergence and no latency.
json summary_of(const std::vector<std::array<const char *, 3>> &results) {
  json r = json::array();
  for (const auto &[cell, case_id, outcome] : results)
    r.push_back({{"cell", cell}, {"case", case_id}, {"outcome", outcome}, {"message", ""}});
  return {{"schema", "cuparity.summary/1"},
          {"verdict", "equivalent"},
          {"exit_code", 0},
          {"provenance", {{"git_revision", "abc"}, {"simulated", true}}},
          {"results", r},
          {"divergences", json::array()},
          {"latency", nullptr}};
}

json divergence_of(const std::string &group, const std::string &case_id, const std::string &key) {
  return {{"group", group}, {"case", case_id}, {"key", key}, {"values", {{"a", 1}, {"b", 2}}}};
}

/// Per-round values around `centre` with a fixed small wobble.
std::vector<double> rounds(double centre) {
  std::vector<double> out;
  for (double w : {0.0, 0.4, -0.4, 0.2, -0.2, 0.1, -0.1, 0.3, -0.3})
    out.push_back(centre * (1 + w / 100));
  return out;
}

json latency_of(const std::map<std::string, std::vector<double>> &samples,
                const std::string &unit = "ns") {
  return {{"schema", "cuparity.latency/2"},
          {"probes", {{{"name", "launch.x"}, {"unit", unit}, {"samples", samples}}}}};
}

run_comparison compare(const json &a, const json &b) {
  return compare_runs(recorded_run_from_json(a, "a.json"), recorded_run_from_json(b, "b.json"),
                      latency_settings{});
}

std::string scratch(const std::string &name) {
  auto dir = fs::temp_directory_path() / "cuparity-compare-tests" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

std::string write(const std::string &dir, const std::string &name, const std::string &text) {
  const auto path = dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

/// The error read_recorded_run gives for a file holding `text`.
std::string input_error(const std::string &text) {
  const auto path = write(scratch("bad"), "summary.json", text);
  try {
    (void)read_recorded_run(path);
  } catch (const summary_input_error &e) {
    CHECK(e.file() == path);
    return e.what();
  }
  FAIL("no error for " << text);
  return "";
}

} // namespace

TEST_CASE("classify_change: every class of a (cell, case) pair", "[compare]") {
  CHECK(classify_change(outcome::pass, outcome::fail) == outcome_change::regression);
  CHECK(classify_change(outcome::not_supported, outcome::crash) == outcome_change::regression);
  CHECK(classify_change(outcome::fail, outcome::pass) == outcome_change::fix);
  CHECK(classify_change(outcome::timeout, outcome::not_supported) == outcome_change::fix);
  CHECK(classify_change(outcome::fail, outcome::crash) == outcome_change::changed);
  // A lost capability is a regression; the gain the other way is reported as changed.
  CHECK(classify_change(outcome::pass, outcome::not_supported) == outcome_change::regression);
  CHECK(classify_change(outcome::not_supported, outcome::pass) == outcome_change::changed);
  CHECK(classify_change(std::nullopt, outcome::pass) == outcome_change::added);
  CHECK(classify_change(outcome::pass, std::nullopt) == outcome_change::missing);
  CHECK(classify_change(outcome::pass, outcome::pass) == outcome_change::unchanged);
  CHECK(to_string(outcome_change::added) == "new");
}

TEST_CASE("outcomes of two summaries: each class once, counted and listed in the JSON",
          "[compare]") {
  const auto a = summary_of({{"c0", "x.reg", "pass"},
                             {"c0", "x.fix", "fail"},
                             {"c0", "x.gone", "pass"},
                             {"c0", "x.same", "pass"},
                             {"c0", "x.other", "fail"}});
  auto b = summary_of({{"c0", "x.reg", "crash"},
                       {"c0", "x.fix", "pass"},
                       {"c0", "x.new", "pass"},
                       {"c0", "x.same", "pass"},
                       {"c0", "x.other", "timeout"}});
  b["results"][0]["message"] = "killed by signal 11";
  const auto c = compare(a, b);
  std::map<std::string, std::string> got;
  for (const auto &r : c.outcomes)
    got[r.case_id] = std::string(to_string(r.change));
  CHECK(got == std::map<std::string, std::string>{{"x.reg", "regression"},
                                                  {"x.fix", "fix"},
                                                  {"x.gone", "missing"},
                                                  {"x.new", "new"},
                                                  {"x.same", "unchanged"},
                                                  {"x.other", "changed"}});
  CHECK(c.regressed());
  CHECK(compare_exit_code(c) == exit_code::failures);
  const auto j = compare_json(c);
  CHECK(j["schema"] == "cuparity.compare/1");
  CHECK(j["regressed"] == true);
  CHECK(j["exit_code"] == 1);
  CHECK(j["counts"] == json{{"regression", 1},
                            {"fix", 1},
                            {"changed", 1},
                            {"new", 1},
                            {"missing", 1},
                            {"unchanged", 1}});
  CHECK(j["outcomes"].size() == 5);  // unchanged pairs are counted, not listed
  const auto reg = j["outcomes"][4]; // listed by cell, then case: x.fix, x.gone, x.new, ...
  CHECK(reg["case"] == "x.reg");
  CHECK(reg["outcome_a"] == "pass");
  CHECK(reg["outcome_b"] == "crash");
  CHECK(reg["message_b"] == "killed by signal 11");
  CHECK(j["a"]["verdict"] == "equivalent");
  CHECK(j["b"]["source"] == "b.json");
  // The other way round, the regression is a fix and the fix a regression.
  const auto back = compare(b, a);
  CHECK(back.count(outcome_change::fix) == 1);
  CHECK(back.count(outcome_change::regression) == 1);
  CHECK(back.count(outcome_change::added) == 1);
  CHECK_FALSE(compare(b, b).regressed());
  CHECK(compare_exit_code(compare(a, a)) == exit_code::ok);
}

TEST_CASE("divergences: new and gone, matched across hosts by mode and driver file", "[compare]") {
  auto a = summary_of({});
  auto b = summary_of({});
  const std::string other_host =
      "stream0=legacy driver=/opt/drv/libcuda.so.1 include=/usr/local/cuda-13/include";
  a["divergences"] = {divergence_of(legacy_group, "alloc.copy", "outcome"),
                      divergence_of(legacy_group, "ctx.facts", "observations.total_memory")};
  b["divergences"] = {divergence_of(other_host, "ctx.facts", "observations.total_memory"),
                      divergence_of("stream0=per-thread driver=/usr/lib/libcuda.so.1 include=/i",
                                    "alloc.copy", "outcome")};
  const auto c = compare(a, b);
  REQUIRE(c.divergences.added.size() == 1);
  CHECK(divergence_identity(c.divergences.added[0]) ==
        "alloc.copy outcome [stream0=per-thread driver=libcuda.so.1]");
  REQUIRE(c.divergences.gone.size() == 1);
  CHECK(c.divergences.gone[0].case_id == "alloc.copy");
  CHECK(c.regressed()); // a new divergence regresses, whatever the outcomes
  const auto j = compare_json(c);
  CHECK(j["divergences"]["new"][0]["place"] == "stream0=per-thread driver=libcuda.so.1");
  CHECK(j["divergences"]["gone"][0]["group"] == legacy_group);
  CHECK(j["divergences"]["new"][0]["values"]["b"] == 2);
  CHECK_FALSE(compare(b, b).regressed());
}

TEST_CASE("latency run against run: slower and same by the runner's rule, notes for the rest",
          "[compare]") {
  auto a = summary_of({});
  auto b = summary_of({});
  a["latency"] = latency_of({{"nv=0", rounds(2000)}, {"nv=1", rounds(2000)}, {"old", rounds(5)}});
  b["latency"] = latency_of({{"nv=0", rounds(2004)}, {"nv=1", rounds(2400)}, {"fresh", rounds(5)}});
  const auto c = compare(a, b);
  REQUIRE(c.latency.size() == 2);
  CHECK(c.latency[0].change.series == "nv=0");
  CHECK(c.latency[0].change.verdict.verdict == "same");
  CHECK(c.latency[1].change.verdict.verdict == "slower");
  CHECK(c.latency[1].change.n_a == 9);
  CHECK(c.slower() == 1);
  CHECK(c.regressed());
  CHECK(c.notes == std::vector<std::string>{"probe launch.x series old only in A",
                                            "probe launch.x series fresh only in B"});
  const auto j = compare_json(c);
  CHECK(j["latency"][1]["verdict"] == "slower");
  CHECK(j["latency"][1]["unit"] == "ns");
  CHECK(j["latency"][1]["ratio"].get<double>() == Approx(1.2));
  CHECK(j["slower"] == 1);
  // A bandwidth probe: lower is worse, and a --threshold wider than the change reads same.
  a["latency"] = latency_of({{"nv=0", rounds(50)}}, "GB/s");
  b["latency"] = latency_of({{"nv=0", rounds(40)}}, "GB/s");
  CHECK(compare(a, b).latency[0].change.verdict.verdict == "slower");
  latency_settings wide;
  wide.regression_threshold = 0.5;
  const auto relaxed =
      compare_runs(recorded_run_from_json(a, "a"), recorded_run_from_json(b, "b"), wide);
  CHECK(relaxed.latency[0].change.verdict.verdict == "same");
  // Latency in one run only: nothing compared, and said so.
  b["latency"] = nullptr;
  CHECK(compare(a, b).notes ==
        std::vector<std::string>{"latency only in A: no latency comparison"});
}

TEST_CASE("the runner's --latency-baseline and compare judge a series alike", "[compare]") {
  matrix m;
  for (const char *id : {"a", "b"}) {
    cell c;
    c.id = id;
    m.cells.push_back(std::move(c));
  }
  auto records_of = [](double b_centre) {
    std::vector<json> records;
    const auto a = rounds(1000), b = rounds(b_centre);
    for (std::size_t round = 0; round < a.size(); ++round)
      for (const auto &[cell, value] : {std::pair{"a", a[round]}, std::pair{"b", b[round]}})
        records.push_back(make_record(record_type::latency_sample, {{"round", round},
                                                                    {"cell", cell},
                                                                    {"probe", "x.call"},
                                                                    {"series", "facade"},
                                                                    {"kind", "host"},
                                                                    {"unit", "ns"},
                                                                    {"value", value}}));
    return records;
  };
  bool failed = false;
  json before = summary_of({});
  before["latency"] = latency_summary(m, records_of(1000), nullptr, failed);
  json after = summary_of({});
  after["latency"] = latency_summary(m, records_of(1300), &before, failed);
  const auto c = compare(before, after);
  REQUIRE(c.latency.size() == after["latency"]["baseline"].size());
  for (std::size_t i = 0; i < c.latency.size(); ++i) {
    const auto &row = after["latency"]["baseline"][i];
    INFO(row.dump());
    CHECK(row["b"] == c.latency[i].change.series);
    CHECK(row["verdict"] == c.latency[i].change.verdict.verdict);
    CHECK(row["ratio"] == c.latency[i].change.verdict.ratio.ratio);
    CHECK(row["regression"] == c.latency[i].change.regression());
  }
  CHECK(c.latency[1].change.verdict.verdict == "slower");
}

TEST_CASE("bad input names the file and the member, never a crash", "[compare]") {
  CHECK_THAT(input_error("{not json"), Catch::Contains("not valid JSON"));
  CHECK_THAT(input_error("[1, 2]"), Catch::Contains("(top level): expected an object"));
  CHECK_THAT(input_error(R"({"verdict": "equivalent"})"), Catch::Contains("schema: missing"));
  CHECK_THAT(input_error(R"({"schema": "cuparity.results/1"})"),
             Catch::Contains("schema: 'cuparity.results/1' where cuparity.summary/1 was expected"));
  CHECK_THAT(input_error(R"({"schema": "cuparity.summary/2"})"), Catch::Contains("does not read"));
  auto s = summary_of({{"c0", "x", "pass"}, {"c0", "y", "pass"}});
  s["results"][1]["outcome"] = 3;
  CHECK_THAT(input_error(s.dump()),
             Catch::Contains("results[1].outcome: expected a string, found number"));
  s["results"][1]["outcome"] = "exploded";
  CHECK_THAT(input_error(s.dump()), Catch::Contains("results[1].outcome: unknown outcome"));
  s = summary_of({});
  s["divergences"] = {{{"group", "g"}, {"case", "c"}, {"key", "outcome"}}};
  CHECK_THAT(input_error(s.dump()), Catch::Contains("divergences[0].values: missing"));
  s = summary_of({});
  s["latency"] = latency_of({{"nv=0", {1.0, 2.0}}});
  s["latency"]["probes"][0]["samples"]["nv=0"][1] = "fast";
  CHECK_THAT(input_error(s.dump()),
             Catch::Contains("latency.probes[0].samples.nv=0[1]: expected a number"));
  s["latency"]["schema"] = "cuparity.latency/9";
  CHECK_THAT(input_error(s.dump()), Catch::Contains("latency.schema"));
  s = summary_of({});
  s.erase("results");
  CHECK_THAT(input_error(s.dump()), Catch::Contains("results: missing (expected an array)"));

  const auto dir = scratch("no-summary");
  CHECK_THROWS_WITH(read_recorded_run(dir),
                    Catch::Contains("no summary.json") && Catch::Contains("cuparity merge"));
  CHECK_THROWS_WITH(read_recorded_run(dir + "/nope.json"),
                    Catch::Contains("nope.json: no such file"));
}

TEST_CASE("cuparity compare: exit codes, JSON on stdout, console report, bad input",
          "[compare][cli]") {
  const auto dir = scratch("cli");
  const auto a = write(dir, "a.json", summary_of({{"c0", "x", "pass"}}).dump());
  const auto b = write(dir, "b.json", summary_of({{"c0", "x", "fail"}}).dump());
  auto same = test::run_cuparity({"compare", a, a}, {});
  CHECK(same.exit_code == exit_code::ok);
  CHECK_THAT(same.out, Catch::Contains("no regression"));
  auto worse = test::run_cuparity({"compare", a, b, "--json", "-"}, {});
  CHECK(worse.exit_code == exit_code::failures);
  const auto j = json::parse(worse.out); // nothing but the JSON on stdout
  CHECK(j["counts"]["regression"] == 1);
  auto to_file = test::run_cuparity({"compare", a, b, "--json", dir + "/c.json"}, {});
  CHECK(to_file.exit_code == exit_code::failures);
  CHECK_THAT(to_file.out, Catch::Contains("REGRESSED") && Catch::Contains("regression  c0"));
  std::ifstream written(dir + "/c.json");
  CHECK(json::parse(written) == j);
  const auto garbled = write(dir, "garbled.json", "{\"schema\": ");
  auto bad = test::run_cuparity({"compare", a, garbled}, {});
  CHECK(bad.exit_code == exit_code::bad_input);
  CHECK_THAT(bad.err, Catch::Contains(garbled) && Catch::Contains("not valid JSON"));
  auto missing = test::run_cuparity({"compare", dir + "/none", a}, {});
  CHECK(missing.exit_code == exit_code::bad_input);
  CHECK_THAT(missing.err, Catch::Contains("none: no such file"));
}

TEST_CASE("cuparity compare: a comparison that cannot vouch for every pair is incomplete",
          "[compare][coverage]") {
  const recorded_run full =
      recorded_run_from_json(summary_of({{"c0", "x", "pass"}, {"c0", "y", "pass"}}), "a.json");
  // The same run against itself: complete, no regression.
  auto same = compare_runs(full, full, latency_settings{});
  CHECK(same.complete());
  CHECK(compare_exit_code(same) == exit_code::ok);
  CHECK(std::string(same.verdict()) == "no regression");
  // B empty: no regression found, and nothing vouched for either.
  auto empty = compare_runs(full, recorded_run_from_json(summary_of({}), "b.json"), {});
  CHECK_FALSE(empty.regressed());
  CHECK_FALSE(empty.complete());
  CHECK(compare_exit_code(empty) == exit_code::failures);
  CHECK(std::string(empty.verdict()) == "incomplete");
  CHECK(compare_json(empty)["verdict"] == "incomplete");
  // Both empty: no pair of A is missing in B, and still nothing was compared.
  const recorded_run none = recorded_run_from_json(summary_of({}), "none.json");
  CHECK_FALSE(compare_runs(none, none, {}).complete());
  // B lacks one pair of A.
  auto half =
      compare_runs(full, recorded_run_from_json(summary_of({{"c0", "x", "pass"}}), "b"), {});
  REQUIRE(half.incomplete.size() == 1);
  CHECK_THAT(half.incomplete[0], Catch::Contains("1 pairs of A") && Catch::Contains("'y'"));
  // B's own summary says it is incomplete (its coverage), though its results match A's.
  json b = summary_of({{"c0", "x", "pass"}, {"c0", "y", "pass"}});
  b["verdict"] = "incomplete";
  b["coverage"] = {{"complete", false},
                   {"planned", 3},
                   {"recorded", 2},
                   {"missing_count", 1},
                   {"duplicated_count", 0},
                   {"unplanned_count", 0},
                   {"missing", {{{"cell", "c0"}, {"case", "z"}}}},
                   {"duplicated", json::array()},
                   {"unplanned", json::array()}};
  auto partial = compare_runs(full, recorded_run_from_json(b, "b.json"), {});
  REQUIRE(partial.incomplete.size() == 1);
  CHECK_THAT(partial.incomplete[0], Catch::Contains("run B is incomplete") &&
                                        Catch::Contains("1 of 3 planned pairs have no result"));
  CHECK(compare_exit_code(partial) == exit_code::failures);
  // A coverage whose count is smaller than its list is garbled input, not a verdict.
  b["coverage"]["missing_count"] = 0;
  CHECK_THROWS_WITH(recorded_run_from_json(b, "b.json"), Catch::Contains("missing_count"));
}

TEST_CASE("cuparity compare judges by the thresholds run B recorded, unless told otherwise",
          "[compare][cli]") {
  const auto dir = scratch("settings");
  json a = summary_of({{"c0", "x", "pass"}}), b = summary_of({{"c0", "x", "pass"}});
  a["latency"] = latency_of({{"c0", rounds(1000)}});
  b["latency"] = latency_of({{"c0", rounds(1100)}}); // 10 % slower
  const auto a_path = write(dir, "a.json", a.dump());
  const auto plain = write(dir, "plain.json", b.dump());
  b["latency"]["settings"] = {
      {"regression_threshold", 0.5}, {"paired_threshold", 0.01}, {"thresholds", json::object()}};
  const auto loose = write(dir, "loose.json", b.dump());
  // Without recorded settings: the defaults (5 %), so slower.
  CHECK(test::run_cuparity({"compare", a_path, plain}, {}).exit_code == exit_code::failures);
  // Run B judged with a 50 % threshold: 10 % is within it.
  auto recorded = test::run_cuparity({"compare", a_path, loose, "--json", "-"}, {});
  CHECK(recorded.exit_code == exit_code::ok);
  CHECK(json::parse(recorded.out)["latency"][0]["threshold"] == 0.5);
  // --threshold still overrides what was recorded.
  CHECK(test::run_cuparity({"compare", a_path, loose, "--threshold", "0.05"}, {}).exit_code ==
        exit_code::failures);
  // A malformed settings block is bad input that names the member.
  b["latency"]["settings"]["regression_threshold"] = "wide";
  const auto bad = write(dir, "bad.json", b.dump());
  auto refused = test::run_cuparity({"compare", a_path, bad}, {});
  CHECK(refused.exit_code == exit_code::bad_input);
  CHECK_THAT(refused.err, Catch::Contains("latency.settings.regression_threshold"));
}

TEST_CASE("observations that changed between two runs are reported, never judged", "[compare]") {
  json a = summary_of({{"c1", "mem.alloc", "pass"},
                       {"c1", "binding.config.effective", "pass"},
                       {"c2", "mem.alloc", "pass"},
                       {"c1", "mem.only_in_a", "pass"}});
  json b = a;
  a["results"][0]["observations"] = {{"code", 0}, {"same", "x"}};
  b["results"][0]["observations"] = {{"code", 2}, {"same", "x"}, {"new", true}};
  // A configuration case describes the environment: not compared.
  a["results"][1]["observations"] = {{"driver_path", "/a"}};
  b["results"][1]["observations"] = {{"driver_path", "/b"}};
  a["results"][2]["observations"] = {{"k", 1}};
  b["results"][2]["observations"] = {{"k", 1}};
  b["results"].erase(3);
  a["results"][3]["observations"] = {{"k", 1}};
  const run_comparison c = compare(a, b);
  REQUIRE(c.observations.size() == 2);
  CHECK(c.observations[0].cell == "c1");
  CHECK(c.observations[0].case_id == "mem.alloc");
  CHECK(c.observations[0].key == "observations.code");
  CHECK(c.observations[0].before == 0);
  CHECK(c.observations[0].after == 2);
  CHECK(c.observations[1].key == "observations.new");
  CHECK(c.observations[1].before.is_null());
  CHECK_FALSE(c.regressed()); // reported only
  const json j = compare_json(c);
  REQUIRE(j["observations"].size() == 2);
  CHECK(j["observations"][0]["a"] == 0);
  CHECK(j["observations"][0]["b"] == 2);
  std::ostringstream out;
  print_compare(out, c);
  CHECK_THAT(out.str(), Catch::Contains("2 observations changed (reported, not judged):\n"
                                        "  c1 mem.alloc observations.code: 0 -> 2\n"));
  // Observations of the wrong kind are bad input naming the member.
  json bad = a;
  bad["results"][0]["observations"] = 5;
  CHECK_THROWS_WITH(recorded_run_from_json(bad, "bad.json"),
                    Catch::Contains("results[0].observations"));
}

TEST_CASE("binding maps that changed between two runs are reported from their results.jsonl, "
          "never judged; a run without one is noted",
          "[compare]") {
  const auto dir = scratch("bindings");
  auto run_dir = [&](const std::string &name, const json &map, bool with_results) {
    const std::string d = dir + "/" + name;
    fs::create_directories(d);
    write(d, "summary.json", summary_of({{"c1", "mem.alloc", "pass"}}).dump());
    if (with_results)
      write(d, "results.jsonl",
            make_record(record_type::binding_map, {{"cell", "c1"}, {"map", map}}).dump() + "\n");
    return d;
  };
  auto entry = [](const std::string &name, const std::string &symbol, int abi) {
    return json{{"entry", name}, {"symbol", symbol}, {"abi", abi}, {"missing", false}};
  };
  const auto a = run_dir(
      "a",
      json::array({entry("cuMemAlloc", "cuMemAlloc_v2", 3020), entry("cuInit", "cuInit", 2000)}),
      true);
  const auto b = run_dir(
      "b", json::array({entry("cuMemAlloc", "cuMemAlloc", 2000), entry("cuInit", "cuInit", 2000)}),
      true);
  const auto c = compare_runs(read_recorded_run(a), read_recorded_run(b), latency_settings{});
  REQUIRE(c.bindings.size() == 1);
  CHECK(c.bindings[0].cell == "c1");
  CHECK(c.bindings[0].key == "binding.cuMemAlloc");
  CHECK(c.bindings[0].before["symbol"] == "cuMemAlloc_v2");
  CHECK(c.bindings[0].after["symbol"] == "cuMemAlloc");
  CHECK_FALSE(c.regressed());
  CHECK(c.notes.empty());
  CHECK(compare_json(c)["bindings"][0]["key"] == "binding.cuMemAlloc");
  CHECK(compare_json(c)["bindings_compared"] == true);
  std::ostringstream out;
  print_compare(out, c);
  CHECK_THAT(out.str(), Catch::Contains("1 binding entries changed (reported, not judged):\n"
                                        "  c1 binding.cuMemAlloc: "));
  // The same maps: nothing to report, and the console says they were compared.
  const auto same = compare_runs(read_recorded_run(a), read_recorded_run(a), latency_settings{});
  CHECK(same.bindings.empty());
  std::ostringstream same_out;
  print_compare(same_out, same);
  CHECK_THAT(same_out.str(), Catch::Contains("\nobservations: none changed\n") &&
                                 Catch::Contains("\nbinding entries: none changed\n"));
  // A summary without results.jsonl beside it: the maps are not compared, and the note says why.
  const auto bare = run_dir("bare", json::array(), false);
  const auto n = compare_runs(read_recorded_run(a), read_recorded_run(bare), latency_settings{});
  CHECK(n.bindings.empty());
  CHECK(compare_json(n)["bindings_compared"] == false);
  CHECK(n.notes ==
        std::vector<std::string>{"binding maps not compared: no " + bare + "/results.jsonl"});
  std::ostringstream bare_out;
  print_compare(bare_out, n);
  CHECK_THAT(bare_out.str(), !Catch::Contains("binding entries: none changed"));
  // A malformed results.jsonl is bad input naming its line.
  const auto broken = run_dir("broken", json::array(), false);
  write(broken, "results.jsonl", "not json\n");
  CHECK_THROWS_WITH(read_recorded_run(broken), Catch::Contains("results.jsonl:1"));
}

TEST_CASE("compare: a lost capability is a regression unless a known change accepts it",
          "[compare][known]") {
  const auto a = summary_of({{"c0", "launch.kernel", "pass"}, {"c1", "launch.kernel", "pass"}});
  const auto b = summary_of(
      {{"c0", "launch.kernel", "not_supported"}, {"c1", "launch.kernel", "not_supported"}});
  const auto plain = compare(a, b);
  CHECK(plain.count(outcome_change::regression) == 2);
  CHECK(plain.regressed());
  known_change k;
  k.case_id = "launch.kernel";
  k.key = "outcome";
  k.cell = "c0";
  k.after = "not_supported";
  k.reason = "the candidate drops it (release notes)";
  const auto one = compare_runs(recorded_run_from_json(a, "a.json"),
                                recorded_run_from_json(b, "b.json"), latency_settings{}, {k});
  CHECK(one.outcomes[0].known == "the candidate drops it (release notes)");
  CHECK(one.outcomes[1].known.empty()); // c1: the entry names c0
  CHECK(one.unexcused_regressions() == 1);
  CHECK(one.regressed());
  k.cell.reset();
  const auto both = compare_runs(recorded_run_from_json(a, "a.json"),
                                 recorded_run_from_json(b, "b.json"), latency_settings{}, {k});
  CHECK_FALSE(both.regressed());
  CHECK(compare_exit_code(both) == exit_code::ok);
  CHECK(compare_json(both)["outcomes"][0]["known"] == "the candidate drops it (release notes)");
  k.after = "fail"; // another outcome than B's: no match
  const auto other = compare_runs(recorded_run_from_json(a, "a.json"),
                                  recorded_run_from_json(b, "b.json"), latency_settings{}, {k});
  CHECK(other.unexcused_regressions() == 2);
  k.after.reset();
  k.key = "observations.code"; // not an outcome entry
  const auto obs = compare_runs(recorded_run_from_json(a, "a.json"),
                                recorded_run_from_json(b, "b.json"), latency_settings{}, {k});
  CHECK(obs.unexcused_regressions() == 2);
}
