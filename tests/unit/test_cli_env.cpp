// `cuparity env` end to end: exit codes, messages, JSON, and the audit, on the simulated driver.
#include "test_support.hpp"

#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>

using namespace cuparity;
using test::run_cuparity;

namespace {
test::vars sim_env(test::vars v = {}) {
  v.try_emplace(var::driver, CUPARITY_SIMDRIVER);
  return v;
}
} // namespace

TEST_CASE("cuparity env --json reports the effective config of each table row", "[cli]") {
  struct row {
    test::vars v;
    const char *binding;
    const char *stream0;
    std::size_t warnings;
  };
  const row rows[] = {
      {{}, "internal", "legacy", 0},
      {{{var::numba_ptds, "1"}}, "internal", "per-thread", 0},
      {{{var::use_nvidia_binding, "1"}}, "nvidia", "legacy", 0},
      {{{var::use_nvidia_binding, "1"}, {var::cuda_python_ptds, "1"}}, "nvidia", "per-thread", 0},
      {{{var::use_nvidia_binding, "1"}, {var::numba_ptds, "1"}}, "nvidia", "legacy", 1},
      {{{var::use_nvidia_binding, "1"}, {var::nvidia_backend, "/nope.so"}},
       "internal",
       "legacy",
       1},
      {{{var::use_nvidia_binding, "maybe"}}, "internal", "legacy", 1},
  };
  for (const auto &r : rows) {
    auto res = run_cuparity({"env", "--json"}, sim_env(r.v));
    INFO(res.out << res.err);
    REQUIRE(res.exit_code == 0);
    auto j = nlohmann::json::parse(res.out);
    CHECK(j["schema"] == "cuparity.env/1");
    CHECK(j["config"]["binding"] == r.binding);
    CHECK(j["config"]["stream0"] == r.stream0);
    CHECK(j["config"]["simulated"] == true);
    CHECK(j["config"]["warnings"].size() == r.warnings);
    CHECK(j["driver"]["driver_version"] == 13000);
    CHECK(j["driver"]["devices"].size() == 1);
  }
}

TEST_CASE("cuparity env prints a SIMULATED banner and the warnings in text form", "[cli]") {
  auto res =
      run_cuparity({"env"}, sim_env({{var::use_nvidia_binding, "1"}, {var::numba_ptds, "1"}}));
  REQUIRE(res.exit_code == 0);
  CHECK_THAT(res.out, Catch::Contains("SIMULATED DRIVER") &&
                          Catch::Contains("binding:        nvidia") &&
                          Catch::Contains("CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM=1 instead"));
}

TEST_CASE("--driver sim selects the simulated driver", "[cli]") {
  auto res = run_cuparity({"--driver", "sim", "env", "--json"}, {});
  INFO(res.err);
  REQUIRE(res.exit_code == 0);
  CHECK(nlohmann::json::parse(res.out)["config"]["simulated"] == true);
}

TEST_CASE("bad NUMBA_CUDA_DRIVER: exit 2 and a message naming variable and value", "[cli]") {
  auto res = run_cuparity({"env"}, {{var::driver, "/no/such/libcuda.so.1"}});
  CHECK(res.exit_code == 2);
  CHECK_THAT(res.err, Catch::Contains("NUMBA_CUDA_DRIVER='/no/such/libcuda.so.1'"));
  CHECK(res.signal == 0);
}

TEST_CASE("a file that is not a driver: exit 3, the path in the message, no crash", "[cli]") {
  std::string junk = std::string(CUPARITY_BIN_DIR) + "/fake_libcuda.so";
  std::ofstream(junk) << "not a library\n";
  auto res = run_cuparity({"env"}, {{var::driver, junk}});
  CHECK(res.exit_code == 3);
  CHECK_THAT(res.err, Catch::Contains(junk));
  CHECK(res.signal == 0);
}

TEST_CASE("cuInit failing (no devices) is an environment problem, exit 3", "[cli]") {
  auto res = run_cuparity({"env"}, sim_env({{"CUPARITY_SIM_DEVICES", "0"}}));
  CHECK(res.exit_code == 3);
  CHECK_THAT(res.out, Catch::Contains("cuInit") && Catch::Contains("CUDA_ERROR_NO_DEVICE"));
}

TEST_CASE("unknown flags and commands are usage errors, exit 2", "[cli]") {
  CHECK(run_cuparity({"env", "--frobnicate"}, sim_env()).exit_code == 2);
  CHECK(run_cuparity({"nonsense"}, sim_env()).exit_code == 2);
  CHECK(run_cuparity({}, sim_env()).exit_code == 2);
  CHECK(run_cuparity({"--driver", "sim", "--help"}, {}).exit_code == 0);
}

TEST_CASE("cuparity env --audit passes for all four binding modes on the simulated driver",
          "[cli][audit]") {
  for (const auto &v : {test::vars{}, test::vars{{var::numba_ptds, "1"}},
                        test::vars{{var::use_nvidia_binding, "1"}},
                        test::vars{{var::use_nvidia_binding, "1"}, {var::cuda_python_ptds, "1"}}}) {
    auto res = run_cuparity({"env", "--audit", "--json"}, sim_env(v));
    INFO(res.out.substr(0, 2000) << res.err);
    REQUIRE(res.exit_code == 0);
    auto j = nlohmann::json::parse(res.out);
    CHECK(j["audit"]["mismatches"] == 0);
    CHECK(j["binding_map"].size() == j["audit"]["rows"].size());
  }
}

TEST_CASE("an audit mismatch exits 1: a proc-path fault makes cuGetProcAddress's answer differ",
          "[cli][audit]") {
  // A fault on the cuGetProcAddress path makes the simulated driver hand out a different
  // function for cuMemAlloc_v2 than dlsym does: the internal backend binds the exported symbol,
  // the driver's answer is the twin, so the audit must flag it.
  auto res = run_cuparity({"env", "--audit"},
                          sim_env({{"CUPARITY_SIM_FAULTS", "cuMemAlloc_v2:delay_ns=1@proc"}}));
  CHECK(res.exit_code == 1);
  CHECK_THAT(res.out, Catch::Contains("MISMATCH cuMemAlloc"));
}
