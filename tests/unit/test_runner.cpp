// `cuparity run` end to end on the simulated driver: clean envs, crashes, resume, shards, faults,
// and a run stopped from outside (signals, orphans, /dev/shm).
#include "harness/driver/entry.hpp"
#include "harness/platform/gpu_lock.hpp"
#include "harness/platform/subprocess.hpp"
#include "harness/protocol/records.hpp"
#include "harness/protocol/results.hpp"
#include "harness/run/run_layout.hpp"
#include "run_processes.hpp"
#include "test_support.hpp"

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <sys/file.h>
#include <thread>
#include <unistd.h>

using namespace cuparity;
namespace fs = std::filesystem;

namespace {

/// A fresh scratch directory per test.
std::string scratch(const std::string &name) {
  auto dir = fs::temp_directory_path() / "cuparity-runner-tests" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

std::string write(const std::string &path, const std::string &text) {
  std::ofstream(path) << text;
  return path;
}

test::vars sim_env(test::vars v = {}) {
  v.try_emplace(var::driver, CUPARITY_SIMDRIVER);
  return v;
}

nlohmann::json summary_of(const std::string &dir) {
  std::ifstream in(dir + "/summary.json");
  REQUIRE(in);
  return nlohmann::json::parse(in);
}

/// What must be equal between two runs of the same matrix: every result and the verdict.
nlohmann::json comparable(const nlohmann::json &s) {
  nlohmann::json results = s["results"];
  for (auto &r : results)
    r.erase("duration_ms");
  return {{"results", results},        {"counts", s["counts"]},   {"divergences", s["divergences"]},
          {"problems", s["problems"]}, {"verdict", s["verdict"]}, {"groups", s["groups"]}};
}

std::vector<nlohmann::json> case_records(const std::string &dir) {
  std::vector<nlohmann::json> out;
  for (auto &r : read_results(dir + "/results.jsonl").records)
    if (r["type"] == "case")
      out.push_back(r);
  return out;
}

const char *four_cells = R"(
[matrix]
cases = ["binding.config.effective", "binding.errors.shape", "context.current.none",
         "stream.default.semantics", "stream.query.not_ready", "alloc.copy.dtod"]
[axes]
NUMBA_CUDA_USE_NVIDIA_BINDING = ["0", "1"]
NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM = ["0"]
CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM = ["0", "1"]
)";

} // namespace

TEST_CASE("matrix variables exported in the parent do not leak into cells", "[runner]") {
  auto dir = scratch("clean_env");
  auto m = write(dir + "/m.toml", R"(
[matrix]
cases = ["binding.config.effective", "stream.default.semantics"]
[axes]
NUMBA_CUDA_USE_NVIDIA_BINDING = ["0"]
NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM = [false]
[[expect]]
when = { NUMBA_CUDA_USE_NVIDIA_BINDING = "0" }
binding = "internal"
stream0 = "legacy"
warning_count = 0
)");
  // Exported in the parent: both would change the cell if they leaked into it.
  auto res = test::run_cuparity({"run", m, "--out", dir + "/out"},
                                sim_env({{var::numba_ptds, "1"}, {var::use_nvidia_binding, "1"}}));
  INFO(res.out << res.err);
  CHECK(res.exit_code == 0);
  auto s = summary_of(dir + "/out");
  CHECK(s["cells"][0]["config"]["stream0"] == "legacy");
  CHECK(s["cells"][0]["config"]["variables"].count(var::numba_ptds) == 0);
  CHECK(s["provenance"]["simulated"] == true);
}

TEST_CASE("a crashing and a hanging case in the middle of a cell: the rest still runs",
          "[runner]") {
  auto dir = scratch("crash_hang");
  auto m = write(dir + "/m.toml", R"(
[matrix]
cases = ["context.current.none", "context.init.facts", "stream.create.flags_priorities",
         "stream.query.not_ready", "stream.wait_event.ordering"]
case_timeout_s = 3
[axes]
NUMBA_CUDA_USE_NVIDIA_BINDING = ["0"]
# cuDeviceComputeCapability crashes the process (only context.init.facts calls it);
# cuStreamQuery hangs for a minute (only stream.query.not_ready calls it).
CUPARITY_SIM_FAULTS = ["cuDeviceComputeCapability:crash;cuStreamQuery:delay_ns=60000000000"]
)");
  auto res = test::run_cuparity({"run", m, "--out", dir + "/out"}, sim_env());
  INFO(res.out << res.err);
  CHECK(res.exit_code == 1);
  std::map<std::string, std::string> outcome;
  for (const auto &r : case_records(dir + "/out"))
    outcome[r["case"]] = r["outcome"];
  CHECK(outcome == std::map<std::string, std::string>{{"context.current.none", "pass"},
                                                      {"context.init.facts", "crash"},
                                                      {"stream.create.flags_priorities", "pass"},
                                                      {"stream.query.not_ready", "timeout"},
                                                      {"stream.wait_event.ordering", "pass"}});
  CHECK_THAT(res.out, Catch::Contains("context.init.facts: crash") &&
                          Catch::Contains("signal 11") &&
                          Catch::Contains("stream.query.not_ready: timeout"));
  // Every case record is a well-formed case_record plus the pid of the process that ran it: the
  // crash and the watchdog's kill each start a new process for the rest of the cell.
  std::map<std::string, int> pid;
  for (const auto &r : case_records(dir + "/out")) {
    CHECK_NOTHROW(case_record_from_json(r));
    REQUIRE(r.contains("pid"));
    pid[r["case"]] = r["pid"].get<int>();
  }
  CHECK(pid["context.current.none"] == pid["context.init.facts"]);
  CHECK(pid["context.init.facts"] != pid["stream.create.flags_priorities"]);
  CHECK(pid["stream.create.flags_priorities"] == pid["stream.query.not_ready"]);
  CHECK(pid["stream.query.not_ready"] != pid["stream.wait_event.ordering"]);
}

TEST_CASE("SIGKILL of the runner mid-run, then --resume: the same summary as one run",
          "[runner][resume]") {
  auto dir = scratch("resume");
  auto m = write(dir + "/m.toml", four_cells);
  auto whole = test::run_cuparity({"run", m, "--out", dir + "/whole"}, sim_env());
  REQUIRE(whole.exit_code == 0);

  process_spec spec;
  spec.argv = {CUPARITY_EXE, "run", m, "--out", dir + "/cut"};
  spec.env = sim_env({{"PATH", "/usr/bin:/bin"}});
  std::size_t before_kill = 0;
  {
    child_process runner(spec, dir + "/runner.log");
    // Kill it (SIGKILL, no chance to clean up) once a few cases are recorded.
    for (int i = 0; i < 600 && before_kill < 6; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      if (fs::exists(dir + "/cut/results.jsonl"))
        before_kill = case_records(dir + "/cut").size();
    }
    runner.kill_group();
    (void)runner.wait();
  }
  REQUIRE(before_kill >= 6);
  const std::size_t kept = case_records(dir + "/cut").size();
  CHECK(kept >= before_kill);
  CHECK(kept < 24); // it really was cut short
  // Without --resume the directory is refused, so nothing recorded is lost.
  auto refused = test::run_cuparity({"run", m, "--out", dir + "/cut"}, sim_env());
  CHECK(refused.exit_code == 2);
  CHECK_THAT(refused.err, Catch::Contains("--resume"));
  auto resumed = test::run_cuparity({"run", m, "--out", dir + "/cut", "--resume"}, sim_env());
  INFO(resumed.out << resumed.err);
  REQUIRE(resumed.exit_code == 0);
  CHECK(case_records(dir + "/cut").size() == 24); // each (cell, case) exactly once
  CHECK(comparable(summary_of(dir + "/cut")) == comparable(summary_of(dir + "/whole")));
}

TEST_CASE("shards cover every (cell, case) once; merged they equal the whole run",
          "[runner][shard]") {
  auto dir = scratch("shards");
  auto m = write(dir + "/m.toml", four_cells);
  // A simulated host with two devices, cells spread over both.
  test::vars env = sim_env({{"CUPARITY_SIM_DEVICES", "2"}});
  auto whole =
      test::run_cuparity({"run", m, "--out", dir + "/whole", "--gpus", "all", "-j", "2"}, env);
  REQUIRE(whole.exit_code == 0);
  std::set<std::string> devices;
  const auto whole_summary = summary_of(dir + "/whole");
  for (const auto &c : whole_summary["cells"])
    devices.insert(c["device"].get<std::string>());
  // Each cell sees both devices, its own first (device 0 of the process).
  CHECK(devices == std::set<std::string>{"0,1", "1,0"});

  std::multiset<std::pair<std::string, std::string>> seen;
  std::vector<std::string> shard_dirs;
  for (int k = 0; k < 3; ++k) {
    std::string out = dir + "/shard" + std::to_string(k);
    // Shard 1 takes its index from the GoogleTest variables, as a CI job array would.
    auto res = k == 1 ? test::run_cuparity({"run", m, "--out", out},
                                           [&] {
                                             auto e = env;
                                             e["GTEST_SHARD_INDEX"] = "1";
                                             e["GTEST_TOTAL_SHARDS"] = "3";
                                             return e;
                                           }())
                      : test::run_cuparity(
                            {"run", m, "--out", out, "--shard", std::to_string(k) + "/3"}, env);
    INFO(res.out << res.err);
    REQUIRE(res.exit_code == 0);
    auto records = case_records(out);
    CHECK(records.size() == 8); // 24 pairs interleaved over 3 shards
    for (const auto &r : records)
      seen.insert({r["cell"].get<std::string>(), r["case"].get<std::string>()});
    shard_dirs.push_back(out);
  }
  CHECK(seen.size() == 24);
  CHECK(std::set<std::pair<std::string, std::string>>(seen.begin(), seen.end()).size() == 24);

  std::vector<std::string> args{"merge", m};
  args.insert(args.end(), shard_dirs.begin(), shard_dirs.end());
  args.insert(args.end(), {"--out", dir + "/merged"});
  auto merged = test::run_cuparity(args, env);
  INFO(merged.out << merged.err);
  REQUIRE(merged.exit_code == 0);
  CHECK(comparable(summary_of(dir + "/merged")) == comparable(summary_of(dir + "/whole")));
}

TEST_CASE("a fault on one backend's resolution path: exit 1, a divergence naming case and key",
          "[runner][fault]") {
  auto dir = scratch("fault_path");
  // @proc: only pointers handed out by cuGetProcAddress (the nvidia backend) are faulty.
  auto m = write(dir + "/m.toml", R"(
[matrix]
cases = ["context.init.facts"]
[axes]
NUMBA_CUDA_USE_NVIDIA_BINDING = ["0", "1"]
CUPARITY_SIM_FAULTS = ["cuDeviceTotalMem_v2:corrupt@proc"]
)");
  auto res = test::run_cuparity({"run", m, "--out", dir + "/out"}, sim_env());
  INFO(res.out << res.err);
  CHECK(res.exit_code == 1);
  auto s = summary_of(dir + "/out");
  REQUIRE(s["divergences"].size() == 1);
  CHECK(s["divergences"][0]["case"] == "context.init.facts");
  CHECK(s["divergences"][0]["key"] == "observations.total_memory");
  CHECK(s["problems"].empty()); // nothing failed: only the comparison can see it
  CHECK_THAT(res.out, Catch::Contains("DIVERGENCE context.init.facts observations.total_memory"));
}

TEST_CASE("a fault in an exported symbol fails the affected case; a baseline accepts it",
          "[runner][fault][baseline]") {
  auto dir = scratch("fault_symbol");
  auto m = write(dir + "/m.toml", R"(
[matrix]
cases = ["alloc.sizes.pattern", "alloc.copy.dtod"]
[axes]
NUMBA_CUDA_USE_NVIDIA_BINDING = ["0", "1"]
CUPARITY_SIM_FAULTS = ["cuMemcpyDtoH_v2:corrupt"]
)");
  auto res = test::run_cuparity(
      {"run", m, "--out", dir + "/a", "--write-baseline", dir + "/baseline.txt"}, sim_env());
  INFO(res.out << res.err);
  CHECK(res.exit_code == 1);
  auto s = summary_of(dir + "/a");
  // Both cases read their results back with cuMemcpyDtoH: both fail, in both cells.
  REQUIRE(s["problems"].size() == 4);
  for (const auto &p : s["problems"]) {
    CHECK(p["kind"] == "failure");
    // The message states the difference: the corrupted first byte (0xA5 flipped), not "0 bytes
    // wrong"; the first read back is the memset's, before the markers are written.
    if (p["case"] == "alloc.sizes.pattern")
      CHECK_THAT(p["message"].get<std::string>(),
                 Catch::Contains("after cuMemsetD8 of 1 bytes to 0xA5, byte 0 read back is 0x5A"));
  }

  // The written baseline accepts exactly those failures...
  auto again = test::run_cuparity(
      {"run", m, "--out", dir + "/b", "--baseline", dir + "/baseline.txt"}, sim_env());
  CHECK(again.exit_code == 0);
  CHECK(summary_of(dir + "/b")["allowed"] == 4);
  // ...and once the fault is gone, the expected failures pass: unexpected passes fail the run.
  auto fixed_m = write(dir + "/fixed.toml", R"(
[matrix]
cases = ["alloc.sizes.pattern", "alloc.copy.dtod"]
[axes]
NUMBA_CUDA_USE_NVIDIA_BINDING = ["0", "1"]
CUPARITY_SIM_FAULTS = [""]
)");
  std::string text;
  {
    std::ifstream in(dir + "/baseline.txt");
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  // Cell ids include the fault variable; rewrite them for the fixed matrix.
  for (auto pos = text.find("cuMemcpyDtoH_v2:corrupt"); pos != std::string::npos;
       pos = text.find("cuMemcpyDtoH_v2:corrupt"))
    text.erase(pos, std::string("cuMemcpyDtoH_v2:corrupt").size());
  write(dir + "/baseline-fixed.txt", text);
  auto passes = test::run_cuparity(
      {"run", fixed_m, "--out", dir + "/c", "--baseline", dir + "/baseline-fixed.txt"}, sim_env());
  INFO(passes.out);
  CHECK(passes.exit_code == 1);
  CHECK_THAT(passes.out, Catch::Contains("PROBLEM unexpected_pass"));
}

TEST_CASE("bad input is exit 2 with a message naming it; a driver guard miss is exit 3",
          "[runner][errors]") {
  auto dir = scratch("bad_input");
  auto m = write(dir + "/m.toml", "[axes]\nNUMBA_CUDA_USE_NVIDIA_BINDING = [\"0\"]\n[matrix]\n"
                                  "cases = [\"binding.config.effective\"]\n");
  auto run = [&](std::vector<std::string> args, test::vars env = {}) {
    return test::run_cuparity(std::move(args), sim_env(std::move(env)));
  };
  auto missing = run({"run", dir + "/nope.toml"});
  CHECK(missing.exit_code == 2);
  CHECK_THAT(missing.err, Catch::Contains("nope.toml"));
  auto bad_matrix = run({"run", write(dir + "/bad.toml", "[axes]\nA = 3\n")});
  CHECK(bad_matrix.exit_code == 2);
  CHECK_THAT(bad_matrix.err, Catch::Contains("bad.toml:2:5:"));
  CHECK(run({"run", m, "--shard", "3/2"}).exit_code == 2);
  CHECK(run({"run", m, "--out", dir + "/g"}, {{"GTEST_SHARD_INDEX", "1"}}).exit_code == 2);
  auto unknown_case = run({"run", m, "--case", "nope.*"});
  CHECK(unknown_case.exit_code == 2);
  CHECK_THAT(unknown_case.err, Catch::Contains("nope.*"));
  CHECK(run({"run", m, "--baseline", dir + "/none.txt"}).exit_code == 2);
  auto guard = run({"run", m, "--out", dir + "/guard", "--expect-driver", "12040"});
  CHECK(guard.exit_code == 3);
  CHECK_THAT(guard.err, Catch::Contains("13.0"));
  CHECK(run({"run", m, "--out", dir + "/ok", "--expect-driver", "13.0"}).exit_code == 0);
  // A wrapper's defaults are overridable: the last -j / --out wins (scripts/run relies on it).
  CHECK(run({"run", m, "-j", "1", "--out", dir + "/first", "-j", "2", "--out", dir + "/last"})
            .exit_code == 0);
  CHECK(fs::exists(dir + "/last/summary.json"));
  CHECK_FALSE(fs::exists(dir + "/first"));
  auto no_driver = test::run_cuparity({"run", m, "--out", dir + "/nodriver"},
                                      {{var::driver, write(dir + "/junk.so", "junk")}});
  CHECK(no_driver.exit_code == 3);
}

TEST_CASE("a generated CTest suite schedules cells over GPUs by resource groups and merges",
          "[runner][ctest]") {
  auto dir = scratch("ctest");
  auto m = write(dir + "/m.toml", four_cells);
  // In a GitHub job: a cell is no page of the job's step summary (the merge is the run).
  test::vars env =
      sim_env({{"CUPARITY_SIM_DEVICES", "2"}, {"GITHUB_STEP_SUMMARY", dir + "/step-summary.md"}});
  auto gen = test::run_cuparity({"ctest", m, "--out", dir + "/suite", "--gpu-count", "2"}, env);
  INFO(gen.out << gen.err);
  REQUIRE(gen.exit_code == 0);
  process_spec spec;
  spec.argv = {CUPARITY_CTEST,
               "--test-dir",
               dir + "/suite",
               "-j",
               "2",
               "--resource-spec-file",
               dir + "/suite/resources.json",
               "--output-on-failure"};
  spec.env = env;
  spec.env["PATH"] = "/usr/bin:/bin";
  spec.timeout = std::chrono::minutes(3);
  auto res = run_process(spec);
  INFO(res.out << res.err);
  CHECK(res.exit_code == 0);
  CHECK_THAT(res.out, Catch::Contains("100% tests passed, 0 tests failed out of 5"));
  CHECK_FALSE(fs::exists(dir + "/step-summary.md"));
  auto merged = summary_of(dir + "/suite/merged");
  CHECK(merged["results"].size() == 24);
  std::set<std::string> devices;
  for (const auto &c : merged["cells"])
    devices.insert(c["device"].get<std::string>());
  // Each cell ran on the device CTest allocated to it: "0" or "1", never unset.
  CHECK(!devices.empty());
  for (const auto &d : devices)
    CHECK((d == "0" || d == "1"));
  // Outside CTest, --gpus ctest is a clear usage error.
  auto outside = test::run_cuparity({"run", m, "--gpus", "ctest", "--out", dir + "/x"}, env);
  CHECK(outside.exit_code == 2);
  CHECK_THAT(outside.err, Catch::Contains("CTEST_RESOURCE_GROUP_COUNT"));
}

TEST_CASE("NUMBA_CUDA_INCLUDE_PATH reaches NVRTC: right path compiles, wrong path fails cleanly",
          "[runner][nvrtc]") {
  auto dir = scratch("include_path");
  // The include path is part of the semantic key: two groups, each agreeing with itself.
  auto m = write(dir + "/m.toml", std::string(R"(
[matrix]
cases = ["nvrtc.include.path"]
[axes]
NUMBA_CUDA_USE_NVIDIA_BINDING = ["0", "1"]
NUMBA_CUDA_INCLUDE_PATH = [")") + CUPARITY_CUDA_INCLUDE +
                                      R"(", "/nonexistent/include"]
)");
  auto res = test::run_cuparity({"run", m, "--out", dir + "/out"}, sim_env());
  INFO(res.out << res.err);
  CHECK(res.exit_code == 0);
  auto s = summary_of(dir + "/out");
  CHECK(s["groups"].size() == 2);
  for (const auto &r : s["results"]) {
    CHECK(r["outcome"] == "pass");
    const bool wrong = r["cell"].get<std::string>().find("nonexistent") != std::string::npos;
    CHECK(r["observations"]["cuda_fp16_compiles"] == !wrong);
  }
}

TEST_CASE("exclusive cases are listed as such", "[runner]") {
  auto listed = test::run_cuparity({"list", "--json"}, {});
  REQUIRE(listed.exited);
  std::set<std::string> exclusive;
  for (const auto &c : nlohmann::json::parse(listed.out))
    if (c["exclusive"].get<bool>())
      exclusive.insert(c["id"].get<std::string>());
  // Free memory is device-wide; the margin-timed stream cases must not share the GPU.
  CHECK(exclusive.count("alloc.info.drop") == 1);
  CHECK(exclusive.count("context.create.many") == 1);
  CHECK(exclusive.count("stream.threads.overlap") == 1);
  CHECK(exclusive.count("alloc.copy.dtod") == 0);
  auto text = test::run_cuparity({"list"}, {});
  CHECK(text.out.find("alloc.info.drop  cuMemGetInfo's free memory drops by at least the size "
                      "[exclusive]") != std::string::npos);
}

namespace {
/// Waits up to 30 s for `flag`: a lock that wrongly blocks then fails a CHECK instead of hanging
/// (a thread that is let in may wait long for a core on a loaded CI machine).
bool becomes_true(const std::atomic<bool> &flag) {
  for (int i = 0; i < 3000 && !flag.load(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return flag.load();
}

/// Whether another open file description holds `file` (one of the lock's files): a try at an
/// exclusive flock fails. A try that succeeds lets go at once.
bool held_elsewhere(const fs::path &file) {
  const int fd = ::open(file.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0)
    return false;
  const bool held = ::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd); // lets go of a lock it got
  return held;
}

/// Waits up to 30 s until a writer thread holds `file`: the writer's step the test needs taken
/// before it goes on, seen rather than assumed after a sleep.
bool becomes_held(const fs::path &file) {
  for (int i = 0; i < 3000 && !held_elsewhere(file); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return held_elsewhere(file);
}
} // namespace

TEST_CASE("the GPU lock: a writer waits for every reader, a waiting writer holds new readers "
          "back but not a helper's start, and readers wait for a writer that holds it",
          "[runner][lock]") {
  // flock(2) locks belong to an open file description, so gpu_lock objects in one process
  // contend as cell processes would.
  auto dir = fs::temp_directory_path() / "cuparity-gpu-lock";
  fs::remove_all(dir);
  fs::create_directories(dir);
  gpu_lock reader(dir.string()), writer(dir.string()), late_reader(dir.string()),
      helper_start(dir.string());
  reader.acquire(false);
  reader.acquire(false); // held already: no second lock, no wait
  std::atomic<bool> readers_done{false}, writer_in{false}, writer_done{false}, late_in{false};
  std::atomic<bool> late_saw_writer_done{false}, helper_in{false};
  std::thread w([&] {
    writer.acquire(true);
    writer_in = true;
    CHECK(readers_done.load()); // not before every shared holder let go
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    writer_done = true;
    writer.release();
  });
  // The writer is queued once it holds the case turnstile (gpu_lock.cpp): the reader let go of
  // it after passing, so no one else holds it now, and a reader that comes later waits there.
  REQUIRE(becomes_held(dir / "gpu.turnstile.lock"));
  CHECK_FALSE(writer_in.load());
  std::thread late([&] {
    late_reader.acquire(false); // the queued writer goes first
    late_in = true;
    late_saw_writer_done = writer_done.load();
    late_reader.release();
  });
  std::thread helper([&] {
    helper_start.acquire_beside_writers(); // its cell may be a reader awaiting it: no queueing
    helper_in = true;
    helper_start.release();
  });
  CHECK(becomes_true(helper_in));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK_FALSE(late_in.load());
  CHECK_FALSE(writer_in.load());
  readers_done = true;
  reader.release();
  REQUIRE(becomes_true(writer_in));
  w.join();
  late.join();
  helper.join();
  CHECK(late_in.load());
  CHECK(late_saw_writer_done.load());
}

TEST_CASE("a helper's start beside writers still waits for a writer that holds the GPU lock",
          "[runner][lock]") {
  auto dir = fs::temp_directory_path() / "cuparity-gpu-lock-beside";
  fs::remove_all(dir);
  fs::create_directories(dir);
  gpu_lock writer(dir.string()), helper_start(dir.string());
  writer.acquire(true);
  std::atomic<bool> helper_in{false};
  std::thread t([&] {
    helper_start.acquire_beside_writers();
    helper_in = true;
    helper_start.release();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK_FALSE(helper_in.load()); // an exclusive case never meets a process start
  writer.release();
  t.join();
  CHECK(helper_in.load());
}

TEST_CASE("the GPU lock: a writer waiting for a start lets cases run, holds new starts back, and "
          "then waits for the cases as before",
          "[runner][lock]") {
  auto dir = fs::temp_directory_path() / "cuparity-gpu-lock-start";
  fs::remove_all(dir);
  fs::create_directories(dir);
  gpu_lock start(dir.string()), writer(dir.string()), reader(dir.string()),
      late_start(dir.string());
  start.acquire_for_start();
  start.acquire_for_start(); // held already: no second lock, no wait
  std::atomic<bool> writer_in{false}, reader_in{false}, late_in{false}, start_done{false};
  std::atomic<bool> reader_done{false}, writer_done{false}, late_saw_writer_done{false};
  std::thread w([&] {
    writer.acquire(true);
    writer_in = true;
    CHECK(start_done.load());  // not during a start
    CHECK(reader_done.load()); // nor during a case
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    writer_done = true;
    writer.release();
  });
  // The writer waits for the start in flight once it holds the start turnstile, its first step
  // (gpu_lock.cpp); the start let go of it after passing, so no one else holds it now.
  REQUIRE(becomes_held(dir / "gpu.start-turnstile.lock"));
  // A case of another cell runs meanwhile: the writer does not hold cases back for a start.
  std::thread r([&] {
    reader.acquire(false);
    reader_in = true;
  });
  CHECK(becomes_true(reader_in));
  // A new start waits for the writer, which waits for the start in flight.
  std::thread late([&] {
    late_start.acquire_for_start();
    late_in = true;
    late_saw_writer_done = writer_done.load();
    late_start.release();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK_FALSE(late_in.load());
  CHECK_FALSE(writer_in.load());
  start_done = true;
  start.release();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK_FALSE(writer_in.load()); // the case still runs
  reader_done = true;
  reader.release();
  REQUIRE(becomes_true(writer_in));
  w.join();
  r.join();
  late.join();
  CHECK(late_in.load());
  CHECK(late_saw_writer_done.load());
}

TEST_CASE("the GPU lock changes mode by letting go first, and without a directory does nothing",
          "[runner]") {
  auto dir = fs::temp_directory_path() / "cuparity-gpu-lock-mode";
  fs::remove_all(dir);
  fs::create_directories(dir);
  gpu_lock a(dir.string()), b(dir.string());
  a.acquire(false);
  a.acquire(true); // shared -> exclusive
  std::atomic<bool> b_in{false};
  std::thread t([&] {
    b.acquire(false);
    b_in = true;
    b.release();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK_FALSE(b_in.load()); // held exclusively now
  a.release();
  a.release(); // a second release is harmless
  t.join();
  CHECK(b_in.load());
  gpu_lock none("");
  none.acquire(true);
  none.acquire(false);
  none.release();
}

namespace {

/// A cell or helper server process of the simulated driver whose events the test reads.
struct watched_process {
  watched_process(std::vector<std::string> args, const std::string &dir, const std::string &lock)
      : process(spec_of(std::move(args), lock), dir + "/process.log", true) {}
  static process_spec spec_of(std::vector<std::string> args, const std::string &lock) {
    process_spec spec;
    spec.argv = {CUPARITY_EXE};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.env = sim_env({{"PATH", "/usr/bin:/bin"}, {gpu_lock_variable, lock}});
    return spec;
  }
  /// The next event's name, or "" when none comes within `wait`.
  std::string next(std::chrono::milliseconds wait) {
    std::string line;
    if (process.read_line(line, wait) != child_process::read_status::line)
      return "";
    last = nlohmann::json::parse(line);
    return last.value("event", "");
  }
  child_process process;
  nlohmann::json last;
};

} // namespace

TEST_CASE("a cell and a helper server start their driver only while no exclusive case holds the "
          "GPU lock",
          "[runner][lock]") {
  const auto dir = scratch("start_under_lock");
  const std::vector<std::vector<std::string>> commands = {
      {"cell", "--case", "binding.config.effective", "--events-fd", "3"},
      {"helper", "--serve", "--events-fd", "3"}};
  for (const auto &args : commands) {
    INFO(args[0]);
    gpu_lock exclusive_case(dir);
    exclusive_case.acquire(true);
    watched_process p(args, dir, dir);
    CHECK(p.next(std::chrono::milliseconds(500)).empty()); // no cell_start: it waits
    exclusive_case.release();
    CHECK(p.next(std::chrono::seconds(30)) == "cell_start");
    p.process.close_input();
    (void)p.process.wait();
  }
}

TEST_CASE("a cell's binding map covers every entry, whichever cases it ran", "[runner]") {
  // A resumed cell runs only the cases left; its map must equal an uninterrupted cell's.
  const auto dir = scratch("full_map");
  watched_process cell({"cell", "--case", "binding.config.effective", "--events-fd", "3"}, dir,
                       dir);
  std::string ev;
  while (!(ev = cell.next(std::chrono::seconds(60))).empty() && ev != "cell_end") {
  }
  REQUIRE(ev == "cell_end");
  const auto &map = cell.last["binding_map"];
  CHECK(map.size() == all_entries().size());
  const bool has_alloc = std::any_of(map.begin(), map.end(), [](const nlohmann::json &b) {
    return b.value("entry", "") == "cuMemAlloc";
  });
  CHECK(has_alloc); // a function binding.config.effective never calls
  cell.process.close_input();
  (void)cell.process.wait();
}

TEST_CASE("a cell runs its exclusive cases after all others", "[runner][lock]") {
  const auto dir = scratch("exclusive_last");
  watched_process cell({"cell", "--case", "alloc.info.drop", "--case", "alloc.copy.dtod", "--case",
                        "context.create.many", "--case", "binding.config.effective", "--events-fd",
                        "3"},
                       dir, dir);
  std::vector<std::string> order;
  for (std::string ev; !(ev = cell.next(std::chrono::seconds(60))).empty();)
    if (ev == "case_start")
      order.push_back(cell.last["case"]);
  (void)cell.process.wait();
  CHECK(order == std::vector<std::string>{"alloc.copy.dtod", "binding.config.effective",
                                          "alloc.info.drop", "context.create.many"});
}

TEST_CASE("junit.xml fails a run whose problem no case carries: a cell that never started",
          "[runner]") {
  auto dir = scratch("junit_cell_error");
  auto m = write(dir + "/m.toml", std::string(R"(
[matrix]
cases = ["binding.config.effective"]
[axes]
NUMBA_CUDA_DRIVER = [")") + CUPARITY_SIMDRIVER +
                                      R"(", "/nonexistent/libcuda.so.1"]
)");
  auto res = test::run_cuparity({"run", m, "--out", dir + "/out"}, sim_env());
  INFO(res.out << res.err);
  CHECK(res.exit_code == 1);
  auto s = summary_of(dir + "/out");
  REQUIRE(s["problems"].size() == 1);
  CHECK(s["problems"][0]["kind"] == "cell_error");
  std::ifstream in(dir + "/out/junit.xml");
  const std::string junit((std::istreambuf_iterator<char>(in)), {});
  INFO(junit);
  CHECK_THAT(junit, Catch::Contains("<testsuite name=\"run\" tests=\"2\" failures=\"2\""));
  CHECK_THAT(junit, Catch::Contains("<testcase classname=\"cuparity.run\" name=\"cell_error ["));
  CHECK_THAT(junit, Catch::Contains("<failure type=\"cell_error\""));
  // The cell's case never ran: the run is incomplete, and junit.xml says so too.
  CHECK(s["verdict"] == "incomplete");
  REQUIRE(s["coverage"]["missing"].size() == 1);
  CHECK(s["coverage"]["missing"][0]["cell"] == "driver=/nonexistent/libcuda.so.1");
  CHECK_THAT(junit, Catch::Contains("<failure type=\"incomplete\""));
  // The totals count them: a CI reading only the top line sees the failure.
  CHECK_THAT(junit, Catch::Contains("tests=\"3\" failures=\"2\""));
}

TEST_CASE("cell file names are bounded, and long ids that share a prefix stay apart",
          "[runner][layout]") {
  CHECK_THAT(file_safe("nv=0,numba_ptds=1"), Catch::StartsWith("nv_0_numba_ptds_1-"));
  CHECK(file_safe("internal-ptds") == "internal-ptds");
  // Injective: two labels that differ only where characters are replaced stay apart, and a name
  // that looks digested cannot meet one that is.
  CHECK(file_safe("a/b") != file_safe("a_b"));
  CHECK(file_safe("a_b") == "a_b");
  const std::string digested = file_safe("a/b");
  CHECK(file_safe(digested) != digested);
  const std::string prefix(300, 'x');
  const auto a = file_safe(prefix + "a"), b = file_safe(prefix + "b");
  CHECK(a.size() == 96);
  CHECK(b.size() == 96);
  CHECK(a != b);
  CHECK(file_safe(prefix + "a") == a);    // stable
  CHECK(file_safe("").size() == 96 - 79); // no empty name: the digest alone, after a dash
  CHECK(file_safe("..") != "..");
}

// ---- a run stopped from outside: no process of it lives on, nothing half-done is recorded

namespace {

/// Two cells whose IPC cases start helper servers (each lives from its cell's first IPC case to
/// the cell's end), so a kill at any moment finds a cell, and often a helper, alive.
const char *ipc_cells = R"(
[matrix]
cases = ["context.current.none", "ipc.event.cross_process", "ipc.mem.child_roundtrip"]
[axes]
NUMBA_CUDA_USE_NVIDIA_BINDING = ["0", "1"]
)";

/// A runner started in the background, every process of its run carrying `marker`.
process_spec marked_run(std::vector<std::string> args, const std::string &marker,
                        const std::string &sim_faults = "", const std::string &shm_tag = "") {
  process_spec spec;
  spec.argv = {CUPARITY_EXE, "run"};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env = sim_env({{"PATH", "/usr/bin:/bin"}, {test::run_marker_variable, marker}});
  if (!sim_faults.empty())
    spec.env["CUPARITY_SIM_FAULTS"] = sim_faults;
  if (!shm_tag.empty())
    spec.env[test::shm_tag_variable] = shm_tag;
  return spec;
}

/// Polls the run's processes until one of them is a cell's helper server (returned: every pid
/// seen meanwhile), or 60 s pass.
std::set<int> until_helper_runs(const std::string &marker, bool &seen_helper) {
  std::set<int> seen;
  seen_helper = false;
  for (int i = 0; i < 3000 && !seen_helper; ++i) {
    for (int pid : test::marked_processes(marker)) {
      seen.insert(pid);
      seen_helper =
          seen_helper || test::command_line(pid).find(" helper --serve") != std::string::npos;
    }
    if (!seen_helper)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return seen;
}

/// What is left of a run once its runner ended (survivors() waits for them to go), with each
/// survivor's command line.
std::string survivors_text(const std::set<int> &pids) {
  std::string text;
  for (int pid : pids)
    text += std::to_string(pid) + ": " + test::command_line(pid) + "\n";
  return text;
}

std::set<int> cell_pids(const std::string &dir) {
  std::set<int> pids;
  for (auto &r : read_results(dir + "/results.jsonl").records)
    if (r["type"] == "cell" || r["type"] == "case")
      pids.insert(r.value("pid", 0));
  return pids;
}

} // namespace

TEST_CASE("SIGKILL of the runner: its cells and helpers die with it, their /dev/shm objects go",
          "[runner][orphans]") {
  auto dir = scratch("orphans_sigkill");
  auto m = write(dir + "/m.toml", ipc_cells);
  const std::string marker = test::new_run_marker("sigkill");
  // The run's objects carry a tag of their own, which its cells inherit (the runner passes its
  // environment on): a simulated process of another test or checkout sweeps only its own tag's,
  // so none can remove this run's before the checks below.
  const std::string tag = test::new_shm_tag();
  std::set<int> seen;
  {
    // The cells stop at their first free of memory or of an event, for far longer than the
    // test: the run is then sure to be holding shared memory when it is killed, however loaded
    // the host (the runner's environment reaches its cells; the resumed run below has no fault).
    child_process runner(marked_run({m, "--out", dir + "/cut", "-j", "2"}, marker,
                                    "cuMemFree_v2:delay_ns=300000000000;"
                                    "cuEventDestroy_v2:delay_ns=300000000000",
                                    tag),
                         dir + "/runner.log");
    bool helper = false;
    seen = until_helper_runs(marker, helper);
    REQUIRE(helper);
    // Kill once the run's processes hold shared memory (the cells' IPC buffers); a kill before
    // that leaves nothing for the sweep below to prove.
    for (int i = 0; i < 3000 && test::shm_objects_of(seen, tag).empty(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      for (int pid : test::marked_processes(marker))
        seen.insert(pid);
    }
    ::kill(runner.pid(), SIGKILL); // the runner alone, as the OOM killer would
    (void)runner.wait();
  }
  // Before PR_SET_PDEATHSIG, cells lived on until their next event write failed, and a helper
  // waiting on an IPC event forever (the event's exporter was gone).
  const std::set<int> left = test::survivors(marker, std::chrono::seconds(30));
  INFO(survivors_text(left));
  CHECK(left.empty());
  for (int pid : left)
    ::kill(pid, SIGKILL);

  // A killed process cannot unlink its shared-memory objects; the next simulated process of its
  // tag to start (here the resumed run's driver check and cells) removes those of dead makers.
  CHECK_FALSE(test::shm_objects_of(seen, tag).empty()); // else the sweep below proves nothing
  auto resumed = test::run_cuparity({"run", m, "--out", dir + "/cut", "--resume"},
                                    sim_env({{test::shm_tag_variable, tag}}));
  INFO(resumed.out << resumed.err);
  CHECK(resumed.exit_code == 0);
  CHECK(case_records(dir + "/cut").size() == 6);
  // The resumed run's own processes ended normally and unlinked theirs.
  std::set<int> all = cell_pids(dir + "/cut");
  all.insert(seen.begin(), seen.end());
  const auto objects = test::shm_objects_of(all, tag);
  INFO("left in /dev/shm: " << objects.size()
                            << (objects.empty() ? "" : " e.g. " + *objects.begin()));
  CHECK(objects.empty());
}

TEST_CASE("SIGINT and SIGTERM: exit 130 and 143, no process left, finished cases kept, resumable",
          "[runner][orphans][resume]") {
  const int sig = GENERATE(SIGINT, SIGTERM);
  const int code = sig == SIGINT ? 130 : 143;
  INFO("signal " << sig);
  // four_cells plus a case with a helper: the signal comes while a helper server runs, so the
  // helpers (in process groups of their own) must die with the cells the runner kills.
  std::string matrix_text = four_cells;
  matrix_text.replace(matrix_text.find("\"alloc.copy.dtod\""), 17,
                      "\"alloc.copy.dtod\", \"ipc.event.cross_process\"");
  // One uninterrupted run for both signals (GENERATE enters the test once per value).
  static const std::string whole_dir = [&] {
    auto d = scratch("stop_signal_whole");
    auto res = test::run_cuparity({"run", write(d + "/m.toml", matrix_text), "--out", d + "/out"},
                                  sim_env());
    INFO(res.out << res.err);
    REQUIRE(res.exit_code == 0);
    return d + "/out";
  }();
  const std::size_t pairs = case_records(whole_dir).size();
  REQUIRE(pairs == 28);
  auto dir = scratch("stop_signal_" + std::to_string(sig));
  auto m = write(dir + "/m.toml", matrix_text);

  const std::string marker = test::new_run_marker("stop");
  std::size_t before = 0;
  process_result stopped;
  {
    child_process runner(marked_run({m, "--out", dir + "/cut"}, marker), dir + "/runner.log");
    bool helper = false;
    (void)until_helper_runs(marker, helper);
    REQUIRE(helper);
    before = case_records(dir + "/cut").size();
    ::kill(runner.pid(), sig);
    stopped = runner.wait();
  }
  std::ifstream log(dir + "/runner.log");
  INFO(std::string((std::istreambuf_iterator<char>(log)), {}));
  CHECK(stopped.exited);
  CHECK(stopped.exit_code == code);
  const std::set<int> left = test::survivors(marker, std::chrono::seconds(30));
  INFO(survivors_text(left));
  CHECK(left.empty());
  for (int pid : left)
    ::kill(pid, SIGKILL);
  // Nothing half-done: no verdict, every line whole, every case recorded before the signal kept.
  CHECK_FALSE(fs::exists(dir + "/cut/summary.json"));
  std::ifstream in(dir + "/cut/results.jsonl");
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  CHECK((!text.empty() && text.back() == '\n'));
  const std::size_t kept = case_records(dir + "/cut").size();
  CHECK(kept >= before);
  CHECK(kept < pairs);

  auto resumed = test::run_cuparity({"run", m, "--out", dir + "/cut", "--resume"}, sim_env());
  INFO(resumed.out << resumed.err);
  REQUIRE(resumed.exit_code == 0);
  CHECK(case_records(dir + "/cut").size() == pairs); // each (cell, case) exactly once
  CHECK(comparable(summary_of(dir + "/cut")) == comparable(summary_of(whole_dir)));
}

TEST_CASE("a cell killed by its watchdog takes its IPC helper with it", "[runner][orphans]") {
  auto dir = scratch("orphans_watchdog");
  // The helper's cuIpcOpenEventHandle takes 5 s (an injected delay); the watchdog kills the cell
  // at 1.5 s, while its helper server is inside that call.
  auto m = write(dir + "/m.toml", R"(
[matrix]
cases = ["ipc.event.cross_process"]
case_timeout_s = 1.5
[axes]
NUMBA_CUDA_USE_NVIDIA_BINDING = ["0"]
CUPARITY_SIM_FAULTS = ["cuIpcOpenEventHandle:delay_ns=5000000000"]
)");
  const std::string marker = test::new_run_marker("watchdog");
  process_result r;
  {
    child_process runner(marked_run({m, "--out", dir + "/out"}, marker), dir + "/runner.log");
    bool helper = false;
    (void)until_helper_runs(marker, helper);
    REQUIRE(helper);
    r = runner.wait();
  }
  CHECK(r.exit_code == 1);
  const auto records = case_records(dir + "/out");
  REQUIRE(records.size() == 1);
  CHECK(records[0]["outcome"] == "timeout");
  const std::set<int> left = test::survivors(marker, std::chrono::seconds(30));
  INFO(survivors_text(left));
  CHECK(left.empty());
  for (int pid : left)
    ::kill(pid, SIGKILL);
}

TEST_CASE("a reference matrix reports an injected change against the reference, and none when "
          "the candidate is the same",
          "[runner][changes]") {
  auto dir = scratch("reference_changes");
  // The candidate cells run the same simulated driver with cuStreamQuery answering 1 (an error
  // code a new driver might give); the reference cells run it as it is.
  const char *cases = R"([matrix]
cases = ["stream.query.not_ready", "alloc.errors.zero", "context.init.facts"]
reference = { CUPARITY_SIM_FAULTS = false }
)";
  auto changed = write(dir + "/changed.toml", std::string(cases) + R"([axes]
NUMBA_CUDA_USE_NVIDIA_BINDING = ["0", "1"]
CUPARITY_SIM_FAULTS = [false, "cuStreamQuery:error=1"]
)");
  auto res = test::run_cuparity({"run", changed, "--out", dir + "/changed"}, sim_env());
  INFO(res.out << res.err);
  CHECK(res.exit_code == 0); // reported, not failed
  CHECK_THAT(res.out, Catch::Contains("changes against the reference: 4 (reported, not failed)"));
  CHECK_THAT(res.out,
             Catch::Contains("stream.query.not_ready observations.while_spinning: 600 -> 1"));
  auto s = summary_of(dir + "/changed");
  CHECK(s["changes"]["count"] == 4);
  CHECK(s["divergences"].empty());
  for (const auto &c : s["changes"]["changes"]) {
    CHECK(c["case"] == "stream.query.not_ready");
    CHECK(c["after"] == 1);
  }
  std::ifstream junit(dir + "/changed/junit.xml");
  const std::string xml((std::istreambuf_iterator<char>(junit)), {});
  CHECK_THAT(xml, Catch::Contains("changes against the reference"));

  // Asked to fail on a change, the same run fails, and says what changed.
  auto failing = write(dir + "/failing.toml", std::string(cases) + R"(fail_on_change = true
[axes]
NUMBA_CUDA_USE_NVIDIA_BINDING = ["0", "1"]
CUPARITY_SIM_FAULTS = [false, "cuStreamQuery:error=1"]
)");
  res = test::run_cuparity({"run", failing, "--out", dir + "/failing"}, sim_env());
  CHECK(res.exit_code == 1);
  CHECK_THAT(res.out, Catch::Contains("PROBLEM change"));

  // A candidate that behaves as the reference: nothing to report, even asked to fail.
  auto same = write(dir + "/same.toml", std::string(cases) + R"(fail_on_change = true
[axes]
NUMBA_CUDA_USE_NVIDIA_BINDING = ["0", "1"]
CUPARITY_SIM_FAULTS = [false, ""]
)");
  res = test::run_cuparity({"run", same, "--out", dir + "/same"}, sim_env());
  INFO(res.out << res.err);
  CHECK(res.exit_code == 0);
  CHECK(summary_of(dir + "/same")["changes"]["count"] == 0);
}

TEST_CASE("a reference matrix over two driver libraries: a candidate that changes an error code "
          "is reported, an identical one is not",
          "[runner][changes]") {
  auto dir = scratch("reference_two_drivers");
  // The candidate is the fault shim in front of the simulated driver (a driver library that
  // forwards every call), the reference the simulated driver itself; only the shim reads
  // CUPARITY_SHIM_FAULTS.
  auto matrix_with = [&](const std::string &name, const std::string &faults) {
    return write(dir + "/" + name + ".toml", R"([matrix]
cases = ["stream.query.not_ready", "alloc.errors.zero", "context.init.facts", "binding.resolve.audit"]
reference = { NUMBA_CUDA_DRIVER = "{bin}/libcuparity_simdriver.so" }
[axes]
NUMBA_CUDA_USE_NVIDIA_BINDING = ["0", "1"]
NUMBA_CUDA_DRIVER = ["{bin}/libcuparity_simdriver.so", "{bin}/libcuparity_fault_shim.so"]
CUPARITY_SHIM_TARGET = ["{bin}/libcuparity_simdriver.so"]
CUPARITY_SHIM_FAULTS = [")" + faults + R"("]
)");
  };
  auto res = test::run_cuparity(
      {"run", matrix_with("changed", "cuStreamQuery:error=1"), "--out", dir + "/changed"}, {});
  INFO(res.out << res.err);
  CHECK(res.exit_code == 0);
  auto s = summary_of(dir + "/changed");
  REQUIRE(s["changes"]["count"] == 4);
  for (const auto &c : s["changes"]["changes"]) {
    CHECK(c["case"] == "stream.query.not_ready");
    CHECK_THAT(c["cell"].get<std::string>(), Catch::Contains("libcuparity_fault_shim.so"));
    CHECK_THAT(c["reference"].get<std::string>(), Catch::Contains("libcuparity_simdriver.so"));
  }
  res = test::run_cuparity({"run", matrix_with("same", ""), "--out", dir + "/same"}, {});
  INFO(res.out << res.err);
  CHECK(res.exit_code == 0);
  auto same = summary_of(dir + "/same");
  CHECK(same["changes"]["count"] == 0);
  CHECK(same["changes"]["pairs"].size() == 2);
}
