// A broken candidate driver, on the simulated driver: what the suites must catch (a driver that
// refuses kernel launches, a per-thread call acting as its legacy twin, queries that fail at
// start), against a reference and run against run, and the fault coverage command itself.
#include "harness/config/env_vars.hpp"
#include "harness/driver/driver_text.hpp"
#include "harness/protocol/exit_codes.hpp"
#include "run_support.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

using namespace cuparity;
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::string scratch(const std::string &name) {
  return test::fresh_dir("cuparity-faulted-tests", name);
}

std::string write(const std::string &path, const std::string &text) {
  return test::write_file(path, text);
}

test::vars sim_env(test::vars v = {}) {
  return test::with_sim_driver(std::move(v));
}

json summary_of(const std::string &dir) {
  return test::read_summary_json(dir);
}

/// "kind case" of every problem of a summary.
std::multiset<std::string> problems(const json &s) {
  std::multiset<std::string> out;
  for (const auto &p : s["problems"])
    out.insert(p["kind"].get<std::string>() + " " + p["case"].get<std::string>());
  return out;
}

const char *launch_cells = R"(
[matrix]
cases = ["launch.module.cubin", "launch.params.scalars", "alloc.copy.dtod"]
[axes]
NUMBA_CUDA_USE_NVIDIA_BINDING = ["0", "1"]
)";

// Every ABI cuLaunchKernel is bound at, in either null-stream mode.
const std::string no_launch = "cuLaunchKernel:error=801;cuLaunchKernel_ptsz:error=801";

} // namespace

TEST_CASE("a driver that refuses kernel launches with NOT_SUPPORTED fails the run, naming the "
          "launch cases",
          "[faulted]") {
  const auto dir = scratch("no_launch");
  const auto m = write(dir + "/m.toml", launch_cells);
  const auto res = test::run_cuparity({"run", m, "--out", dir + "/out", "--no-latency"},
                                      sim_env({{"CUPARITY_SIM_FAULTS", no_launch}}));
  INFO(res.out << res.err);
  CHECK(res.exit_code == exit_code::failures);
  const auto s = summary_of(dir + "/out");
  CHECK(problems(s) == std::multiset<std::string>{
                           "failure launch.module.cubin", "failure launch.module.cubin",
                           "failure launch.params.scalars", "failure launch.params.scalars"});
  for (const auto &r : s["results"])
    if (r["case"] == "launch.module.cubin")
      CHECK_THAT(r["message"].get<std::string>(), Catch::Contains("requirements held"));
  CHECK(s["counts"].value("not_supported", 0) == 0);
}

TEST_CASE("against a reference cell, and run against run, a lost launch is a regression",
          "[faulted]") {
  const auto dir = scratch("lost_launch");
  const auto m = write(dir + "/m.toml", std::string(R"(
[matrix]
cases = ["launch.module.cubin", "alloc.copy.dtod"]
reference = { CUPARITY_SIM_FAULTS = false }
[axes]
NUMBA_CUDA_USE_NVIDIA_BINDING = ["0", "1"]
CUPARITY_SIM_FAULTS = [false, ")") + no_launch +
                                            "\"]\n");
  auto res = test::run_cuparity({"run", m, "--out", dir + "/ref", "--no-latency"}, sim_env());
  INFO(res.out << res.err);
  CHECK(res.exit_code == exit_code::failures);
  const auto s = summary_of(dir + "/ref");
  std::size_t lost = 0;
  for (const auto &p : s["problems"])
    if (p["kind"] == "regression") {
      ++lost;
      CHECK(p["case"] == "launch.module.cubin");
      CHECK_THAT(p["message"].get<std::string>(), Catch::Contains("\"pass\" -> \"fail\""));
    }
  CHECK(lost == 2);

  // Run against run: the same cells, the second run with the broken driver.
  const auto plain = write(dir + "/plain.toml", launch_cells);
  REQUIRE(test::run_cuparity({"run", plain, "--out", dir + "/a", "--no-latency"}, sim_env())
              .exit_code == exit_code::ok);
  (void)test::run_cuparity({"run", plain, "--out", dir + "/b", "--no-latency"},
                           sim_env({{"CUPARITY_SIM_FAULTS", no_launch}}));
  res = test::run_cuparity({"compare", dir + "/a", dir + "/b", "--json", dir + "/cmp.json"},
                           sim_env());
  INFO(res.out << res.err);
  CHECK(res.exit_code == exit_code::failures);
  std::ifstream in(dir + "/cmp.json");
  const json cmp = json::parse(in);
  CHECK(cmp["counts"]["regression"] == 4);
  // The known-changes file accepts exactly those pairs.
  const auto known = write(dir + "/known.toml",
                           "[[change]]\ncase = \"launch.module.cubin\"\nkey = \"outcome\"\n"
                           "reason = \"the candidate cannot launch (test)\"\n"
                           "[[change]]\ncase = \"launch.params.scalars\"\nkey = \"outcome\"\n"
                           "after = \"fail\"\nreason = \"the candidate cannot launch (test)\"\n");
  res =
      test::run_cuparity({"compare", dir + "/a", dir + "/b", "--known-changes", known}, sim_env());
  INFO(res.out);
  CHECK(res.exit_code == exit_code::ok);
  CHECK_THAT(res.out, Catch::Contains("regression (known)"));
}

TEST_CASE("a per-thread synchronize that waits for the whole context fails the per-thread cells, "
          "naming the call",
          "[faulted]") {
  const auto dir = scratch("legacy_sync");
  const auto m = write(dir + "/m.toml", R"(
[matrix]
cases = ["stream.default.semantics"]
[axes]
NUMBA_CUDA_USE_NVIDIA_BINDING = ["0", "1"]
NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM = ["0", "1"]
CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM = ["0", "1"]
[[exclude]]
NUMBA_CUDA_USE_NVIDIA_BINDING = "0"
CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM = "1"
[[exclude]]
NUMBA_CUDA_USE_NVIDIA_BINDING = "1"
NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM = "1"
)");
  const auto res =
      test::run_cuparity({"run", m, "--out", dir + "/out", "--no-latency", "-j", "2"},
                         sim_env({{"CUPARITY_SIM_FAULTS", "cuStreamSynchronize_ptsz:legacy"}}));
  INFO(res.out << res.err);
  CHECK(res.exit_code == exit_code::failures);
  const auto s = summary_of(dir + "/out");
  for (const auto &r : s["results"]) {
    const bool per_thread = r["observations"]["stream0"] == "per-thread";
    CHECK(r["outcome"] == (per_thread ? "fail" : "pass"));
    if (per_thread) {
      CHECK(r["observations"]["stream0.synchronize"] == "legacy");
      CHECK_THAT(r["message"].get<std::string>(),
                 Catch::StartsWith("cuStreamSynchronize on stream 0 behaved as legacy, but the "
                                   "configuration says per-thread"));
    }
  }
}

TEST_CASE("a driver whose device queries fail still gets a summary naming what failed",
          "[faulted]") {
  for (const char *fault : {"cuDeviceGetCount:error=999", "cuDriverGetVersion:error=999"}) {
    const auto dir = scratch("queries");
    const auto m = write(dir + "/m.toml", R"(
[matrix]
cases = ["context.init.facts", "alloc.copy.dtod", "ipc.mem.staged"]
[axes]
NUMBA_CUDA_USE_NVIDIA_BINDING = ["0"]
)");
    const auto res = test::run_cuparity({"run", m, "--out", dir + "/out", "--no-latency"},
                                        sim_env({{"CUPARITY_SIM_FAULTS", fault}}));
    INFO(fault << "\n" << res.out << res.err);
    CHECK(res.exit_code == exit_code::failures);
    const auto s = summary_of(dir + "/out");
    CHECK(fs::exists(dir + "/out/junit.xml"));
    CHECK(problems(s).count("failure context.init.facts") == 1);
  }
}

TEST_CASE("text a driver returns reaches JSON whatever its bytes", "[faulted]") {
  CHECK(valid_utf8("H200") == "H200");
  CHECK(valid_utf8("\xC3\xA9t\xC3\xA9") == "\xC3\xA9t\xC3\xA9"); // été stays
  CHECK(valid_utf8("\x9C"
                   "uparity") == "\\x9Cuparity");              // a lone continuation byte
  CHECK(valid_utf8("a\xC3") == "a\\xC3");                      // a sequence cut off
  CHECK(valid_utf8("\xED\xA0\x80") == "\\xED\\xA0\\x80");      // a surrogate
  CHECK(valid_utf8("\xC0\xAF") == "\\xC0\\xAF");               // an overlong form
  CHECK(valid_utf8("\xF0\x9F\x98\x80") == "\xF0\x9F\x98\x80"); // U+1F600 stays
  const auto res = test::run_cuparity(
      {"env", "--json"}, sim_env({{"CUPARITY_SIM_FAULTS", "cuDeviceGetName:corrupt"}}));
  INFO(res.out << res.err);
  CHECK(res.exit_code == exit_code::ok);
  const json env = json::parse(res.out);
  CHECK_THAT(env["driver"]["devices"][0]["name"].get<std::string>(), Catch::StartsWith("\\x"));
}

TEST_CASE("cuparity faults: every trial of a few symbols caught, with the cases that caught it",
          "[faulted][faults]") {
  const auto dir = scratch("faults");
  const auto res = test::run_cuparity(
      {"faults", std::string(CUPARITY_SOURCE_DIR) + "/matrices/faults.toml", "--out", dir + "/out",
       "--symbol", "cuStreamSynchronize_ptsz", "--symbol", "cuMemcpyDtoH_v2", "-j", "2"},
      // 14 trials, each a run of the faults matrix: 53 s alone on 2 cores, past 60 s when the
      // machine is busy (ctest -j2 beside a build), where the run was killed and read as -1.
      // In a GitHub job: no trial is a page of the job's step summary.
      sim_env({{"GITHUB_STEP_SUMMARY", dir + "/step-summary.md"}}), std::chrono::seconds(240));
  INFO(res.out << res.err);
  CHECK(res.exit_code == exit_code::ok);
  CHECK_FALSE(fs::exists(dir + "/step-summary.md"));
  std::ifstream in(dir + "/out/faults.json");
  const json f = json::parse(in);
  CHECK(f["schema"] == "cuparity.faults/1");
  std::set<std::string> specs;
  for (const auto &t : f["trials"]) {
    specs.insert(t["spec"].get<std::string>());
    CHECK(t["caught"] == true);
    CHECK_FALSE(t["by"].empty());
  }
  CHECK(specs.count("cuStreamSynchronize_ptsz:legacy") == 1);
  CHECK(specs.count("cuMemcpyDtoH_v2:error=801@proc") == 1);
  CHECK(specs.count("cuMemcpyDtoH_v2:corrupt") == 1);
  // corrupt does nothing to a synchronize: refused by the library, listed, not tried.
  CHECK(specs.count("cuStreamSynchronize_ptsz:corrupt") == 0);
  CHECK_THAT(f["not_applicable"].dump(), Catch::Contains("cuStreamSynchronize_ptsz:corrupt"));
  const auto unbound = f["unbound"].get<std::vector<std::string>>();
  CHECK(std::count(unbound.begin(), unbound.end(), "cuCtxCreate_v4") == 1);
  CHECK(fs::exists(dir + "/out/faults.md"));
  // An earlier run's folder is refused without --resume; with it, nothing is run again.
  const auto again = test::run_cuparity(
      {"faults", std::string(CUPARITY_SOURCE_DIR) + "/matrices/faults.toml", "--out", dir + "/out"},
      sim_env());
  CHECK(again.exit_code == exit_code::bad_input);
  CHECK_THAT(again.err, Catch::Contains("--resume"));
}
