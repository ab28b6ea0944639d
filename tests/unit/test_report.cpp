// The run's outputs from hand-made records: junit.xml, the console table and summary.json.
#include "harness/protocol/records.hpp"
#include "harness/report/junit_writer.hpp"
#include "harness/report/summary.hpp"
#include "harness/report/summary_json_writer.hpp"
#include "harness/report/summary_reader.hpp"
#include "harness/report/xml_writer.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace cuparity;
namespace fs = std::filesystem;

namespace {

std::string scratch_file(const std::string &name) {
  auto dir = fs::temp_directory_path() / "cuparity-report-tests";
  fs::create_directories(dir);
  return (dir / name).string();
}

/// The plan of a run that covered every pair it recorded.
std::vector<planned_pair> all_pairs(const std::vector<nlohmann::json> &records) {
  std::vector<planned_pair> out;
  for (const auto &r : records)
    if (is_record(r, record_type::case_result) &&
        std::find(out.begin(), out.end(), planned_pair{r["cell"], r["case"]}) == out.end())
      out.emplace_back(r["cell"], r["case"]);
  return out;
}

std::string slurp(const std::string &path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), {}};
}

matrix fixture_matrix() {
  const auto path = scratch_file("fixture.toml");
  std::ofstream(path) << R"(
[matrix]
name = "report <&> \"fixture\""
description = "cells that agree, diverge and fail"
[axes]
A = ["0", "1"]
B = [false, "x&y"]
[[include]]
label = "lost"
A = "2"
[[expect]]
when = { A = "1" }
binding = "nvidia"
[[expect.allow]]
cases = ["mem.*"]
outcomes = ["fail"]
reason = "known"
)";
  return load_matrix(path, [](const std::string &) { return true; });
}

nlohmann::json cell_record(const std::string &id, const std::string &binding,
                           const std::string &stream0, bool fallback = false) {
  return make_record(record_type::cell,
                     {{"cell", id},
                      {"device", "sim <0>"},
                      {"startup_ms", {{"total", 1.5}}},
                      {"config",
                       {{"binding", binding},
                        {"stream0", stream0},
                        {"fallback", fallback},
                        {"driver_path", "/d"},
                        {"include_path", "/i"},
                        {"warnings", nlohmann::json::array({"a 'quoted' <warning>"})}}}});
}

nlohmann::json result(const std::string &cell, const std::string &id, outcome o,
                      const std::string &message = "",
                      nlohmann::json obs = nlohmann::json::object(), double ms = 1.25) {
  return to_json(case_record{cell, id, o, message, std::move(obs), ms});
}

std::vector<nlohmann::json> fixture_records() {
  return {
      cell_record("A=0,B=-", "internal", "legacy"),
      cell_record("A=0,B=x&y", "internal", "legacy"),
      cell_record("A=1,B=-", "nvidia", "legacy", true),
      cell_record("A=1,B=x&y", "internal", "per-thread"),
      make_record(record_type::cell_error,
                  {{"cell", "lost"}, {"kind", "spawn"}, {"message", "could not <start>"}}),
      result("A=0,B=-", "mem.alloc", outcome::pass, "", {{"bytes", 16}}, 2.5),
      result("A=0,B=x&y", "mem.alloc", outcome::pass, "", {{"bytes", 32}}, 0.5),
      result("A=1,B=-", "mem.alloc", outcome::fail, "bad & worse", {}, 3),
      result("A=1,B=x&y", "mem.alloc", outcome::fail, "expected"),
      result("A=0,B=-", "stream.sync", outcome::not_supported, "no <streams>"),
      result("A=0,B=x&y", "stream.sync", outcome::crash, "signal \"11\""),
      result("A=1,B=-", "stream.sync", outcome::pass),
      result("A=1,B=x&y", "stream.sync", outcome::pass),
      result("A=1,B=x&y", "launch.long", outcome::timeout,
             std::string(150, 'x') + " <tail> " + std::string(100, 'y')),
  };
}

nlohmann::json fixture_latency() {
  return nlohmann::json::parse(R"({
  "rounds": 3,
  "probes": [{"name": "launch.empty", "unit": "us"}, {"name": "mem.copy", "unit": "ns"}],
  "stats": [
    {"probe": "launch.empty", "series": "A=0,B=-", "median": 3.14159, "rcv": 0.0123, "cv": 0.02},
    {"probe": "launch.empty", "series": "A=1,B=-", "median": 2.5, "cv": 0.015},
    {"probe": "mem.copy", "series": "A=0,B=-", "median": 1234.5678, "rcv": 0.5, "cv": 0.25}
  ],
  "overhead": [{"probe": "launch.empty", "cell": "A=1,B=-", "ratio": 1.0525, "delta_ns": 0.125}],
  "comparisons": [
    {"probe": "launch.empty", "a": "A=0,B=-", "b": "A=1,B=-", "verdict": "slower", "ratio": 1.25,
     "ci_low": 1.1, "ci_high": 1.4, "p_value": 0.001, "mde": 0.12},
    {"probe": "mem.copy", "a": "A=0,B=-", "b": "A=1,B=-", "verdict": "same", "ratio": 1,
     "ci_low": 0.9, "ci_high": 1.1, "p_value": 0.5}
  ],
  "paired": [
    {"probe": "launch.empty", "cell": "A=0,B=-", "verdict": "slower", "ratio": 1.031,
     "ci_low": 1.027, "ci_high": 1.035, "p_value": 0.001, "mde": 0.004, "pairs": 2000,
     "same_address": false},
    {"probe": "launch.empty", "cell": "A=1,B=-", "verdict": "same", "ratio": 1.001,
     "ci_low": 0.998, "ci_high": 1.004, "p_value": 0.5, "mde": 0.003, "pairs": 2000,
     "same_address": true},
    {"probe": "mem.copy", "cell": "A=1,B=-", "verdict": "not_measured",
     "reason": "the nvidia backend has no cuMemcpy"}
  ],
  "noise": {"target_cv": 0.03,
            "over_target": [{"probe": "mem.copy", "rcv": 0.5}, {"probe": "mem.copy", "rcv": 0.25}],
            "reference": {"probe": "host.spin", "rcv_max": 0.0456}},
  "baseline": [{"probe": "mem.copy", "b": "A=0,B=-", "verdict": "regression", "ratio": 1.5}]
})");
}

run_facts fixture_facts() {
  run_facts f;
  f.provenance = {{"simulated", true}, {"revision", "abc"}};
  f.started = "2024-01-01T00:00:00Z";
  f.finished = "2024-01-01T00:01:00Z";
  f.functional_wall_s = 12.345;
  f.shard = "1/2";
  f.latency = fixture_latency();
  return f;
}

/// The outputs of the fixture before the output writers existed (string streams and a hand-made
/// escape); the matrix path, which depends on the temporary folder, reads {matrix}.
const std::string expected_junit = R"xml(<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="cuparity report &lt;&amp;&gt; &quot;fixture&quot;" tests="14" failures="8" errors="0" skipped="1">
  <testsuite name="A=0,B=-" tests="2" failures="0" errors="0" skipped="1" time="0.00375">
    <properties>
      <property name="env.A" value="0"/>
      <property name="env.B" value="&lt;unset&gt;"/>
      <property name="config.binding" value="internal"/>
      <property name="config.driver_path" value="/d"/>
      <property name="config.fallback" value="false"/>
      <property name="config.include_path" value="/i"/>
      <property name="config.stream0" value="legacy"/>
      <property name="config.warnings" value="[&quot;a &apos;quoted&apos; &lt;warning&gt;&quot;]"/>
      <property name="cuparity.binding" value="internal"/>
      <property name="cuparity.stream0" value="legacy"/>
      <property name="cuparity.driver" value="/d"/>
      <property name="cuparity.simulated" value="false"/>
    </properties>
    <testcase classname="cuparity.mem" name="mem.alloc" time="0.0025">
    </testcase>
    <testcase classname="cuparity.stream" name="stream.sync" time="0.00125">
      <skipped message="no &lt;streams&gt;"/>
    </testcase>
  </testsuite>
  <testsuite name="A=0,B=x&amp;y" tests="2" failures="1" errors="0" skipped="0" time="0.00175">
    <properties>
      <property name="env.A" value="0"/>
      <property name="env.B" value="x&amp;y"/>
      <property name="config.binding" value="internal"/>
      <property name="config.driver_path" value="/d"/>
      <property name="config.fallback" value="false"/>
      <property name="config.include_path" value="/i"/>
      <property name="config.stream0" value="legacy"/>
      <property name="config.warnings" value="[&quot;a &apos;quoted&apos; &lt;warning&gt;&quot;]"/>
      <property name="cuparity.binding" value="internal"/>
      <property name="cuparity.stream0" value="legacy"/>
      <property name="cuparity.driver" value="/d"/>
      <property name="cuparity.simulated" value="false"/>
    </properties>
    <testcase classname="cuparity.mem" name="mem.alloc" time="0.0005">
    </testcase>
    <testcase classname="cuparity.stream" name="stream.sync" time="0.00125">
      <failure type="crash" message="crash: signal &quot;11&quot;">crash: signal &quot;11&quot;</failure>
    </testcase>
  </testsuite>
  <testsuite name="A=1,B=-" tests="2" failures="1" errors="0" skipped="0" time="0.00425">
    <properties>
      <property name="env.A" value="1"/>
      <property name="env.B" value="&lt;unset&gt;"/>
      <property name="config.binding" value="nvidia"/>
      <property name="config.driver_path" value="/d"/>
      <property name="config.fallback" value="true"/>
      <property name="config.include_path" value="/i"/>
      <property name="config.stream0" value="legacy"/>
      <property name="config.warnings" value="[&quot;a &apos;quoted&apos; &lt;warning&gt;&quot;]"/>
      <property name="cuparity.binding" value="nvidia"/>
      <property name="cuparity.stream0" value="legacy"/>
      <property name="cuparity.driver" value="/d"/>
      <property name="cuparity.simulated" value="false"/>
    </properties>
    <testcase classname="cuparity.mem" name="mem.alloc" time="0.003">
    </testcase>
    <testcase classname="cuparity.stream" name="stream.sync" time="0.00125">
      <failure type="pass" message="passed, but fail is expected: update the matrix or baseline">passed, but fail is expected: update the matrix or baseline</failure>
    </testcase>
  </testsuite>
  <testsuite name="A=1,B=x&amp;y" tests="3" failures="1" errors="0" skipped="0" time="0.00375">
    <properties>
      <property name="env.A" value="1"/>
      <property name="env.B" value="x&amp;y"/>
      <property name="config.binding" value="internal"/>
      <property name="config.driver_path" value="/d"/>
      <property name="config.fallback" value="false"/>
      <property name="config.include_path" value="/i"/>
      <property name="config.stream0" value="per-thread"/>
      <property name="config.warnings" value="[&quot;a &apos;quoted&apos; &lt;warning&gt;&quot;]"/>
      <property name="cuparity.binding" value="internal"/>
      <property name="cuparity.stream0" value="per-thread"/>
      <property name="cuparity.driver" value="/d"/>
      <property name="cuparity.simulated" value="false"/>
    </properties>
    <testcase classname="cuparity.launch" name="launch.long" time="0.00125">
      <failure type="timeout" message="timeout: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx &lt;tail&gt; yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy">timeout: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx &lt;tail&gt; yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy</failure>
    </testcase>
    <testcase classname="cuparity.mem" name="mem.alloc" time="0.00125">
    </testcase>
    <testcase classname="cuparity.stream" name="stream.sync" time="0.00125">
    </testcase>
  </testsuite>
  <testsuite name="equivalence" tests="2" failures="2" errors="0" skipped="0">
    <testcase classname="cuparity.equivalence" name="mem.alloc observations.bytes">
      <failure type="divergence" message="observations.bytes differs in group stream0=legacy driver=/d include=/i">A=0,B=-: 16
A=0,B=x&amp;y: 32
</failure>
    </testcase>
    <testcase classname="cuparity.equivalence" name="stream.sync outcome">
      <failure type="divergence" message="outcome differs in group stream0=legacy driver=/d include=/i">A=0,B=-: &quot;not_supported&quot;
A=0,B=x&amp;y: &quot;crash&quot;
A=1,B=-: &quot;pass&quot;
</failure>
    </testcase>
  </testsuite>
  <testsuite name="run" tests="3" failures="3" errors="0" skipped="0">
    <testcase classname="cuparity.run" name="cell_error [lost]">
      <failure type="cell_error" message="could not &lt;start&gt;">could not &lt;start&gt;</failure>
    </testcase>
    <testcase classname="cuparity.run" name="expectation [A=1,B=x&amp;y]">
      <failure type="expectation" message="binding is internal, expected nvidia (expected by {matrix}:11:1)">binding is internal, expected nvidia (expected by {matrix}:11:1)</failure>
    </testcase>
    <testcase classname="cuparity.run" name="stale_expectation [gone] mem.alloc">
      <failure type="stale_expectation" message="baseline line 4 names a cell that does not exist">baseline line 4 names a cell that does not exist</failure>
    </testcase>
  </testsuite>
</testsuites>
)xml";

const std::string expected_console =
    R"txt(*** SIMULATED DRIVER: these results describe cuparity's CPU stand-in, not a GPU ***
cell       binding   stream0     pass  fail  n/s  other  group
A=0,B=-    internal  legacy         1     0    1      0  G0
A=0,B=x&y  internal  legacy         1     0    0      1  G0
A=1,B=-    nvidia*   legacy         1     1    0      0  G0
A=1,B=x&y  internal  per-thread     1     1    0      1  G1
lost       (not run)
  G0: stream0=legacy driver=/d include=/i (3 cells)
  G1: stream0=per-thread driver=/d include=/i (1 cells)
  (* = fallback from nvidia)
PROBLEM cell_error [lost]: could not <start>
PROBLEM expectation [A=1,B=x&y]: binding is internal, expected nvidia (expected by {matrix}:11:1)
PROBLEM failure [A=0,B=x&y] stream.sync: crash: signal "11"
PROBLEM unexpected_pass [A=1,B=-] stream.sync: passed, but fail is expected: update the matrix or baseline
PROBLEM failure [A=1,B=x&y] launch.long: timeout: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx <tail> yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy
PROBLEM stale_expectation [gone] mem.alloc: baseline line 4 names a cell that does not exist
DIVERGENCE mem.alloc observations.bytes in stream0=legacy driver=/d include=/i:
    A=0,B=-: 16
    A=0,B=x&y: 32
DIVERGENCE stream.sync outcome in stream0=legacy driver=/d include=/i:
    A=0,B=-: "not_supported"
    A=0,B=x&y: "crash"
    A=1,B=-: "pass"
latency (3 rounds; median per round, robust CV and CV over the rounds; facade overhead vs raw pointer, paired in one process):
  launch.empty               A=0,B=-: 3.142 us rcv 1.2% cv 2%; A=1,B=-: 2.5 us rcv 0% cv 1.5% (x1.052, +0.125 ns);
  mem.copy                   A=0,B=-: 1235 ns rcv 50% cv 25%;
  LATENCY launch.empty: A=1,B=- vs A=0,B=- is slower across processes (ratio 1.2, CI 1.1..1.4, p 0.001, MDE 12%)
  paired (nvidia / internal in one process): 1 not_measured 1 same 1 slower
  PAIRED launch.empty in A=0,B=-: nvidia is slower (x1.031, CI 1.027..1.035, p 0.001, MDE 0.4%, 2000 pairs)
  PAIRED mem.copy in A=1,B=-: not measured (the nvidia backend has no cuMemcpy)
  noise: 1 of 2 probes spread beyond the 3% robust-CV target (largest: mem.copy 50%); the driver-free host.spin spread up to 4.6% over the same rounds
  BASELINE mem.copy A=0,B=-: regression (ratio 1.5)
time summed over 4 cell processes: process start 0.0 s, cuInit 0.0 s, primary context 0.0 s, waiting for the GPU lock 0.0 s, cases 0.0 s (helpers 0.0 s, 0 helper starts 0.0 s), exit 0.0 s
  by suite: mem 0.0 s; stream 0.0 s; launch 0.0 s
  costliest cases: mem.alloc 0.0 s (max 0.0 s); stream.sync 0.0 s (max 0.0 s); launch.long 0.0 s (max 0.0 s)
cuparity: report <&> "fixture": 9 results in 5 cells, 2 semantic groups; 6 problems, 2 divergences, 2 allowed non-passes; functional phase 12.3 s; latency phase: paired 1 not_measured, 1 same, 1 slower; across processes 1 same, 1 slower; against the baseline 1 regression (reported, not failed: fail_on_regression = false): FAILED
)txt";

struct fixture {
  matrix m = fixture_matrix();
  std::vector<nlohmann::json> records = fixture_records();
  std::vector<baseline_entry> baseline{{"stream.sync", "A=1,B=-", outcome::fail, "", 3},
                                       {"mem.alloc", "gone", outcome::crash, "", 4}};
  comparison c = compare_results(m, records, all_pairs(records), baseline,
                                 [](const std::string &) { return true; });
  run_facts facts = fixture_facts();

  /// `text` with the matrix path as {matrix}.
  [[nodiscard]] std::string portable(std::string text) const {
    for (auto at = text.find(m.path); at != std::string::npos; at = text.find(m.path, at))
      text.replace(at, m.path.size(), "{matrix}");
    return text;
  }
  [[nodiscard]] std::string console() const {
    std::ostringstream out;
    print_console(out, m, records, c, facts);
    return out.str();
  }
};

/// Whether every byte is one XML 1.0 allows in a document (tab, newline, CR, and no other C0).
bool only_xml_characters(const std::string &text) {
  for (unsigned char ch : text)
    if (ch < 0x20 && ch != '\t' && ch != '\n' && ch != '\r')
      return false;
  return true;
}

} // namespace

TEST_CASE("junit.xml of a fixture run is unchanged by the output writers", "[report][junit]") {
  fixture f;
  CHECK(f.portable(junit_xml(f.m, f.records, f.c)) == expected_junit);
  const auto path = scratch_file("fixture.junit.xml");
  write_junit(path, f.m, f.records, f.c);
  CHECK(f.portable(slurp(path)) == expected_junit);
}

TEST_CASE("junit.xml properties: each cell's binding, stream0, driver and package set",
          "[report][junit]") {
  const auto path = scratch_file("packages.toml");
  std::ofstream(path) << R"(
[matrix]
name = "packages"
[axes]
packages = ["simpkg==1.0", false]
NUMBA_CUDA_USE_NVIDIA_BINDING = ["1"]
)";
  const matrix m = load_matrix(path, [](const std::string &) { return true; });
  REQUIRE(m.cells.size() == 2);
  const std::string with = m.cells[0].id, without = m.cells[1].id;
  std::vector<nlohmann::json> records;
  for (const auto &c : m.cells) {
    auto rec = cell_record(c.id, "nvidia", "per-thread");
    rec["config"]["simulated"] = true;
    rec["driver"] = {{"driver_version", 13000}, {"driver_version_text", "13.0"}};
    records.push_back(rec);
    records.push_back(result(c.id, "mem.alloc", outcome::pass));
  }
  const comparison c =
      compare_results(m, records, all_pairs(records), {}, [](const std::string &) { return true; });
  const nlohmann::json provenance = {
      {"packages",
       {{"cells",
         {{with, {{"value", "simpkg==1.0"}, {"distributions", {{"simpkg", "1.0"}, {"dep", "2"}}}}},
          {without, {{"value", nullptr}, {"distributions", nullptr}}}}}}}};
  const std::string xml = junit_xml(m, records, c, provenance);
  const auto suite_of = [&](const std::string &id) {
    const auto at = xml.find("<testsuite name=\"" + xml_escape(id) + "\"");
    REQUIRE(at != std::string::npos);
    return xml.substr(at, xml.find("</testsuite>", at) - at);
  };
  const std::string a = suite_of(with), b = suite_of(without);
  INFO(xml);
  for (const auto &suite : {a, b}) {
    CHECK_THAT(suite, Catch::Contains(R"(<property name="cuparity.binding" value="nvidia"/>)"));
    CHECK_THAT(suite, Catch::Contains(R"(<property name="cuparity.stream0" value="per-thread"/>)"));
    CHECK_THAT(suite, Catch::Contains(R"(<property name="cuparity.driver" value="/d"/>)"));
    CHECK_THAT(suite,
               Catch::Contains(R"(<property name="cuparity.driver_version" value="13.0"/>)"));
    CHECK_THAT(suite, Catch::Contains(R"(<property name="cuparity.simulated" value="true"/>)"));
  }
  CHECK_THAT(a, Catch::Contains(R"(<property name="cuparity.packages" value="simpkg==1.0"/>)"));
  CHECK_THAT(a,
             Catch::Contains(
                 R"(<property name="cuparity.packages.installed" value="dep==2 simpkg==1.0"/>)"));
  // false: nothing installed, the site's own packages.
  CHECK_THAT(b, Catch::Contains(R"(<property name="cuparity.packages" value=""/>)"));
  CHECK_THAT(b, Catch::Contains(R"(<property name="cuparity.packages.installed" value=""/>)"));
  // Without a packages axis there is no packages property at all (the fixture's expected_junit).
}

TEST_CASE("the console table of a fixture run is unchanged by the output writers",
          "[report][console]") {
  fixture f;
  CHECK(f.portable(f.console()) == expected_console);
}

TEST_CASE("summary.json of a fixture run: sections from the matrix, records and comparison",
          "[report][summary]") {
  fixture f;
  const auto s = make_summary(f.m, f.records, f.c, f.facts);
  CHECK(s["schema"] == summary_schema);
  CHECK(s["verdict"] == "failed");
  CHECK(s["exit_code"] == 1);
  CHECK(s["results_count"] == 9);
  CHECK(s["allowed"] == 2);
  CHECK(
      s["counts"] ==
      nlohmann::json{{"pass", 4}, {"fail", 2}, {"not_supported", 1}, {"crash", 1}, {"timeout", 1}});
  REQUIRE(s["cells"].size() == 5);
  CHECK(s["cells"][0]["counts"] == nlohmann::json{{"pass", 1}, {"not_supported", 1}});
  CHECK(s["cells"][0]["group"] == "stream0=legacy driver=/d include=/i");
  CHECK(s["cells"][0]["env"] == nlohmann::json{{"A", "0"}, {"B", nullptr}});
  CHECK(s["cells"][4]["id"] == "lost");
  CHECK(s["cells"][4]["config"].is_null());
  CHECK_FALSE(s["cells"][4].contains("group"));
  CHECK(s["groups"].size() == 2);
  CHECK(s["divergences"].size() == 2);
  std::vector<std::string> kinds;
  for (const auto &p : s["problems"])
    kinds.push_back(p["kind"]);
  CHECK(kinds == std::vector<std::string>{"cell_error", "expectation", "failure", "unexpected_pass",
                                          "failure", "stale_expectation"});
  CHECK(s["results"].size() == 9);
  CHECK(s["latency"] == f.facts.latency);
  CHECK(s["shard"] == "1/2");
}

TEST_CASE("the standard writers give what the free functions give", "[report][writers]") {
  fixture f;
  const auto dir = fs::path(scratch_file("writers"));
  fs::create_directories(dir);
  std::ostringstream console;
  const auto writers = standard_writers(dir.string(), console);
  REQUIRE(writers.size() == 3);
  write_all(writers, {f.m, f.records, f.c, f.facts});
  CHECK(slurp((dir / "summary.json").string()) ==
        make_summary(f.m, f.records, f.c, f.facts).dump(2) + "\n");
  CHECK(slurp((dir / "junit.xml").string()) == junit_xml(f.m, f.records, f.c));
  CHECK(console.str() == f.console());
}

TEST_CASE("a writer that cannot write its file says which", "[report][writers]") {
  fixture f;
  CHECK_THROWS_WITH(
      junit_writer("/nonexistent/dir/junit.xml").write({f.m, f.records, f.c, f.facts}),
      Catch::Contains("/nonexistent/dir/junit.xml"));
  CHECK_THROWS_WITH(
      summary_json_writer("/nonexistent/dir/summary.json").write({f.m, f.records, f.c, f.facts}),
      Catch::Contains("/nonexistent/dir/summary.json"));
}

TEST_CASE("summary.json as written is read back: its coverage and verdict agree",
          "[report][summaries]") {
  fixture f;
  auto s = make_summary(f.m, f.records, f.c, f.facts);
  s["latency"] = nullptr; // the fixture's latency is a stand-in, not a cuparity.latency block
  const auto run = recorded_run_from_json(s, "written.json");
  REQUIRE(run.coverage);
  CHECK(run.coverage->complete() == s["coverage"]["complete"].get<bool>());
  // The same run less one cell's results: incomplete, and still read back.
  auto half = f.records;
  half.erase(std::remove_if(half.begin(), half.end(),
                            [](const nlohmann::json &r) {
                              return is_record(r, record_type::case_result) &&
                                     r["cell"] == "A=0,B=-";
                            }),
             half.end());
  const auto c = compare_results(f.m, half, all_pairs(f.records), f.baseline,
                                 [](const std::string &) { return true; });
  auto partial = make_summary(f.m, half, c, f.facts);
  partial["latency"] = nullptr;
  CHECK(partial["verdict"] == "incomplete");
  CHECK_FALSE(recorded_run_from_json(partial, "partial.json").coverage->complete());
}

namespace {

/// tests/summaries/: the corpus both summary readers are held to (its README.md).
const fs::path corpus = fs::path(CUPARITY_SOURCE_DIR) / "tests" / "summaries";

/// The reader's answer for one file: "" when it reads it, else its message.
std::string answer_of(const fs::path &file) {
  try {
    (void)read_recorded_run(file.string());
    return "";
  } catch (const summary_input_error &e) {
    return e.what();
  }
}

} // namespace

TEST_CASE("the C++ reader answers every summary of tests/summaries as expected.json says",
          "[report][summaries]") {
  const auto expected = nlohmann::json::parse(slurp((corpus / "expected.json").string()));
  std::size_t files = 0;
  for (const auto &entry : fs::directory_iterator(corpus)) {
    const auto name = entry.path().filename().string();
    if (name.size() < 13 || name.substr(name.size() - 13) != ".summary.json")
      continue;
    ++files;
    INFO(name);
    REQUIRE(expected.contains(name));
    const auto &want = expected[name];
    const auto got = answer_of(entry.path());
    if (want.value("accepted", false)) {
      CHECK(got.empty());
      continue;
    }
    const auto head = entry.path().string() + ": " + want["member"].get<std::string>() + ": ";
    CHECK(got.rfind(head, 0) == 0);
    CHECK_THAT(got, Catch::Contains(want["says"].get<std::string>()));
  }
  CHECK(files == expected.size());
  CHECK(files > 0);
}

TEST_CASE("xml escaping: the markup characters become entities, other text stays",
          "[report][xml]") {
  CHECK(xml_escape("a<b>&\"c'") == "a&lt;b&gt;&amp;&quot;c&apos;");
  CHECK(xml_escape("tab\tnew\nline\rreturn") == "tab\tnew\nline\rreturn");
  CHECK(xml_escape("caf\xC3\xA9 \xE2\x9C\x93") == "caf\xC3\xA9 \xE2\x9C\x93"); // UTF-8 is kept
  CHECK(xml_escape("") == "");
}

TEST_CASE("xml escaping: control characters XML 1.0 forbids become U+FFFD", "[report][xml]") {
  const std::string fffd = "\xEF\xBF\xBD";
  CHECK(xml_escape(std::string("a\x01") + "b") == "a" + fffd + "b");
  CHECK(xml_escape(std::string(1, '\0')) == fffd);
  CHECK(xml_escape("\x1b[31mred\x1b[0m") == fffd + "[31mred" + fffd + "[0m");
  CHECK(xml_escape("\x08\x0b\x0c\x1f") == fffd + fffd + fffd + fffd);
  CHECK(xml_escape("\x7f") == "\x7f"); // DEL is allowed (discouraged) in XML 1.0
}

TEST_CASE("junit.xml stays well-formed when a case's message holds control characters",
          "[report][xml][junit]") {
  fixture f;
  f.records.push_back(result("A=1,B=x&y", "stream.sync", outcome::crash,
                             std::string("SIGSEGV\x01\x02 at \x1b[1m0x0\x1b[0m") + '\0' + "end"));
  f.c = compare_results(f.m, f.records, all_pairs(f.records), f.baseline,
                        [](const std::string &) { return true; });
  const auto xml = junit_xml(f.m, f.records, f.c);
  CHECK(only_xml_characters(xml));
  const std::string fffd = "\xEF\xBF\xBD";
  CHECK_THAT(xml, Catch::Contains("crash: SIGSEGV" + fffd + fffd + " at " + fffd + "[1m0x0" + fffd +
                                  "[0m" + fffd + "end"));
}

TEST_CASE("xml elements: text on one line, self-closing, or a block even when empty",
          "[report][xml]") {
  xml_element root("r");
  root.attribute("n", 2.5).attribute("s", "a\"b");
  root.add(xml_element("leaf")).attribute("k", std::size_t{3}).self_closing();
  root.add(xml_element("t")).text("x<y");
  root.add(xml_element("empty"));
  CHECK(xml_document(root) == "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                              "<r n=\"2.5\" s=\"a&quot;b\">\n"
                              "  <leaf k=\"3\"/>\n"
                              "  <t>x&lt;y</t>\n"
                              "  <empty>\n"
                              "  </empty>\n"
                              "</r>\n");
  xml_element bad("bad");
  bad.text("t");
  bad.add(xml_element("child"));
  std::ostringstream out;
  CHECK_THROWS_AS(bad.write(out), std::logic_error);
}
