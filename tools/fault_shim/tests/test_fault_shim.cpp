// The fault shim in front of the simulated driver: forwarding, faults per path, corrupt, delays,
// malformed specs and a missing target (docs/fault-shim.md).
#include "harness/platform/subprocess.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace cuparity;
namespace fs = std::filesystem;

namespace {

using vars = std::map<std::string, std::string>;

// The shim, forwarding to the simulated driver, plus `extra`.
vars shim_env(vars extra = {}) {
  extra.try_emplace("CUPARITY_SHIM_TARGET", CUPARITY_SIMDRIVER);
  return extra;
}

process_result run(std::vector<std::string> argv, vars env) {
  process_spec spec;
  spec.argv = std::move(argv);
  env.try_emplace("PATH", "/usr/bin:/bin");
  spec.env = std::move(env);
  spec.timeout = std::chrono::seconds(120);
  return run_process(spec);
}

struct probe_result {
  process_result process;
  // The value of a "key=value" line ("" when absent).
  std::string value(const std::string &key) const {
    std::istringstream lines(process.out);
    for (std::string line; std::getline(lines, line);)
      if (line.rfind(key + "=", 0) == 0)
        return line.substr(key.size() + 1);
    return {};
  }
};

probe_result probe(const std::string &library, std::vector<std::string> args, vars env) {
  args.insert(args.begin(), {CUPARITY_SHIM_PROBE, library});
  probe_result r{run(std::move(args), std::move(env))};
  INFO(r.process.out << r.process.err);
  REQUIRE(r.process.exited);
  REQUIRE(r.process.exit_code == 0);
  return r;
}

std::string scratch(const std::string &name) {
  auto dir = fs::temp_directory_path() / "cuparity-fault-shim-tests" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

nlohmann::json summary_of(const std::string &dir) {
  std::ifstream in(dir + "/summary.json");
  REQUIRE(in);
  return nlohmann::json::parse(in);
}

// `cuparity run` of a matrix on a driver library; returns the summary.
nlohmann::json run_matrix(const std::string &matrix, const std::string &out,
                          const std::string &driver, vars env, int expected_exit) {
  env["NUMBA_CUDA_DRIVER"] = driver;
  auto r = run({CUPARITY_EXE, "run", matrix, "--out", out}, std::move(env));
  INFO(r.out << r.err);
  CHECK(r.exit_code == expected_exit);
  return summary_of(out);
}

// A matrix of two cells, one per backend.
std::string two_backends(const std::string &dir) {
  const std::string path = dir + "/m.toml";
  std::ofstream(path) << R"(
[matrix]
cases = ["context.init.facts", "alloc.copy.dtod"]
[axes]
NUMBA_CUDA_USE_NVIDIA_BINDING = ["0", "1"]
)";
  return path;
}

// What each case did, without what differs between any two runs (process ids, times).
nlohmann::json case_results(const nlohmann::json &summary) {
  nlohmann::json out = summary["results"];
  for (auto &r : out)
    for (const char *key : {"duration_ms", "pid", "started", "finished"})
      r.erase(key);
  return out;
}

} // namespace

TEST_CASE("forwarding: the smoke matrix through the shim reads what the sim reads", "[shim]") {
  const std::string dir = scratch("forwarding");
  const std::string smoke = std::string(CUPARITY_SOURCE_DIR) + "/matrices/smoke.toml";
  auto direct = run_matrix(smoke, dir + "/sim", CUPARITY_SIMDRIVER, {}, 0);
  auto shimmed = run_matrix(smoke, dir + "/shim", CUPARITY_SHIM, shim_env(), 0);
  CHECK(shimmed["verdict"] == direct["verdict"]);
  CHECK(shimmed["counts"] == direct["counts"]);
  CHECK(shimmed["problems"] == direct["problems"]);
  CHECK(shimmed["divergences"] == direct["divergences"]);
  // Outcomes and every observation, the binding audit's included: both paths bind the shim.
  CHECK(case_results(shimmed) == case_results(direct));
  // Still labelled simulated: the marker is found behind the shim.
  CHECK(shimmed["provenance"]["simulated"] == true);
}

TEST_CASE("an error fault on one path fails only that backend's cells", "[shim]") {
  // A copy, not a device query: the runner's driver check (`cuparity env`, internal backend)
  // sees inherited variables too, and must pass.
  const std::string dir = scratch("error_path");
  const std::string matrix = two_backends(dir);
  for (const auto &[path, failing] :
       std::map<std::string, std::string>{{"proc", "nv=1"}, {"dlsym", "nv=0"}}) {
    INFO("@" << path);
    auto s = run_matrix(
        matrix, dir + "/" + path, CUPARITY_SHIM,
        shim_env({{"CUPARITY_SHIM_FAULTS", "cuMemcpyDtoD_v2:error=CUDA_ERROR_UNKNOWN@" + path}}),
        1);
    REQUIRE(s["problems"].size() == 1);
    CHECK(s["problems"][0]["case"] == "alloc.copy.dtod");
    CHECK(s["problems"][0]["cell"].get<std::string>().rfind(failing, 0) == 0);
  }
}

TEST_CASE("corrupt on cuMemcpyDtoH_v2 fails a copy case in both backends", "[shim]") {
  const std::string dir = scratch("corrupt");
  auto s = run_matrix(two_backends(dir), dir + "/out", CUPARITY_SHIM,
                      shim_env({{"CUPARITY_SHIM_FAULTS", "cuMemcpyDtoH_v2:corrupt"}}), 1);
  REQUIRE(s["problems"].size() == 2);
  for (const auto &p : s["problems"]) {
    CHECK(p["case"] == "alloc.copy.dtod");
    CHECK(p["kind"] == "failure");
  }
}

TEST_CASE("corrupt flips the first destination byte of every copy the shim supports", "[shim]") {
  for (const char *symbol :
       {"cuMemcpyHtoD_v2", "cuMemcpyHtoD_v2_ptds", "cuMemcpyDtoH_v2", "cuMemcpyDtoH_v2_ptds",
        "cuMemcpyDtoD_v2", "cuMemcpyDtoD_v2_ptds", "cuMemcpyHtoDAsync_v2",
        "cuMemcpyHtoDAsync_v2_ptsz", "cuMemcpyDtoHAsync_v2", "cuMemcpyDtoHAsync_v2_ptsz",
        "cuMemcpyDtoDAsync_v2", "cuMemcpyDtoDAsync_v2_ptsz"}) {
    INFO(symbol);
    auto clean = probe(CUPARITY_SHIM, {"copy", symbol}, shim_env());
    CHECK(clean.value("copy_rc") == "0");
    CHECK(clean.value("first") == std::to_string(0x10));
    auto r = probe(CUPARITY_SHIM, {"copy", symbol},
                   shim_env({{"CUPARITY_SHIM_FAULTS", std::string(symbol) + ":corrupt"}}));
    CHECK(r.value("copy_rc") == "0");
    CHECK(r.value("first") == std::to_string(0x10 ^ 0xff));
    CHECK(r.value("second") == std::to_string(0x20));
  }
}

TEST_CASE("a delay is seen only through the path it names", "[shim][timing]") {
  // 200 ns against calls of tens of ns, medians of 20000 interleaved calls, half the delay as
  // the margin: a loaded 2-core machine moves medians far less than that.
  for (const auto &[path, slow] :
       std::map<std::string, std::string>{{"dlsym", "dlsym"}, {"proc", "proc"}}) {
    INFO("@" << path);
    auto r = probe(CUPARITY_SHIM, {"delay", "20000"},
                   shim_env({{"CUPARITY_SHIM_FAULTS", "cuCtxGetCurrent:delay_ns=200@" + path}}));
    const long long delayed = std::stoll(r.value(slow + "_median_ns"));
    const long long other =
        std::stoll(r.value((slow == "dlsym" ? "proc" : "dlsym") + std::string("_median_ns")));
    INFO("delayed " << delayed << " ns, other " << other << " ns");
    CHECK(delayed >= other + 100);
  }
}

// The lines of a JSON-lines file.
std::vector<nlohmann::json> json_lines(const std::string &path) {
  std::ifstream in(path);
  std::vector<nlohmann::json> lines;
  for (std::string line; std::getline(in, line);)
    lines.push_back(nlohmann::json::parse(line));
  return lines;
}

TEST_CASE("the shim's log: one line per process, with each path's calls and the delay's figures",
          "[shim]") {
  const std::string log = scratch("log") + "/shim.jsonl";
  probe(CUPARITY_SHIM, {"delay", "3000"},
        shim_env({{"CUPARITY_SHIM_FAULTS", "cuCtxGetCurrent:delay_ns=10@dlsym"},
                  {"CUPARITY_SHIM_LOG", log}}));
  probe(CUPARITY_SHIM, {"paths"}, shim_env({{"CUPARITY_SHIM_LOG", log}}));
  probe(
      CUPARITY_SHIM, {"paths"},
      shim_env({{"CUPARITY_SHIM_FAULTS", "cuMemcpyDtoH_v2:corrupt"}, {"CUPARITY_SHIM_LOG", log}}));
  const auto lines = json_lines(log);
  REQUIRE(lines.size() == 3);
  const nlohmann::json &delayed = lines[0];
  INFO(delayed.dump(1));
  CHECK(delayed["variables"]["CUPARITY_SHIM_FAULTS"] == "cuCtxGetCurrent:delay_ns=10@dlsym");
  CHECK(delayed["command"].get<std::string>().find("delay 3000") != std::string::npos);
  std::map<std::string, long long> calls;
  for (const auto &c : delayed["slow_calls"])
    calls[c["symbol"].get<std::string>() + "@" + c["path"].get<std::string>()] = c["calls"];
  // Both paths of a faulted symbol take the slow path; only the dlsym one waits.
  CHECK(calls["cuCtxGetCurrent@dlsym"] == 3000);
  CHECK(calls["cuCtxGetCurrent@proc"] == 3000);
  const nlohmann::json &d = delayed["delay"];
  CHECK(d["loop_calls"] == 3000); // 10 ns runs on the loop (counter_from_ns is at least 20)
  CHECK(d["samples"].get<long long>() >= 1);
  CHECK(d["rate_min"].get<double>() > 0);
  CHECK(d["rate_min"].get<double>() <= d["rate_max"].get<double>());
  CHECK(d["long_overhead_loops"].get<double>() >= 0);
  CHECK(d["loops_per_ns"].get<double>() > 0);
  // No delay: no calibration at exit, and no slow call but the answer-rewriting query's.
  const nlohmann::json &plain = lines[1];
  INFO(plain.dump(1));
  CHECK_FALSE(plain.contains("delay"));
  for (const auto &c : plain["slow_calls"])
    CHECK(c["symbol"].get<std::string>().rfind("cuGetProcAddress", 0) == 0);
  // Faults, but none a delay: still no calibration and no delay figures.
  INFO(lines[2].dump(1));
  CHECK(lines[2]["variables"]["CUPARITY_SHIM_FAULTS"] == "cuMemcpyDtoH_v2:corrupt");
  CHECK_FALSE(lines[2].contains("delay"));
}

TEST_CASE("processes that end together append whole lines to one log", "[shim]") {
  const std::string log = scratch("log-together") + "/shim.jsonl";
  constexpr int processes = 6;
  std::vector<std::future<process_result>> running;
  // Catch2's assertions are not thread-safe: the threads only run, the checks come after.
  for (int i = 0; i < processes; ++i)
    running.push_back(std::async(std::launch::async, [&log] {
      return run({CUPARITY_SHIM_PROBE, CUPARITY_SHIM, "delay", "2000"},
                 shim_env({{"CUPARITY_SHIM_FAULTS", "cuCtxGetCurrent:delay_ns=5@proc"},
                           {"CUPARITY_SHIM_LOG", log}}));
    }));
  std::set<long long> pids;
  for (auto &f : running) {
    const process_result r = f.get();
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
  }
  for (const auto &line : json_lines(log)) {
    CHECK(line["delay"]["loop_calls"] == 2000);
    pids.insert(line["pid"].get<long long>());
  }
  CHECK(pids.size() == processes);
}

TEST_CASE("an unwritable log: one line naming CUPARITY_SHIM_LOG and the path, the calls unharmed",
          "[shim]") {
  auto r = probe(CUPARITY_SHIM, {"paths"},
                 shim_env({{"CUPARITY_SHIM_LOG", "/nonexistent/dir/shim.jsonl"}}));
  CHECK(r.value("count_dlsym_rc") == "0");
  CHECK(r.process.err.find("cannot write CUPARITY_SHIM_LOG='/nonexistent/dir/shim.jsonl': No "
                           "such file or directory") != std::string::npos);
}

TEST_CASE("a malformed fault spec warns, naming the variable and the item, and is ignored",
          "[shim]") {
  auto r = probe(CUPARITY_SHIM, {"paths"},
                 shim_env({{"CUPARITY_SHIM_FAULTS",
                            "garbage;cuNoSuch:error=1;cuInit:explode;cuDeviceGetCount:error=x;"
                            "cuDeviceGetCount:corrupt;cuDeviceGetCount:delay_ns=5@nowhere"}}));
  for (const char *needle :
       {"'garbage' in CUPARITY_SHIM_FAULTS", "'cuNoSuch' is not a symbol",
        "'cuInit:explode' in CUPARITY_SHIM_FAULTS: unknown kind 'explode'",
        "'cuDeviceGetCount:error=x' in CUPARITY_SHIM_FAULTS: error needs a CUresult",
        "'cuDeviceGetCount:corrupt' in CUPARITY_SHIM_FAULTS: corrupt is not supported on "
        "cuDeviceGetCount",
        "unknown path 'nowhere'"}) {
    INFO(needle);
    CHECK(r.process.err.find(needle) != std::string::npos);
  }
  CHECK(r.value("init_rc") == "0");
  CHECK(r.value("count_dlsym_rc") == "0");
  CHECK(r.value("count_dlsym") == "1");
  CHECK(r.value("proc_is_export") == "1"); // no fault survived: one address on both paths
}

TEST_CASE("an unopenable target: one line naming CUPARITY_SHIM_TARGET, every call fails, no crash",
          "[shim]") {
  SECTION("a missing file") {
    auto r =
        probe(CUPARITY_SHIM, {"paths"}, {{"CUPARITY_SHIM_TARGET", "/nonexistent/libcuda.so.1"}});
    CHECK(r.value("init_rc") == std::to_string(3)); // CUDA_ERROR_NOT_INITIALIZED
    CHECK(r.value("count_dlsym_rc") == std::to_string(3));
    CHECK(r.value("proc_found") == "0");
    CHECK(r.process.err.find("CUPARITY_SHIM_TARGET='/nonexistent/libcuda.so.1'") !=
          std::string::npos);
    CHECK(r.process.err.find("No such file or directory") != std::string::npos);
    CHECK(std::count(r.process.err.begin(), r.process.err.end(), '\n') == 1);
  }
  SECTION("the shim itself") {
    auto r = probe(CUPARITY_SHIM, {"paths"}, {{"CUPARITY_SHIM_TARGET", CUPARITY_SHIM}});
    CHECK(r.value("init_rc") == std::to_string(3));
    CHECK(r.process.err.find("is this fault shim itself") != std::string::npos);
  }
}

TEST_CASE("the same spec does the same on the sim and on the shim", "[shim]") {
  for (const char *spec : {"cuDeviceGetCount:error=2", "cuDeviceGetCount:error=2@dlsym",
                           "cuDeviceGetCount:error=CUDA_ERROR_UNKNOWN@proc",
                           "cuDeviceGetCount:error=2@dlsym;cuDeviceGetCount:error=5@proc",
                           "cuInit:error=100@dlsym", "cuDeviceGetCount:delay_ns=10@any"}) {
    INFO(spec);
    auto sim = probe(CUPARITY_SIMDRIVER, {"paths"}, {{"CUPARITY_SIM_FAULTS", spec}});
    auto shim = probe(CUPARITY_SHIM, {"paths"}, shim_env({{"CUPARITY_SHIM_FAULTS", spec}}));
    CHECK(shim.process.out == sim.process.out);
  }
}
