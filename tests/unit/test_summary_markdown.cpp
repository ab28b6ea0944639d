// The step summary (harness/report/summary_markdown): what a CI job's page shows of a run, read
// from summary.json; run text made inert; GitHub's 1 MiB cap kept.
#include "harness/report/markdown_text.hpp"
#include "harness/report/summary_markdown.hpp"

#include <catch2/catch.hpp>
#include <regex>
#include <sstream>

using namespace cuparity;
using json = nlohmann::json;

namespace {

const std::string hostile =
    "bad\n# Heading\r\n<script>alert(1)</script> | **bold** `code` [x](javascript:alert(1)) "
    "&lt;img&gt; $x$ @someone ~~s~~ <!-- c --> \\| end";

json minimal_summary() {
  return json::parse(R"({
    "schema": "cuparity.summary/1", "verdict": "failed", "exit_code": 1,
    "provenance": {"simulated": true, "driver_version_text": "13.0",
                   "driver_release": "sim-1.0-13000", "gpus": ["sim"], "git_revision": "abc"},
    "matrix": {"name": "m"}, "results_count": 2, "allowed": 0, "functional_wall_s": 1.5,
    "shard": "", "counts": {"pass": 1, "fail": 1},
    "cells": [{"id": "a", "config": {"binding": "internal", "stream0": "legacy"},
               "counts": {"pass": 1}},
              {"id": "b", "config": {"binding": "nvidia", "stream0": "legacy", "fallback": true},
               "counts": {"fail": 1}},
              {"id": "lost", "config": null}],
    "problems": [], "divergences": [], "suites": null, "changes": null, "latency": null,
    "coverage": {"complete": true, "message": ""}
  })");
}

json problem(const std::string &cell, const std::string &case_id, const std::string &message) {
  return {{"kind", "failure"}, {"cell", cell}, {"case", case_id}, {"message", message}};
}

/// The lines of `page` between the heading `title` and the next blank line after its table.
std::vector<std::string> table_rows(const std::string &page, const std::string &title) {
  std::vector<std::string> rows;
  std::istringstream in(page.substr(page.find(title)));
  std::string line;
  bool in_table = false;
  while (std::getline(in, line)) {
    if (line.rfind("|", 0) == 0)
      in_table = true, rows.push_back(line);
    else if (in_table)
      break;
  }
  return rows;
}

/// The column separators of a table row: '|' not escaped by a backslash.
std::size_t columns_of(const std::string &row) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < row.size(); ++i)
    if (row[i] == '|' && (i == 0 || row[i - 1] != '\\'))
      ++n;
  return n;
}

} // namespace

TEST_CASE("markdown_inline makes run text inert on one line", "[report][markdown]") {
  const std::string out = markdown_inline(hostile, 1000);
  CHECK(out.find('\n') == std::string::npos);
  CHECK(out.find('\r') == std::string::npos);
  // Every character that starts markup is escaped: none stands unescaped.
  for (std::size_t i = 0; i < out.size(); ++i)
    if (std::string_view("<>|`*[]()&$@~#!_").find(out[i]) != std::string_view::npos) {
      INFO(out << " at " << i);
      REQUIRE(i > 0);
      CHECK(out[i - 1] == '\\');
    }
  CHECK_THAT(out, Catch::Contains("\\<script\\>"));
  CHECK_THAT(out, Catch::Contains("\\\\\\| end")); // a backslash in the text is escaped too
  // Cut by characters, never inside one: "é" is two bytes.
  CHECK(markdown_inline("ééééé", 3) == "ééé…");
  CHECK(markdown_inline("abc", 3) == "abc");
  // Bytes that are no UTF-8 become U+FFFD; C1 controls a blank.
  CHECK(markdown_inline(std::string("a\xff"
                                    "b\xc2\x85"
                                    "c"),
                        10) == "a\xEF\xBF\xBD"
                               "b c");
}

TEST_CASE("the step summary of a failing simulated run: verdict, cells, failing cases",
          "[report][markdown]") {
  json s = minimal_summary();
  s["problems"] = {
      problem("b", "mem.alloc", "fail: bytes differ [alloc.cpp:12]"),
      {{"kind", "cell_error"}, {"cell", "lost"}, {"case", ""}, {"message", "could not start"}}};
  const std::string page = summary_markdown(s, {step_summary_budget, "out/dir"});
  INFO(page);
  CHECK(page.rfind("## cuparity: m — FAILED (SIMULATED DRIVER)\n", 0) == 0);
  CHECK_THAT(page, Catch::Contains("> **SIMULATED DRIVER**"));
  CHECK_THAT(page, Catch::Contains("**FAILED** (exit 1): 2 results in 3 cells; 2 problems"));
  CHECK_THAT(page, Catch::Contains("| b | nvidia (fallback) | legacy | 0 | 1 |"));
  CHECK_THAT(page, Catch::Contains("| lost | not run | | 0 | 0 |"));
  const auto failing = table_rows(page, "### Failing cases");
  REQUIRE(failing.size() == 3); // header, separator, one case
  CHECK(failing[2] == "| b | mem.alloc | failure | fail: bytes differ \\[alloc.cpp:12\\] |");
  const auto run = table_rows(page, "### Problems no case carries");
  REQUIRE(run.size() == 3);
  CHECK(run[2] == "| cell\\_error | lost | could not start |");
  CHECK_THAT(page, Catch::EndsWith("Every result is in summary.json and junit.xml in out/dir.\n"));
  // A real driver's page carries no warning.
  s["provenance"]["simulated"] = false;
  CHECK_THAT(summary_markdown(s, {}), !Catch::Contains("SIMULATED"));
}

TEST_CASE("the step summary says the run's verdict as written: it judges nothing again",
          "[report][markdown]") {
  json s = minimal_summary(); // no problem at all, yet the run said environment
  s["verdict"] = "environment";
  s["exit_code"] = 3;
  const std::string page = summary_markdown(s, {});
  CHECK_THAT(page, Catch::Contains("— ENVIRONMENT (SIMULATED DRIVER)"));
  CHECK_THAT(page, Catch::Contains("**ENVIRONMENT** (exit 3)"));
  s["coverage"] = {{"complete", false}, {"message", "1 planned pair has no result: (a, x)"}};
  CHECK_THAT(summary_markdown(s, {}),
             Catch::Contains("**Incomplete:** 1 planned pair has no result: \\(a, x\\)"));
}

TEST_CASE("markdown in a message cannot break the step summary's page", "[report][markdown]") {
  json s = minimal_summary();
  s["problems"] = {problem("b<i>", "case|x", hostile), problem("b", "y", std::string(5000, 'z'))};
  s["divergences"] = {{{"group", "g"},
                       {"case", "c"},
                       {"key", "outcome"},
                       {"values", {{"a", hostile}, {"b", "pass"}}}}};
  const std::string page = summary_markdown(s, {});
  INFO(page);
  // No HTML: the page's own text has no '<', and every one of the run's is escaped.
  for (std::size_t at = page.find('<'); at != std::string::npos; at = page.find('<', at + 1))
    CHECK(page[at - 1] == '\\');
  CHECK_THAT(page, Catch::Contains("\\<script\\>"));
  CHECK(page.find("\n# Heading") == std::string::npos);
  for (const char *title : {"### Failing cases", "### Divergences"}) {
    const auto rows = table_rows(page, title);
    REQUIRE(rows.size() >= 3);
    for (const auto &row : rows)
      CHECK(columns_of(row) == 5); // four columns: no cell text opened a fifth
  }
  // Messages are cut: a 5000-character one shows its first 300 and an ellipsis.
  CHECK_THAT(page, Catch::Contains("| b | y | failure | " + std::string(300, 'z') + "… |"));
}

TEST_CASE("latency verdicts: slower, faster and ambiguous first, paired and across processes",
          "[report][markdown]") {
  json s = minimal_summary();
  s["latency"] = json::parse(R"({
    "rounds": 5,
    "paired": [
      {"probe": "p.same", "cell": "a", "verdict": "same", "ratio": 1.001, "ci_low": 0.99,
       "ci_high": 1.01, "p_value": 0.5},
      {"probe": "p.nm", "cell": "a", "verdict": "not_measured", "reason": "no <entry>"},
      {"probe": "p.slow", "cell": "a", "verdict": "slower", "ratio": 1.05, "ci_low": 1.04,
       "ci_high": 1.06, "p_value": 0.001},
      {"probe": "p.amb", "cell": "a", "verdict": "ambiguous", "ratio": 1.01},
      {"probe": "p.fast", "cell": "a", "verdict": "faster", "ratio": 0.9, "control": true}],
    "comparisons": [
      {"probe": "q", "a": "a", "b": "b", "verdict": "same", "ratio": 1.0},
      {"probe": "q", "a": "a", "b": "c", "verdict": "faster", "ratio": 0.8}],
    "baseline": [
      {"probe": "r", "b": "a", "verdict": "same", "ratio": 1.0, "regression": false},
      {"probe": "r", "b": "b", "verdict": "slower", "ratio": 1.3, "regression": true}],
    "noise": {"target_cv": 0.03, "over_target": [{"probe": "p", "series": "a", "rcv": 0.1}]}
  })");
  const std::string page = summary_markdown(s, {});
  INFO(page);
  CHECK_THAT(page, Catch::Contains("5 rounds: paired 1 slower, 1 faster, 1 ambiguous, 1 same, 1 "
                                   "not\\_measured; across processes 1 faster, 1 same; against "
                                   "the baseline 1 regression, 1 same."));
  const auto paired = table_rows(page, "#### Paired");
  REQUIRE(paired.size() == 7);
  CHECK(paired[2] == "| p.slow | a | slower | 1.05 | 1.04–1.06 | 0.001 |");
  CHECK_THAT(paired[3],
             Catch::StartsWith("| p.fast | a | faster \\(same-address control\\) | 0.9 |"));
  CHECK_THAT(paired[4], Catch::StartsWith("| p.amb |"));
  CHECK_THAT(paired[5], Catch::StartsWith("| p.same |"));
  CHECK(paired[6] == "| p.nm | a | not measured: no \\<entry\\> | – | – | – |");
  const auto across = table_rows(page, "#### Across processes");
  REQUIRE(across.size() == 4);
  CHECK_THAT(across[2], Catch::StartsWith("| q | a | c | faster | 0.8 |"));
  const auto baseline = table_rows(page, "#### Against the baseline");
  REQUIRE(baseline.size() == 4);
  CHECK_THAT(baseline[2], Catch::EndsWith("| yes |"));
  CHECK_THAT(page, Catch::Contains("Noise: 1 series spread beyond the robust-CV target of 0.03"));
}

TEST_CASE("the step summary stays within its budget, saying what it left out",
          "[report][markdown]") {
  json s = minimal_summary();
  // 20,000 failing cases with 300-character messages: about 7 MB listed in full.
  json problems = json::array();
  for (int i = 0; i < 20000; ++i)
    problems.push_back(problem("cell-" + std::to_string(i % 7), "case." + std::to_string(i),
                               std::string(400, 'm')));
  s["problems"] = std::move(problems);
  s["latency"] = {{"rounds", 1},
                  {"paired", {{{"probe", "p"}, {"cell", "a"}, {"verdict", "slower"}}}}};
  const std::string page = summary_markdown(s, {});
  INFO(page.substr(page.size() - 2000));
  CHECK(page.size() <= step_summary_budget);
  CHECK(page.size() > step_summary_budget - 8192); // it used its room
  const auto rows = table_rows(page, "### Failing cases");
  const std::size_t listed = rows.size() - 2;
  CHECK(listed > 1000);
  CHECK_THAT(page, Catch::Contains("…and " + std::to_string(20000 - listed) +
                                   " more failing cases not listed here, to keep this page under "
                                   "GitHub's 1 MiB step-summary cap"));
  // What came after the full list is named, not dropped silently.
  CHECK_THAT(page, Catch::Contains("_1 paired verdicts not listed here"));
  CHECK_THAT(page, Catch::EndsWith("Every result is in summary.json and junit.xml.\n"));
  // A smaller budget (a step summary that holds most of the cap already) is kept as well.
  const std::string small = summary_markdown(s, {64 << 10, ""});
  CHECK(small.size() <= std::size_t{64} << 10);
  CHECK_THAT(small, Catch::Contains("more failing cases not listed"));
  // Under the compact size: the title and the verdict line alone; nothing when they do not fit.
  const std::string compact = summary_markdown(s, {4096, ""});
  CHECK(compact == "## cuparity: m — FAILED (SIMULATED DRIVER)\n\n**FAILED** (exit 1): 2 "
                   "results in 3 cells; 20000 problems, 0 divergences, 0 allowed non-passes; "
                   "functional phase 1.5 s.\n");
  CHECK(summary_markdown(s, {40, ""}).empty());
}

TEST_CASE("the step summary reads a malformed summary's members as absent, never throwing",
          "[report][markdown]") {
  json s = {{"verdict", 3},
            {"cells", "x"},
            {"problems", {1, "two", {{"case", 3}}}},
            {"latency", {{"paired", {{{"verdict", 7}}}}}}};
  std::string page;
  REQUIRE_NOTHROW(page = summary_markdown(s, {}));
  CHECK_THAT(page, Catch::StartsWith("## cuparity:  — NO VERDICT\n"));
  CHECK_NOTHROW(summary_markdown(json("not an object"), {}));
}
