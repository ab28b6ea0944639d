// Changes against a reference ([matrix] reference): pairing, diffs, reporting and fail_on_change.
#include "harness/report/summary.hpp"
#include "harness/verdict/changes.hpp"
#include "test_support.hpp"
#include "verdict_records.hpp"

#include <array>
#include <catch2/catch.hpp>
#include <fstream>

using namespace cuparity;
using namespace cuparity::verdict_test;

namespace {

/// Four cells over A and B, with B = "0" as the reference (plus `rules`).
matrix with_reference(const std::string &name, const std::string &settings = "") {
  const auto path = (scratch_dir() / (name + ".toml")).string();
  std::ofstream(path) << "[matrix]\nname = \"" << name << "\"\nreference = { B = \"0\" }\n"
                      << settings << "[axes]\nA = [\"0\", \"1\"]\nB = [\"0\", \"1\"]\n";
  return load_matrix(path, any_case);
}

std::string matrix_error_of(const std::string &name, const std::string &text) {
  const auto path = (scratch_dir() / (name + ".toml")).string();
  std::ofstream(path) << text;
  try {
    (void)load_matrix(path, any_case);
  } catch (const matrix_error &e) {
    return e.what();
  }
  return "";
}

json binding_map(const std::string &cell, json map) {
  return make_record(record_type::binding_map, {{"cell", cell}, {"map", std::move(map)}});
}

json row(const std::string &entry, const std::string &symbol, int abi = 3020) {
  return {{"entry", entry}, {"symbol", symbol}, {"abi", abi}, {"missing", false}};
}

/// mem.alloc's code 0 -> 2 in both paired cells, and cuMemAlloc's symbol in A=1,B=1.
std::vector<json> changed_records() {
  return {
      cell_rec("A=0,B=0"),
      cell_rec("A=0,B=1"),
      cell_rec("A=1,B=0"),
      cell_rec("A=1,B=1"),
      result("A=0,B=0", "mem.alloc", outcome::pass, {{"code", 0}}),
      result("A=0,B=1", "mem.alloc", outcome::pass, {{"code", 2}}),
      result("A=1,B=0", "mem.alloc", outcome::pass, {{"code", 0}}),
      result("A=1,B=1", "mem.alloc", outcome::pass, {{"code", 2}}),
      binding_map("A=1,B=0", json::array({row("cuMemAlloc", "cuMemAlloc_v2")})),
      binding_map("A=1,B=1", json::array({row("cuMemAlloc", "cuMemAlloc")})),
  };
}

} // namespace

TEST_CASE("each cell is paired with the cell that has the reference values and its others",
          "[changes]") {
  const matrix m = with_reference("pairs");
  const auto pairs = reference_pairs(m);
  REQUIRE(pairs.size() == 2);
  CHECK(pairs[0].c->id == "A=0,B=1");
  CHECK(pairs[0].reference->id == "A=0,B=0");
  CHECK(pairs[1].c->id == "A=1,B=1");
  CHECK(pairs[1].reference->id == "A=1,B=0");
  CHECK(reference_pairs(load("no_reference")).empty());
}

TEST_CASE("a reference the cells cannot use is refused where it is written", "[changes][matrix]") {
  CHECK_THAT(matrix_error_of("ref_unknown", "[matrix]\nreference = { C = \"0\" }\n[axes]\nA = "
                                            "[\"0\", \"1\"]\n"),
             Catch::Contains("ref_unknown.toml:2:13: reference: 'C' is no variable of this "
                             "matrix's cells"));
  CHECK_THAT(matrix_error_of("ref_nothing", "[matrix]\nreference = { A = \"7\" }\n[axes]\nA = "
                                            "[\"0\", \"1\"]\n"),
             Catch::Contains("ref_nothing.toml:2:13: reference: no cell has a reference cell"));
  CHECK_THAT(matrix_error_of("ref_empty", "[matrix]\nreference = {}\n[axes]\nA = [\"0\"]\n"),
             Catch::Contains("ref_empty.toml:2:13: matrix.reference: names no variable"));
  CHECK_THAT(matrix_error_of("ref_flag", "[matrix]\nfail_on_change = 1\n[axes]\nA = [\"0\"]\n"),
             Catch::Contains("ref_flag.toml:2:18"));
  // Without a reference cell pair nothing pairs: a one-valued axis has no candidate.
  CHECK_THAT(matrix_error_of("ref_alone", "[matrix]\nreference = { A = \"0\" }\n[axes]\nA = "
                                          "[\"0\"]\n"),
             Catch::Contains("no cell has a reference cell"));
}

TEST_CASE("case changes: the outcome, then each observation; absent on one side is null",
          "[changes]") {
  const json before = result("r", "mem.alloc", outcome::pass, {{"code", 0}, {"gone", 1}});
  const json after = result("c", "mem.alloc", outcome::fail, {{"code", 2}, {"new", true}});
  const auto changes = case_changes("c", "r", before, after);
  REQUIRE(changes.size() == 4);
  CHECK(changes[0].key == "outcome");
  CHECK(changes[0].before == "pass");
  CHECK(changes[0].after == "fail");
  CHECK(changes[1].key == "observations.code");
  CHECK(changes[1].before == 0);
  CHECK(changes[1].after == 2);
  CHECK(changes[2].key == "observations.gone");
  CHECK(changes[2].after.is_null());
  CHECK(changes[3].key == "observations.new");
  CHECK(changes[3].before.is_null());
  CHECK(changes[3].case_id == "mem.alloc");
  CHECK(changes[3].cell == "c");
  CHECK(changes[3].reference == "r");
  CHECK(case_changes("c", "r", before, before).empty());
  CHECK(change_text(changes[1]) == "c vs r: mem.alloc observations.code: 0 -> 2");
}

TEST_CASE("binding changes: symbol, ABI and entries on one side only", "[changes]") {
  const json before = json::array({row("cuMemAlloc", "cuMemAlloc_v2"),
                                   row("cuCtxCreate", "cuCtxCreate_v2"), row("cuInit", "cuInit")});
  const json after =
      json::array({row("cuMemAlloc", "cuMemAlloc_v2"), row("cuCtxCreate", "cuCtxCreate_v4", 12050),
                   row("cuLaunchKernel", "cuLaunchKernel_ptsz")});
  const auto changes = binding_changes("c", "r", before, after);
  REQUIRE(changes.size() == 3);
  CHECK(changes[0].key == "binding.cuCtxCreate");
  CHECK(changes[0].before["symbol"] == "cuCtxCreate_v2");
  CHECK(changes[0].after["abi"] == 12050);
  CHECK(changes[0].case_id.empty());
  CHECK(changes[1].key == "binding.cuInit");
  CHECK(changes[1].after.is_null());
  CHECK(changes[2].key == "binding.cuLaunchKernel");
  CHECK(changes[2].before.is_null());
  CHECK(binding_changes("c", "r", before, before).empty());
  CHECK(change_text(changes[1]) ==
        "c vs r: binding.cuInit: {\"abi\":3020,\"missing\":false,\"symbol\":\"cuInit\"} -> null");
}

TEST_CASE("a run's changes against its reference are reported; fail_on_change makes them fail",
          "[changes][verdict]") {
  std::vector<json> records = changed_records();
  // Configuration cases describe the environment: never a change.
  records.push_back(result("A=0,B=0", "binding.config.effective", outcome::pass, {{"b", "0"}}));
  records.push_back(result("A=0,B=1", "binding.config.effective", outcome::pass, {{"b", "1"}}));
  const matrix reported = with_reference("reported");
  const comparison c = compare_results(reported, records, recorded_pairs(records), {}, any_case);
  REQUIRE(c.changes.size() == 3);
  CHECK(c.changes[0].cell == "A=0,B=1");
  CHECK(c.changes[0].key == "observations.code");
  CHECK(c.changes[1].cell == "A=1,B=1");
  CHECK(c.changes[1].key == "observations.code");
  CHECK(c.changes[2].cell == "A=1,B=1");
  CHECK(c.changes[2].key == "binding.cuMemAlloc");
  // Cells that differ on the reference axis are compared with their reference, not in a group:
  // the changed code is no divergence.
  CHECK(c.divergences.empty());
  CHECK(c.groups.size() == 2);
  for (const auto &p : c.problems)
    CHECK(p.kind != "change");

  const matrix failing = with_reference("failing", "fail_on_change = true\n");
  const comparison f = compare_results(failing, records, recorded_pairs(records), {}, any_case);
  std::vector<std::string> kinds;
  for (const auto &p : f.problems)
    if (p.kind == "change")
      kinds.push_back(p.cell + " " + p.case_id);
  CHECK(kinds == std::vector<std::string>{"A=0,B=1 mem.alloc", "A=1,B=1 mem.alloc", "A=1,B=1 "});

  const json s = make_summary(reported, records, c, run_facts{});
  CHECK(s["changes"]["count"] == 3);
  CHECK(s["changes"]["reference"]["B"] == "0");
  CHECK(s["changes"]["fail_on_change"] == false);
  CHECK(s["changes"]["pairs"].size() == 2);
  CHECK(s["changes"]["changes"][0]["before"] == 0);
  CHECK(s["changes"]["changes"][0]["after"] == 2);
  CHECK(make_summary(load("plain"), records, c, run_facts{})["changes"].is_null());
}

TEST_CASE("a case recorded on one side only is no change (the coverage reports it)", "[changes]") {
  const matrix m = with_reference("one_side");
  const std::vector<json> records = {
      result("A=0,B=1", "mem.only_here", outcome::fail),
      result("A=1,B=0", "mem.only_there", outcome::fail),
      result("A=1,B=0", "mem.both", outcome::pass, {{"x", 1}}),
      result("A=1,B=1", "mem.both", outcome::pass, {{"x", 1}}),
  };
  CHECK(changes_against_reference(m, verdict::index_records(records), records).empty());
}

// ---- known changes: a file that accepts some changes, and says why

namespace {

/// A matrix with a known-changes file holding `entries`, and fail_on_change as given.
matrix with_known(const std::string &name, const std::string &entries, bool fail) {
  const auto file = (scratch_dir() / (name + ".known.toml")).string();
  std::ofstream(file) << entries;
  return with_reference(name, std::string("known_changes = \"") + name + ".known.toml\"\n" +
                                  (fail ? "fail_on_change = true\n" : ""));
}

std::vector<std::string> problems_of(const comparison &c, const std::string &kind) {
  std::vector<std::string> out;
  for (const auto &p : c.problems)
    if (p.kind == kind)
      out.push_back(p.cell + " " + p.case_id + ": " + p.message);
  return out;
}

} // namespace

TEST_CASE("a known change is matched by case and key, and by cell and value where it names them",
          "[changes][known]") {
  const auto records = changed_records();
  const matrix m = with_known("known_match",
                              "[[change]]\ncase = \"mem.alloc\"\nkey = \"observations.code\"\n"
                              "cell = \"A=1,B=1\"\nafter = 2\nreason = \"driver 590: code 2\"\n"
                              "[[change]]\nkey = \"binding.cuMemAlloc\"\nreason = \"new ABI\"\n"
                              "[[change]]\ncase = \"mem.alloc\"\nkey = \"observations.code\"\n"
                              "after = 3\nreason = \"never happens\"\n"
                              "[[change]]\ncase = \"mem.free\"\nkey = \"observations.code\"\n"
                              "reason = \"another case\"\n",
                              true);
  const comparison c = compare_results(m, records, recorded_pairs(records), {}, any_case);
  REQUIRE(c.changes.size() == 3);
  CHECK(c.changes[0].known.empty()); // A=0,B=1: the entry names the other cell
  CHECK(c.changes[1].known == "driver 590: code 2");
  CHECK(c.changes[2].known == "new ABI"); // no cell, no value: any cell, any value
  // Only the unlisted change fails, and the entry that matched nothing is stale.
  CHECK(problems_of(c, "change") ==
        std::vector<std::string>{"A=0,B=1 mem.alloc: A=0,B=1 vs A=0,B=0: mem.alloc "
                                 "observations.code: 0 -> 2"});
  REQUIRE(c.stale_known.size() == 2); // the other case's entry accepts no mem.alloc change
  CHECK(c.stale_known[0].reason == "never happens");
  CHECK(c.stale_known[1].reason == "another case");
  const auto stale = problems_of(c, "stale_expectation");
  REQUIRE(stale.size() == 2);
  CHECK_THAT(stale[0], Catch::Contains("known_match.known.toml:10:1: known change mem.alloc "
                                       "observations.code matched no change (never happens)"));

  const json s = make_summary(m, records, c, run_facts{});
  CHECK(s["changes"]["changes"][0]["known"].is_null());
  CHECK(s["changes"]["changes"][1]["known"] == "driver 590: code 2");
  CHECK(s["changes"]["stale_known"].size() == 2);
  CHECK(s["changes"]["stale_known"][0]["after"] == 3);
  CHECK_THAT(s["changes"]["known_changes"].get<std::string>(),
             Catch::EndsWith("known_match.known.toml"));
}

TEST_CASE("without fail_on_change, known and unknown changes and stale entries are reported only",
          "[changes][known]") {
  const auto records = changed_records();
  const matrix m = with_known("known_report",
                              "[[change]]\ncase = \"mem.alloc\"\nkey = \"observations.code\"\n"
                              "reason = \"both cells\"\n[[change]]\nkey = \"binding.cuMemFree\"\n"
                              "reason = \"stale\"\n",
                              false);
  const comparison c = compare_results(m, records, recorded_pairs(records), {}, any_case);
  CHECK(c.changes[0].known == "both cells");
  CHECK(c.changes[1].known == "both cells");
  CHECK(c.stale_known.size() == 1);
  CHECK(problems_of(c, "change").empty());
  CHECK(problems_of(c, "stale_expectation").empty());
}

TEST_CASE("a known-changes file that cannot be used is refused where it is wrong",
          "[changes][known][matrix]") {
  const std::string axes = "[axes]\nA = [\"0\", \"1\"]\nB = [\"0\", \"1\"]\n";
  auto error_of = [&](const std::string &name, const std::string &entries) {
    std::ofstream((scratch_dir() / (name + ".known.toml")).string()) << entries;
    return matrix_error_of(name, "[matrix]\nreference = { B = \"0\" }\nknown_changes = \"" + name +
                                     ".known.toml\"\n" + axes);
  };
  CHECK_THAT(matrix_error_of("kc_noref", "[matrix]\nknown_changes = \"/dev/null\"\n" + axes),
             Catch::Contains("kc_noref.toml:2:17: known_changes: the matrix names no reference"));
  CHECK_THAT(matrix_error_of("kc_missing", "[matrix]\nreference = { B = \"0\" }\nknown_changes = "
                                           "\"nope.toml\"\n" +
                                               axes),
             Catch::Contains("nope.toml: no such known-changes file"));
  const std::string head = "[[change]]\ncase = \"x.y\"\n";
  // (name, the file's text, what the error says)
  const std::vector<std::array<std::string, 3>> refused = {
      {"kc_key", head + "key = \"code\"\nreason = \"r\"\n",
       "kc_key.known.toml:3:7: key: 'code' is not \"outcome\", \"observations.<name>\" or "
       "\"binding.<entry>\""},
      {"kc_reason", head + "key = \"outcome\"\n",
       "kc_reason.known.toml:1:1: [[change]] needs a reason"},
      {"kc_empty_reason", head + "key = \"outcome\"\nreason = \"\"\n",
       "kc_empty_reason.known.toml:4:10: [[change]] needs a reason"},
      {"kc_case", "[[change]]\nkey = \"outcome\"\nreason = \"r\"\n",
       "kc_case.known.toml:2:7: names no case"},
      {"kc_bindcase", head + "key = \"binding.cuInit\"\nreason = \"r\"\n",
       "kc_bindcase.known.toml:3:7: a binding change names no case"},
      {"kc_cell", head + "key = \"outcome\"\ncell = \"A=0,B=0\"\nreason = \"r\"\n",
       "kc_cell.known.toml:1:1: cell 'A=0,B=0' is no cell of this matrix that has a reference "
       "cell"},
      {"kc_unknown", head + "key = \"outcome\"\nreason = \"r\"\nwhy = 1\n",
       "kc_unknown.known.toml:5:1: unknown key 'why' in [[change]]"},
      {"kc_date", head + "key = \"outcome\"\nreason = \"r\"\nafter = 1979-05-27\n",
       "kc_date.known.toml:5:9: after: a date or time has no JSON form"},
  };
  for (const auto &[name, entries, says] : refused)
    CHECK_THAT(error_of(name, entries), Catch::Contains(says));
}

// ---- lost capabilities: pass in the reference, anything else in the candidate

namespace {

/// Two paired cells (A=0: B=0 reference, B=1 candidate) whose case outcomes are given.
std::vector<json> outcome_records(outcome reference, outcome candidate, const char *id) {
  return {cell_rec("A=0,B=0"), cell_rec("A=0,B=1"), result("A=0,B=0", id, reference),
          result("A=0,B=1", id, candidate)};
}

} // namespace

TEST_CASE("a capability the candidate lost is a regression, fail_on_change or not",
          "[changes][known]") {
  const matrix m = with_reference("lost");
  for (outcome after : {outcome::not_supported, outcome::fail, outcome::crash}) {
    const auto records = outcome_records(outcome::pass, after, "launch.kernel");
    const comparison c = compare_results(m, records, recorded_pairs(records), {}, any_case);
    const auto lost = problems_of(c, "regression");
    REQUIRE(lost.size() == 1);
    CHECK_THAT(lost[0], Catch::StartsWith("A=0,B=1 launch.kernel: A=0,B=1 vs A=0,B=0: "
                                          "launch.kernel outcome: \"pass\" -> \"" +
                                          std::string(to_string(after)) + "\""));
    CHECK(problems_of(c, "change").empty()); // one problem per change, not two
  }
  // Only an outcome loses a capability: an observation whose value happens to be "pass" does not.
  std::vector<json> observed = {
      cell_rec("A=0,B=0"), cell_rec("A=0,B=1"),
      result("A=0,B=0", "launch.kernel", outcome::pass, {{"status", "pass"}}),
      result("A=0,B=1", "launch.kernel", outcome::pass, {{"status", "done"}})};
  const comparison o = compare_results(m, observed, recorded_pairs(observed), {}, any_case);
  CHECK(o.changes.size() == 1);
  CHECK(problems_of(o, "regression").empty());
  // A gain (not_supported -> pass) is reported, not failed.
  const auto gained = outcome_records(outcome::not_supported, outcome::pass, "launch.kernel");
  const comparison g = compare_results(m, gained, recorded_pairs(gained), {}, any_case);
  CHECK(g.changes.size() == 1);
  CHECK(problems_of(g, "regression").empty());
  // With fail_on_change a lost capability is still one problem, of kind regression.
  const matrix strict = with_reference("lost_strict", "fail_on_change = true\n");
  const auto records = outcome_records(outcome::pass, outcome::not_supported, "launch.kernel");
  const comparison s = compare_results(strict, records, recorded_pairs(records), {}, any_case);
  CHECK(problems_of(s, "regression").size() == 1);
  CHECK(problems_of(s, "change").empty());
}

TEST_CASE("a lost capability the known-changes file lists is reported with its reason",
          "[changes][known]") {
  const auto records = outcome_records(outcome::pass, outcome::not_supported, "launch.kernel");
  const matrix m = with_known("lost_known",
                              "[[change]]\ncase = \"launch.kernel\"\nkey = \"outcome\"\n"
                              "after = \"not_supported\"\nreason = \"590 drops it (notes)\"\n",
                              false);
  const comparison c = compare_results(m, records, recorded_pairs(records), {}, any_case);
  REQUIRE(c.changes.size() == 1);
  CHECK(c.changes[0].known == "590 drops it (notes)");
  CHECK(problems_of(c, "regression").empty());
}
