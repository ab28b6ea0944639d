// Behaviour that needs its own process: IPC across a fork+exec boundary, environment
// configuration (faults, malformed values, device count, hidden functions), and what a killed
// process leaves in /dev/shm.
#include "test_support.hpp"

#include <catch2/catch.hpp>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

using namespace cuparity::sim::test;

namespace {
template <class T> std::string hex(const T &value) {
  std::string out;
  const auto *bytes = reinterpret_cast<const unsigned char *>(&value);
  char buf[3];
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    std::snprintf(buf, sizeof(buf), "%02x", bytes[i]);
    out += buf;
  }
  return out;
}

child_result run(const std::string &scenario, const std::vector<std::string> &env,
                 const std::string &arg = "") {
  std::vector<std::string> args = {CUPARITY_SIMDRIVER_PATH, scenario};
  if (!arg.empty())
    args.push_back(arg);
  child_result r = run_child(args, env);
  INFO("child stdout:\n" << r.out << "child stderr:\n" << r.err);
  REQUIRE(r.exit_code == 0);
  return r;
}
} // namespace

TEST_CASE("IPC memory handle opened in a child process", "[ipc]") {
  primary();
  CUdeviceptr p = 0;
  REQUIRE(SIM(cuMemAlloc_v2, cuMemAlloc_v3020)(&p, 16) == CUDA_SUCCESS);
  unsigned values[4] = {1, 2, 3, 4};
  REQUIRE(SIM(cuMemcpyHtoD_v2, cuMemcpyHtoD_v3020)(p, values, sizeof(values)) == CUDA_SUCCESS);
  CUipcMemHandle handle{};
  auto get_handle = SIM(cuIpcGetMemHandle, cuIpcGetMemHandle_v4010);
  REQUIRE(get_handle(&handle, p) == CUDA_SUCCESS);
  // An interior pointer exports its allocation (driver 580 answers CUDA_SUCCESS).
  CHECK(get_handle(&handle, p + 4) == CUDA_SUCCESS);
  REQUIRE(get_handle(&handle, p) == CUDA_SUCCESS);
  CUdeviceptr self = 0;
  CHECK(SIM(cuIpcOpenMemHandle_v2, cuIpcOpenMemHandle_v11000)(&self, handle, 1) ==
        CUDA_ERROR_INVALID_CONTEXT);

  const child_result r = run("ipc-mem", {}, hex(handle));
  CHECK(r.value("open") == "0");
  CHECK(r.value("read") == "1,2,3,4");
  CHECK(r.value("close") == "0");
  CHECK(r.value("close_again") == std::to_string(CUDA_ERROR_INVALID_VALUE));
  REQUIRE(SIM(cuMemcpyDtoH_v2, cuMemcpyDtoH_v3020)(values, p, sizeof(values)) == CUDA_SUCCESS);
  CHECK(values[0] == 101);
  CHECK(values[3] == 104);
  REQUIRE(SIM(cuMemFree_v2, cuMemFree_v3020)(p) == CUDA_SUCCESS);
}

TEST_CASE("IPC event handle waited on in a child process", "[ipc]") {
  primary();
  CUevent e = nullptr;
  auto create = SIM(cuEventCreate, cuEventCreate_v2000);
  REQUIRE(create(&e, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING) == CUDA_SUCCESS);
  CUstream s = nullptr;
  REQUIRE(SIM(cuStreamCreate, cuStreamCreate_v2000)(&s, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS);
  spin(s, 300);
  REQUIRE(SIM(cuEventRecord, cuEventRecord_v2000)(e, s) == CUDA_SUCCESS);
  CUipcEventHandle handle{};
  REQUIRE(SIM(cuIpcGetEventHandle, cuIpcGetEventHandle_v4010)(&handle, e) == CUDA_SUCCESS);
  const child_result r = run("ipc-event", {}, hex(handle));
  CHECK(r.value("open") == "0");
  CHECK(r.value("sync") == "0");
  CHECK(r.value("query_after") == "0");
  CHECK(std::stoi(r.value("waited_ms")) >= 50);
  CUevent timed = nullptr;
  REQUIRE(create(&timed, CU_EVENT_DEFAULT) == CUDA_SUCCESS);
  CHECK(SIM(cuIpcGetEventHandle, cuIpcGetEventHandle_v4010)(&handle, timed) ==
        CUDA_ERROR_INVALID_VALUE);
  REQUIRE(SIM(cuStreamSynchronize, cuStreamSynchronize_v2000)(s) == CUDA_SUCCESS);
  REQUIRE(SIM(cuStreamDestroy_v2, cuStreamDestroy_v4000)(s) == CUDA_SUCCESS);
  REQUIRE(SIM(cuEventDestroy_v2, cuEventDestroy_v4000)(e) == CUDA_SUCCESS);
  REQUIRE(SIM(cuEventDestroy_v2, cuEventDestroy_v4000)(timed) == CUDA_SUCCESS);
}

TEST_CASE("configuration from the environment", "[config]") {
  SECTION("defaults; calls before cuInit fail") {
    const child_result r = run("probe", {});
    CHECK(r.value("before_init") == std::to_string(CUDA_ERROR_NOT_INITIALIZED));
    CHECK(r.value("init") == "0");
    CHECK(r.value("version") == "13000");
    CHECK(r.value("count") == "1");
    CHECK(r.value("hide_status") == "0");
    CHECK(r.err.empty());
  }
  SECTION("version, devices and hidden functions") {
    const child_result r =
        run("probe", {"CUPARITY_SIM_DRIVER_VERSION=12080", "CUPARITY_SIM_DEVICES=3",
                      "CUPARITY_SIM_HIDE=cuLaunchKernel, cuMemAlloc"});
    CHECK(r.value("version") == "12080");
    CHECK(r.value("count") == "3");
    CHECK(r.value("hide_status") == std::to_string(CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND));
  }
  SECTION("no devices") {
    const child_result r = run("probe", {"CUPARITY_SIM_DEVICES=0"});
    CHECK(r.value("init") == std::to_string(CUDA_ERROR_NO_DEVICE));
  }
  SECTION("CUDA_VISIBLE_DEVICES: the listed host devices, in order, renumbered from 0") {
    const auto visible = [](const std::string &list) {
      return run("probe", {"CUPARITY_SIM_DEVICES=3", "CUDA_VISIBLE_DEVICES=" + list});
    };
    CHECK(run("probe", {"CUPARITY_SIM_DEVICES=3"}).value("hosts") == "0,1,2");
    const child_result swapped = visible("2,0");
    CHECK(swapped.value("count") == "2");
    CHECK(swapped.value("hosts") == "2,0");
    CHECK(swapped.value("buses") == "2,0");
    // The name is the model's, the same on every GPU of a host: it keeps the process's ordinal.
    CHECK(swapped.value("name0") == "cuparity simulated device 0");
    CHECK(visible("1").value("hosts") == "1");
    CHECK(visible(" 1 , 2").value("hosts") == "1,2");
    CHECK(visible("1gpu,0").value("hosts") == "1,0"); // leading digits, as strtoul reads them
    // An entry that names no device ends the list; a repeated one hides every device.
    CHECK(visible("0,2,-1,1").value("hosts") == "0,2");
    CHECK(visible("1,7,0").value("hosts") == "1");
    CHECK(visible("0,GPU-1234").value("hosts") == "0");
    CHECK(visible("0,1,0").value("init") == std::to_string(CUDA_ERROR_NO_DEVICE));
    CHECK(visible("").value("init") == std::to_string(CUDA_ERROR_NO_DEVICE));
    CHECK(visible("3").value("init") == std::to_string(CUDA_ERROR_NO_DEVICE));
  }
  SECTION("malformed values warn, name the variable and fall back") {
    const child_result r =
        run("probe", {"CUPARITY_SIM_DRIVER_VERSION=abc", "CUPARITY_SIM_DEVICES=-3",
                      "CUPARITY_SIM_TOTAL_MEM=12GB", "CUPARITY_SIM_HIDE=cu Mem,cuMemAlloc",
                      "CUPARITY_SIM_FAULTS=garbage;cuNoSuch:error=1;cuInit:explode;cuInit:error=x",
                      "CUPARITY_SIM_SHM_TAG=Bad-Tag"});
    CHECK(r.value("version") == "13000");
    CHECK(r.value("count") == "1");
    CHECK(r.value("hide_status") == std::to_string(CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND));
    for (const char *needle : {"CUPARITY_SIM_DRIVER_VERSION='abc'", "CUPARITY_SIM_DEVICES='-3'",
                               "CUPARITY_SIM_TOTAL_MEM='12GB'", "'cu Mem' in CUPARITY_SIM_HIDE",
                               "'garbage'", "'cuNoSuch' is not a symbol", "unknown kind 'explode'",
                               "error needs a CUresult", "CUPARITY_SIM_SHM_TAG='Bad-Tag'"}) {
      INFO(needle);
      CHECK(r.err.find(needle) != std::string::npos);
    }
  }
}

TEST_CASE("faults of each kind and path", "[faults]") {
  SECTION("error on any path") {
    const child_result r = run("faults", {"CUPARITY_SIM_FAULTS=cuDeviceGetCount:error=999"});
    CHECK(r.value("count_dlsym_rc") == "999");
    CHECK(r.value("count_proc_rc") == "999");
    CHECK(r.value("count_dlsym") == "0"); // the work is not done
    // Both paths must show an `any` fault alike: no twin, one address (as in the fault shim).
    CHECK(r.value("proc_is_export") == "1");
  }
  SECTION("error through cuGetProcAddress only: a hidden twin is handed out") {
    const child_result r =
        run("faults", {"CUPARITY_SIM_FAULTS=cuDeviceGetCount:error=CUDA_ERROR_UNKNOWN@proc"});
    CHECK(r.value("count_dlsym_rc") == "0");
    CHECK(r.value("count_dlsym") == "1");
    CHECK(r.value("count_proc_rc") == std::to_string(CUDA_ERROR_UNKNOWN));
    CHECK(r.value("proc_is_export") == "0");
  }
  SECTION("error through dlsym only: the proc path gets the twin, without the fault") {
    const child_result r = run("faults", {"CUPARITY_SIM_FAULTS=cuDeviceGetCount:error=2@dlsym"});
    CHECK(r.value("count_dlsym_rc") == "2");
    CHECK(r.value("count_proc_rc") == "0");
    CHECK(r.value("count_proc") == "1");
    CHECK(r.value("proc_is_export") == "0");
  }
  SECTION("a fault on another symbol leaves this one's proc answer the export") {
    const child_result r = run("faults", {"CUPARITY_SIM_FAULTS=cuInit:delay_ns=1@dlsym"});
    CHECK(r.value("count_dlsym_rc") == "0");
    CHECK(r.value("proc_is_export") == "1");
  }
  SECTION("corrupt output: data and out-parameters") {
    const child_result r = run("faults", {"CUPARITY_SIM_FAULTS=cuMemcpyDtoH_v2:corrupt;"
                                          "cuDeviceGetCount:corrupt@proc"});
    CHECK(r.value("dtoh_rc") == "0");
    CHECK(r.value("copy_first") == std::to_string(0x10 ^ 0xff));
    CHECK(r.value("copy_second") == "1");
    CHECK(r.value("count_dlsym") == "1");
    CHECK(r.value("count_proc") == "2");
  }
  SECTION("delay") {
    const child_result r =
        run("faults", {"CUPARITY_SIM_FAULTS=cuCtxGetCurrent:delay_ns=20000000@any"});
    CHECK(std::stoll(r.value("ctx_ns")) >= 20000000);
    CHECK(r.value("count_dlsym_rc") == "0");
  }
}

namespace {
// The simulator's objects in /dev/shm made by process `pid` with tag `tag` ("" for none):
// "cuparity-sim[-ev][-t<tag>].<pid>.…".
std::vector<std::string> shm_objects_of(const std::string &pid, const std::string &tag = "") {
  std::vector<std::string> out;
  std::error_code ec;
  const std::string t = tag.empty() ? "" : "-t" + tag;
  for (const auto &e : std::filesystem::directory_iterator("/dev/shm", ec)) {
    const std::string name = e.path().filename().string();
    for (const std::string &prefix : {"cuparity-sim" + t + ".", "cuparity-sim-ev" + t + "."})
      if (name.rfind(prefix + pid + ".", 0) == 0)
        out.push_back(name);
  }
  return out;
}

// A tag no other process uses now: this test process's pid, in base 36 (at most 6 characters
// below 2^31).
std::string own_shm_tag() {
  std::string out;
  for (auto n = static_cast<unsigned long>(getpid()); n > 0; n /= 36)
    out.insert(out.begin(), "0123456789abcdefghijklmnopqrstuvwxyz"[n % 36]);
  return out;
}
} // namespace

TEST_CASE("shared-memory objects: unlinked at a normal end; a killed process's at the next cuInit",
          "[shm]") {
  SECTION("a normal end unlinks what is still allocated") {
    const child_result r = run_child({CUPARITY_SIMDRIVER_PATH, "hold", "exit"}, {});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.value("alloc") == "0");
    CHECK(r.value("event") == "0");
    CHECK(shm_objects_of(r.value("pid")).empty());
  }
  SECTION("a killed process leaves them; the next process of its tag to call cuInit removes them") {
    // Every sweep is machine-wide within its tag: untagged, the killed process's objects could be
    // swept by any simulated process running beside this test (a parallel ctest) before the
    // count below, as happened once on a shared machine.
    const std::string tag = own_shm_tag();
    const std::string tag_var = "CUPARITY_SIM_SHM_TAG=" + tag;
    const child_result killed = run_child({CUPARITY_SIMDRIVER_PATH, "hold", "kill"}, {tag_var});
    INFO(killed.out << killed.err);
    REQUIRE(killed.exit_code == 128 + SIGKILL);
    REQUIRE(killed.value("alloc") == "0");
    const std::string pid = killed.value("pid");
    // Device memory and the event's counters: two objects, named after the killed process.
    CHECK(shm_objects_of(pid, tag).size() == 2);
    // This process is alive: no sweep touches its objects, nor another tag's dead ones.
    primary();
    CUdeviceptr mine = 0;
    REQUIRE(SIM(cuMemAlloc_v2, cuMemAlloc_v3020)(&mine, 16) == CUDA_SUCCESS);
    const auto own = shm_objects_of(std::to_string(getpid()));
    CHECK_FALSE(own.empty());
    (void)run("probe", {}); // calls cuInit, untagged
    CHECK(shm_objects_of(pid, tag).size() == 2);
    (void)run("probe", {tag_var}); // calls cuInit, with the killed process's tag
    CHECK(shm_objects_of(pid, tag).empty());
    CHECK(shm_objects_of(std::to_string(getpid())) == own);
    REQUIRE(SIM(cuMemFree_v2, cuMemFree_v3020)(mine) == CUDA_SUCCESS);
  }
}
