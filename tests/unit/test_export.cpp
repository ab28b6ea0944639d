// `cuparity export`'s figures and both formats from summaries written here: the keys, the bounds,
// the units each dashboard takes, and bad members named by their path.
#include "harness/report/export_bencher.hpp"
#include "harness/report/export_figures.hpp"
#include "harness/report/export_pyperf.hpp"
#include "harness/report/summary_reader.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <unistd.h>

using namespace cuparity;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

/// A summary of two cells with one ns probe and one GB/s probe, a measured and an unmeasured
/// paired verdict, on two H200s.
json summary() {
  return {
      {"schema", "cuparity.summary/1"},
      {"verdict", "equivalent"},
      {"exit_code", 0},
      {"started", "2026-12-03T07:57:31Z"},
      {"functional_wall_s", 1.5},
      {"matrix", {{"name", "m"}}},
      {"provenance",
       {{"git_revision", "0123456789abcdef"},
        {"gpus", {"NVIDIA H200", "NVIDIA H200"}},
        {"driver_release", "580.159.04"},
        {"driver_version_text", "13.0"},
        {"simulated", false}}},
      {"results", json::array()},
      {"divergences", json::array()},
      {"latency",
       {{"schema", "cuparity.latency/2"},
        {"probes",
         {{{"name", "launch"},
           {"unit", "ns"},
           {"samples", {{"a", {300.0, 100.0, 200.0}}, {"direct:a", {90.0}}, {"b", {0.0, 5.0}}}}},
          {{"name", "copy"}, {"unit", "GB/s"}, {"samples", {{"other:b", {4.0, 2.0}}}}}}},
        {"paired",
         {{{"probe", "launch"},
           {"cell", "a"},
           {"verdict", "same"},
           {"ratio", 1.01},
           {"ci_low", 0.99},
           {"ci_high", 1.02}},
          {{"probe", "copy"},
           {"cell", "b"},
           {"verdict", "ambiguous"},
           {"ratio", 0.9},
           {"ci_low", 0.8},
           {"ci_high", 1.1}},
          {{"probe", "launch"}, {"cell", "b"}, {"verdict", "not_measured"}}}}}}};
}

/// Writes `s` as summary.json in a folder of its own and returns the folder.
std::string written(const json &s, const std::string &name) {
  const auto dir =
      fs::temp_directory_path() / ("cuparity-export-" + name + "-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "summary.json") << s.dump();
  return dir.string();
}

const export_figure &figure(const export_run &run, const std::string &name) {
  for (const auto &f : run.figures)
    if (f.name == name)
      return f;
  FAIL("no figure " << name);
  throw std::logic_error("unreachable");
}

} // namespace

TEST_CASE("export: each figure keyed by matrix, cell, probe and series, with its bounds",
          "[export]") {
  const auto run = read_export_run(written(summary(), "figures"));
  CHECK(run.context.matrix == "m");
  CHECK(run.context.gpu == "2x NVIDIA H200");
  CHECK(run.context.driver_release == "580.159.04");
  CHECK(run.context.revision == "0123456789abcdef");
  REQUIRE(run.figures.size() == 1 + 4 + 2);
  CHECK(run.figures.front().name == "m | functional-phase");
  CHECK(run.figures.front().value == 1.5);
  const auto &a = figure(run, "m | a | launch | facade");
  CHECK(a.value == 200.0);
  CHECK(*a.lower == 100.0);
  CHECK(*a.upper == 300.0);
  CHECK(a.unit == "ns");
  CHECK(figure(run, "m | a | launch | direct").cell == "a");
  CHECK(figure(run, "m | b | copy | other").unit == "GB/s");
  const auto &p = figure(run, "m | a | launch | paired-nvidia-internal");
  CHECK(p.value == 1.01);
  CHECK(*p.lower == 0.99);
  CHECK(*p.upper == 1.02);
  CHECK(p.verdict == "same");
  CHECK(run.not_measured == 1);
  CHECK(figure_name(run, a, true) == "m | a | launch | facade [2x NVIDIA H200, driver 580.159.04, "
                                     "0123456789ab]");
}

TEST_CASE("export: without a driver release the driver is named by its CUDA version", "[export]") {
  auto s = summary();
  s["provenance"].erase("driver_release");
  const auto run = read_export_run(written(s, "no-release"));
  CHECK(driver_label(run.context) == "CUDA 13.0");
}

TEST_CASE("export: bencher measures per unit, bounds where the figure has them", "[export]") {
  CHECK(bencher_measure("ns") == "latency");
  CHECK(bencher_measure("GB/s") == "bandwidth-gb-s");
  CHECK(bencher_measure("s") == "wall-time-s");
  CHECK(bencher_measure("ratio") == "ratio-nvidia-internal");
  CHECK(bencher_measure("ops/s") == "value-opss");
  const auto bmf = bencher_json(read_export_run(written(summary(), "bencher")), false);
  CHECK(bmf["m | functional-phase"] == json{{"wall-time-s", {{"value", 1.5}}}});
  CHECK(bmf["m | a | launch | facade"]["latency"] ==
        json{{"value", 200.0}, {"lower_value", 100.0}, {"upper_value", 300.0}});
  CHECK(bmf["m | b | copy | paired-nvidia-internal"]["ratio-nvidia-internal"] ==
        json{{"value", 0.9}, {"lower_value", 0.8}, {"upper_value", 1.1}});
  CHECK(!bmf.contains("m | b | launch | paired-nvidia-internal")); // not_measured
}

TEST_CASE("export: pyperf values in seconds, zeros left out and counted, ratios as metadata",
          "[export]") {
  const auto suite = pyperf_json(read_export_run(written(summary(), "pyperf")), false);
  CHECK(suite["version"] == "1.0");
  CHECK(suite["metadata"]["cuparity_gpu"] == "2x NVIDIA H200");
  CHECK(suite["metadata"]["date"] == "2026-12-03 07:57:31");
  CHECK(suite["metadata"]["cuparity_values_left_out"] == 1); // b's 0.0 ns: pyperf refuses it
  // copy/paired on cell b has no facade series of b: it has nowhere to go in pyperf.
  CHECK(suite["metadata"]["cuparity_paired_left_out"] == 1);
  std::map<std::string, json> by_name;
  for (const auto &b : suite["benchmarks"])
    by_name[b["metadata"]["name"].get<std::string>()] = b;
  const auto &a = by_name.at("m | a | launch | facade");
  CHECK(a["metadata"]["unit"] == "second");
  CHECK(a["runs"][0]["values"] == json{300e-9, 100e-9, 200e-9});
  CHECK(a["metadata"]["cuparity_paired_ratio"] == 1.01);
  CHECK(a["metadata"]["cuparity_paired_verdict"] == "same");
  CHECK(by_name.at("m | b | launch | facade")["runs"][0]["values"] == json{5e-9});
  CHECK(by_name.at("m | b | copy | other")["runs"][0]["values"] == json{0.25, 0.5}); // s per GB
  CHECK(by_name.at("m | functional-phase")["runs"][0]["values"] == json{1.5});
}

TEST_CASE("export: a bad member is named by file and path", "[export]") {
  auto s = summary();
  s["latency"]["paired"][1]["ci_low"] = "low";
  CHECK_THROWS_WITH(read_export_run(written(s, "bad-ci")),
                    Catch::Contains("latency.paired[1].ci_low"));
  s = summary();
  s["matrix"].erase("name");
  CHECK_THROWS_WITH(read_export_run(written(s, "no-name")), Catch::Contains("matrix.name"));
  s = summary();
  s["functional_wall_s"] = "long";
  CHECK_THROWS_AS(read_export_run(written(s, "bad-wall")), summary_input_error);
  CHECK_THROWS_WITH(read_export_run("/nonexistent/cuparity-run"),
                    Catch::Contains("/nonexistent/cuparity-run"));
}

TEST_CASE("export: two figures of one name are refused, never one written over the other",
          "[export]") {
  auto s = summary();
  s["latency"]["probes"] = {{{"name", "launch | x"}, {"unit", "ns"}, {"samples", {{"a", {1.0}}}}},
                            {{"name", "x"}, {"unit", "ns"}, {"samples", {{"a | launch", {2.0}}}}}};
  CHECK_THROWS_WITH(read_export_run(written(s, "collide")),
                    Catch::Contains("two figures would be named 'm | a | launch | x | facade'"));
}

TEST_CASE("export: the Python probe's library series keep their cell", "[export]") {
  auto s = summary();
  s["latency"]["probes"].push_back({{"name", "py.launch.empty_kernel"},
                                    {"unit", "ns"},
                                    {"samples", {{"cupy:a", {900.0}}, {"cuda_core:a", {1200.0}}}}});
  const auto run = read_export_run(written(s, "libraries"));
  CHECK(figure(run, "m | a | py.launch.empty_kernel | cupy").cell == "a");
  CHECK(figure(run, "m | a | py.launch.empty_kernel | cuda_core").value == 1200.0);
}
