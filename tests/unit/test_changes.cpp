// Changes against a reference ([matrix] reference): pairing, diffs, reporting and fail_on_change.
#include "harness/report/summary.hpp"
#include "harness/verdict/changes.hpp"
#include "test_support.hpp"
#include "verdict_records.hpp"

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
  const std::vector<json> records = {
      cell_rec("A=0,B=0"),
      cell_rec("A=0,B=1"),
      cell_rec("A=1,B=0"),
      cell_rec("A=1,B=1"),
      result("A=0,B=0", "mem.alloc", outcome::pass, {{"code", 0}}),
      result("A=0,B=1", "mem.alloc", outcome::pass, {{"code", 2}}),
      result("A=1,B=0", "mem.alloc", outcome::pass, {{"code", 0}}),
      result("A=1,B=1", "mem.alloc", outcome::pass, {{"code", 2}}),
      // Configuration cases describe the environment: never a change.
      result("A=0,B=0", "binding.config.effective", outcome::pass, {{"b", "0"}}),
      result("A=0,B=1", "binding.config.effective", outcome::pass, {{"b", "1"}}),
      binding_map("A=1,B=0", json::array({row("cuMemAlloc", "cuMemAlloc_v2")})),
      binding_map("A=1,B=1", json::array({row("cuMemAlloc", "cuMemAlloc")})),
  };
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
