// `cuparity capture`: programs that bind the simulated driver the ways packages do, captured
// through the audit library; the maps are checked exactly, then audited and run.
#include "backends/internal/suffix_rules.hpp"
#include "harness/capture/capture_map.hpp"
#include "harness/capture/map_audit.hpp"
#include "harness/capture/python_packages.hpp"
#include "harness/driver/entry.hpp"
#include "test_support.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>
#include <unistd.h>

using namespace cuparity;
using json = nlohmann::json;

namespace {

namespace fs = std::filesystem;

std::string scratch(const std::string &name) {
  const auto dir = fs::temp_directory_path() / "cuparity-capture-tests";
  fs::create_directories(dir);
  return (dir / name).string();
}

std::string program(const std::string &name) {
  return std::string(CUPARITY_BIN_DIR) + "/" + name;
}

struct captured {
  process_result run;
  json map;
};

captured capture(const std::string &name, std::vector<std::string> command, test::vars env = {}) {
  const std::string out = scratch(name + ".json");
  fs::remove(out);
  env.try_emplace("NUMBA_CUDA_DRIVER", CUPARITY_SIMDRIVER);
  std::vector<std::string> args = {"capture", "--out", out, "--"};
  args.insert(args.end(), command.begin(), command.end());
  captured c{test::run_cuparity(args, env), json()};
  INFO(c.run.out << c.run.err);
  if (fs::exists(out))
    c.map = json::parse(std::ifstream(out));
  return c;
}

/// (source, raw_name, symbol or "-", version, flags) of every entry of process `pid`.
using row = std::tuple<std::string, std::string, std::string, long long, long long>;
std::set<row> rows(const json &map, long pid) {
  std::set<row> out;
  for (const auto &e : map["entries"]) {
    if (e["process"] != pid)
      continue;
    const json &q = e["request"];
    out.insert({e["source"], e["raw_name"], e["symbol"].is_null() ? "-" : e["symbol"],
                q.is_null() ? -1 : q["version"].get<long long>(),
                q.is_null() ? -1 : q["flags"].get<long long>()});
  }
  return out;
}

const json *entry(const json &map, const std::string &source, const std::string &raw_name,
                  long long flags = -1) {
  for (const auto &e : map["entries"])
    if (e["source"] == source && e["raw_name"] == raw_name &&
        (flags < 0 || e["request"]["flags"] == flags))
      return &e;
  return nullptr;
}

long top_pid(const json &map) {
  return map["processes"][0]["pid"].get<long>();
}

/// A fake site-packages holding the fake cydriver as cuda.bindings' module, owned by a
/// cuda_bindings dist-info: what the capture sees of a real wheel.
std::string fake_site_packages() {
  const fs::path site = scratch("venv/lib/python3.12/site-packages");
  fs::create_directories(site / "cuda/bindings/_bindings");
  fs::create_directories(site / "cuda_bindings-13.0.0.dist-info");
  const fs::path module = site / "cuda/bindings/_bindings/cydriver.cpython-312-x86_64-linux-gnu.so";
  fs::copy_file(program("libcapture_fake_cydriver.so"), module,
                fs::copy_options::overwrite_existing);
  std::ofstream(site / "cuda_bindings-13.0.0.dist-info/METADATA")
      << "Metadata-Version: 2.1\nName: cuda-bindings\nVersion: 13.0.0\n\nbody\n";
  std::ofstream(site / "cuda_bindings-13.0.0.dist-info/RECORD")
      << "cuda/__init__.py,,\n"
      << "cuda/bindings/_bindings/cydriver.cpython-312-x86_64-linux-gnu.so,sha256=x,1\n"
      << "cuda_bindings-13.0.0.dist-info/RECORD,,\n";
  return module.string();
}

map_audit_report audit(const std::string &path) {
  const auto lib = driver_library::open(CUPARITY_SIMDRIVER);
  return audit_captured_map(read_captured_map(path), *lib);
}

std::vector<const map_finding *> findings(const map_audit_report &r, finding_kind k) {
  std::vector<const map_finding *> out;
  for (const auto &f : r.findings)
    if (f.kind == k)
      out.push_back(&f);
  return out;
}

} // namespace

TEST_CASE("capture: Numba-style dlsym probing is recorded exactly, in both stream-0 modes",
          "[capture]") {
  for (const bool ptds : {false, true}) {
    auto c =
        capture(ptds ? "probe1" : "probe0", {program("capture_numba_probe"), CUPARITY_SIMDRIVER},
                {{"PROBE_PTDS", ptds ? "1" : "0"}});
    INFO(c.run.out << c.run.err);
    REQUIRE(c.run.exit_code == 0);
    CHECK(c.map["schema"] == "cuparity.binding_map/2");
    CHECK(c.map["status"] == "ok");
    CHECK(c.map["driver"]["version"] == 13000);
    REQUIRE(c.map["processes"].size() == 1);
    const std::set<row> expected =
        ptds ? std::set<row>{{"dlsym", "cuInit", "cuInit", -1, -1},
                             {"dlsym", "cuMemcpyHtoD_v2_ptds", "cuMemcpyHtoD_v2_ptds", -1, -1},
                             {"dlsym", "cuStreamSynchronize_ptsz", "cuStreamSynchronize_ptsz", -1,
                              -1},
                             {"dlsym", "cuCtxPushCurrent_v2", "cuCtxPushCurrent_v2", -1, -1}}
             : std::set<row>{{"dlsym", "cuInit", "cuInit", -1, -1},
                             {"dlsym", "cuMemcpyHtoD_v2", "cuMemcpyHtoD_v2", -1, -1},
                             {"dlsym", "cuStreamSynchronize", "cuStreamSynchronize", -1, -1},
                             {"dlsym", "cuCtxPushCurrent_v2", "cuCtxPushCurrent_v2", -1, -1}};
    CHECK(rows(c.map, top_pid(c.map)) == expected);
    const json *e = entry(c.map, "dlsym", ptds ? "cuMemcpyHtoD_v2_ptds" : "cuMemcpyHtoD_v2");
    REQUIRE(e);
    CHECK((*e)["function"] == "cuMemcpyHtoD");
    CHECK((*e)["caller"] == program("capture_numba_probe")); // the main program, by its exe
    CHECK((*e)["count"] == 1);
    CHECK(c.map["processes"][0]["environment"]["PROBE_PTDS"].is_null()); // only binding variables
    // No variable tells what a plain C program should bind: its mode is inferred from what it
    // bound (cuMemcpyHtoD and cuStreamSynchronize have per-thread twins; cuInit and
    // cuCtxPushCurrent have none, so they are no evidence), and every binding is judged.
    const map_audit_report r = audit(scratch(ptds ? "probe1.json" : "probe0.json"));
    CHECK_FALSE(r.failed);
    CHECK(findings(r, finding_kind::unchecked).empty());
    CHECK(findings(r, finding_kind::same).size() == 4);
    REQUIRE(r.inferred.size() == 1);
    CHECK_THAT(r.inferred[0], Catch::EndsWith(std::string(ptds ? "per-thread" : "legacy") +
                                              ", inferred from what it bound (2 functions with "
                                              "a per-thread variant)"));
    for (const auto *f : findings(r, finding_kind::same))
      if (f->function == "cuMemcpyHtoD")
        CHECK_THAT(f->because, Catch::StartsWith("inferred from what capture_numba_probe bound"));
  }
}

TEST_CASE("capture: cuGetProcAddress requests with their versions and flags, cudart's "
          "self-requests, a child process, and a per-thread-wrong binding caught and named",
          "[capture]") {
  const std::string cydriver = fake_site_packages();
  auto c = capture("requests", {program("capture_proc_requests"), CUPARITY_SIMDRIVER, cydriver},
                   {{"CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM", "0"}});
  INFO(c.run.out << c.run.err);
  REQUIRE(c.run.exit_code == 0);
  REQUIRE(c.map["processes"].size() == 2);
  const long top = top_pid(c.map);
  const std::set<row> expected = {
      {"dlsym", "cuGetProcAddress_v2", "cuGetProcAddress_v2", -1, -1},
      {"dlsym", "cuDriverGetVersion", "cuDriverGetVersion", -1, -1},
      {"proc", "cuCtxCreate", "cuCtxCreate_v4", 12050, 0},
      {"proc", "cuMemcpyHtoD", "cuMemcpyHtoD_v2", 12000, 1},
      {"proc", "cuMemcpyHtoD", "cuMemcpyHtoD_v2_ptds", 12000, 2},
      {"proc", "cuStreamSynchronize", "cuStreamSynchronize", 12000, 0},
      {"proc", "cuMemcpyHtoD", "-", 3020, 2},
      {"proc", "cuGetProcAddress", "cuGetProcAddress_v2", 12000, 0},
      // Resolved through the pointer the self-request returned: the wrapper was handed out again.
      {"proc", "cuEventRecord", "cuEventRecord_ptsz", 12000, 2},
      {"proc", "cuGetProcAddress", "cuGetProcAddress", 11030, 0},
      {"proc", "cuCtxCreate", "cuCtxCreate_v2", 3020, 0},
      // The fake cydriver's: the per-thread flag under "0" (cuda-python's old bug).
      {"proc", "cuStreamSynchronize", "cuStreamSynchronize_ptsz", 12000, 2}};
  CHECK(rows(c.map, top) == expected);
  const json *too_old = entry(c.map, "proc", "cuMemcpyHtoD", 2);
  REQUIRE(too_old);
  const json *v1 = nullptr;
  for (const auto &e : c.map["entries"])
    if (e["raw_name"] == "cuCtxCreate" && e["request"]["version"] == 3020)
      v1 = &e;
  REQUIRE(v1);
  CHECK((*v1)["request"]["abi"] == "cuGetProcAddress"); // the 11.3-11.8 ABI, no status
  CHECK((*v1)["request"]["status"].is_null());
  // The fake's two requests come from the module, owned by the cuda-bindings distribution.
  std::size_t from_bindings = 0;
  for (const auto &e : c.map["entries"])
    if (e["caller"] == cydriver) {
      CHECK(e["caller_package"] == "cuda-bindings");
      ++from_bindings;
    }
  CHECK(from_bindings == 3); // its dlsym of cuGetProcAddress_v2 and two requests
  CHECK(c.map["packages"] == json::parse(R"([{"name":"cuda-bindings","version":"13.0.0"}])"));
  // The child: started by fork and exec, so it inherited the audit and has its own section.
  const json &child = c.map["processes"][1];
  CHECK(child["ppid"] == top);
  CHECK(child["forked"] == false);
  CHECK(child["argv"][1] == "--child");
  CHECK(rows(c.map, child["pid"]).size() == 4);

  const map_audit_report r = audit(scratch("requests.json"));
  CHECK(r.failed);
  const auto wrong = findings(r, finding_kind::per_thread_wrong);
  REQUIRE(wrong.size() == 2); // the fake's two, and nothing of the program's own requests
  for (const auto *f : wrong) {
    CHECK_THAT(f->message, Catch::Contains("pid " + std::to_string(top)));
    CHECK_THAT(f->message, Catch::Contains("CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM=\"0\""));
    CHECK_THAT(f->message, Catch::Contains("selects legacy"));
  }
  const auto old = findings(r, finding_kind::per_thread_too_old);
  REQUIRE(old.size() == 1);
  CHECK_THAT(old[0]->message, Catch::Contains("cuMemcpyHtoD: asked with the per-thread flag at "
                                              "3020"));
  // Reported, never failures: both modes of cuMemcpyHtoD (flags 1 and 2), two ABIs of
  // cuCtxCreate (_v2 through the v1 pointer, _v4 at 12050), cuDriverGetVersion by dlsym alone.
  const auto named = [&r](finding_kind k) {
    std::set<std::string> out;
    for (const auto *f : findings(r, k))
      out.insert(f->function);
    return out;
  };
  CHECK(named(finding_kind::both_modes) ==
        std::set<std::string>{"cuMemcpyHtoD", "cuStreamSynchronize"});
  CHECK(named(finding_kind::two_abis) == std::set<std::string>{"cuCtxCreate"});
  CHECK(named(finding_kind::only_direct) == std::set<std::string>{"cuDriverGetVersion"});
  // The same fake under "1" binds what its variable selects.
  auto on = capture("requests1", {program("capture_proc_requests"), CUPARITY_SIMDRIVER, cydriver},
                    {{"CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM", "1"}});
  REQUIRE(on.run.exit_code == 0);
  CHECK(findings(audit(scratch("requests1.json")), finding_kind::per_thread_wrong).empty());
  auto cli = test::run_cuparity({"audit", "--map", scratch("requests.json")},
                                {{"NUMBA_CUDA_DRIVER", CUPARITY_SIMDRIVER}});
  CHECK(cli.exit_code == 1);
  CHECK_THAT(cli.out, Catch::Contains("MISMATCH pid "));
  CHECK_THAT(cli.out, Catch::Contains("per_thread_too_old pid "));
}

TEST_CASE("capture: a Python program binding through ctypes, and its child", "[capture]") {
  const std::string script = scratch("bind.py");
  std::ofstream(script) << R"PY(
import ctypes, subprocess, sys
lib = ctypes.CDLL(sys.argv[1])
gpa = lib.cuGetProcAddress_v2
gpa.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int,
                ctypes.c_uint64, ctypes.POINTER(ctypes.c_int)]
p, st = ctypes.c_void_p(), ctypes.c_int(-1)
flags = 2 if len(sys.argv) > 2 else 1
print("result", gpa(b"cuMemcpyHtoD", ctypes.byref(p), 12000, flags, ctypes.byref(st)), st.value)
if len(sys.argv) == 2:
    sys.exit(subprocess.call([sys.executable, __file__, sys.argv[1], "child"]) + 5)
)PY";
  auto c = capture("python", {"python3", script, CUPARITY_SIMDRIVER});
  INFO(c.run.out << c.run.err);
  CHECK(c.run.exit_code == 5); // the program's own exit status passes through
  CHECK_THAT(c.run.out, Catch::Contains("result 0 0"));
  REQUIRE(c.map["processes"].size() == 2);
  const long top = top_pid(c.map), child = c.map["processes"][1]["pid"].get<long>();
  CHECK(rows(c.map, top) ==
        std::set<row>{{"dlsym", "cuGetProcAddress_v2", "cuGetProcAddress_v2", -1, -1},
                      {"proc", "cuMemcpyHtoD", "cuMemcpyHtoD_v2", 12000, 1}});
  CHECK(rows(c.map, child) ==
        std::set<row>{{"dlsym", "cuGetProcAddress_v2", "cuGetProcAddress_v2", -1, -1},
                      {"proc", "cuMemcpyHtoD", "cuMemcpyHtoD_v2_ptds", 12000, 2}});
  // ctypes calls through libffi: the caller is CPython's _ctypes module or libffi.
  const json *e = entry(c.map, "dlsym", "cuGetProcAddress_v2");
  REQUIRE(e);
  CHECK_THAT((*e)["caller"].get<std::string>(), Catch::Contains("ctypes"));
}

TEST_CASE("capture: a command that never loads the driver, one that cannot start, bad --out",
          "[capture]") {
  auto none = capture("none", {"sh", "-c", "exit 7"});
  CHECK(none.run.exit_code == 7);
  CHECK(none.map["status"] == "no_driver");
  CHECK(none.map["entries"].empty());
  CHECK_THAT(none.run.err, Catch::Contains("bound nothing of the driver"));
  auto audit_none = test::run_cuparity({"audit", "--map", scratch("none.json")},
                                       {{"NUMBA_CUDA_DRIVER", CUPARITY_SIMDRIVER}});
  CHECK(audit_none.exit_code == 4); // nothing was audited: never a pass
  CHECK_THAT(audit_none.out,
             Catch::Contains("NOT AUDITED: no_driver: no process of the command loaded"));

  auto killed = capture("killed", {"sh", "-c", "kill -9 $$"});
  CHECK(killed.run.exit_code == 137); // as a shell reports a SIGKILL
  CHECK(killed.map["exit_status"] == 137);

  auto missing = capture("missing", {"/nonexistent/program"});
  CHECK(missing.run.exit_code == 3);
  CHECK_THAT(missing.run.err, Catch::Contains("cannot start /nonexistent/program"));

  auto bad_out =
      test::run_cuparity({"capture", "--out", "/nonexistent/dir/map.json", "--", "true"}, {});
  CHECK(bad_out.exit_code == 2);
  CHECK_THAT(bad_out.err, Catch::Contains("--out"));
  CHECK_THAT(bad_out.err, Catch::Contains("/nonexistent/dir"));
  auto no_command = test::run_cuparity({"capture"}, {});
  CHECK(no_command.exit_code == 2);
}

TEST_CASE("a binding_map/2 with a bad member is refused naming the file and the member",
          "[capture]") {
  auto c = capture("strict", {program("capture_numba_probe"), CUPARITY_SIMDRIVER});
  REQUIRE(c.run.exit_code == 0);
  const auto error_of = [&c](const std::function<void(json &)> &edit) {
    json m = c.map;
    edit(m);
    const std::string path = scratch("strict-edited.json");
    std::ofstream(path) << m.dump();
    try {
      (void)read_captured_map(path);
    } catch (const map_error &e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK_THAT(error_of([](json &m) { m["entries"][0]["source"] = "ptrace"; }),
             Catch::Contains("strict-edited.json: entries[0].source: expected plt, dlsym or proc"));
  CHECK_THAT(error_of([](json &m) { m["entries"][0].erase("count"); }),
             Catch::Contains("entries[0].count: expected an integer"));
  CHECK_THAT(error_of([](json &m) {
               m["entries"][0]["request"] = {{"abi", "x"}};
             }),
             Catch::Contains("entries[0].request: expected null for a dlsym entry"));
  CHECK_THAT(error_of([](json &m) { m["processes"][0]["pid"] = "12"; }),
             Catch::Contains("processes[0].pid: expected an integer"));
  CHECK_THAT(error_of([](json &m) { m["package"]["kind"] = "numba"; }),
             Catch::Contains("package.kind: expected \"process\""));
  CHECK_THAT(error_of([](json &m) { m["status"] = "load_failed"; }),
             Catch::Contains("status: expected ok or no_driver"));
  // A doubled binding or image would be judged and run twice; a pid no process can have is none.
  CHECK_THAT(error_of([](json &m) { m["entries"].push_back(m["entries"][1]); }),
             Catch::Contains("strict-edited.json: entries[4]: the same binding again (entries[1] "
                             "is the same)"));
  CHECK(error_of([](json &m) {
          json e = m["entries"][1];
          e["count"] = 7; // the count alone differs: still the same binding
          m["entries"].push_back(e);
        }) != "");
  CHECK_THAT(error_of([](json &m) { m["processes"].push_back(m["processes"][0]); }),
             Catch::Contains("processes[1]: pid "));
  for (const long long pid : {-1LL, 0LL, 1LL << 40})
    CHECK_THAT(error_of([pid](json &m) {
                 m["processes"][0]["pid"] = pid;
                 for (auto &e : m["entries"])
                   e["process"] = pid;
               }),
               Catch::Contains("processes[0].pid: expected an integer from 1 to 2147483647"));
}

TEST_CASE("base names and per-thread symbols as the capture names them", "[capture]") {
  CHECK(base_function("cuMemcpyHtoD_v2_ptds") == "cuMemcpyHtoD");
  CHECK(base_function("cuStreamSynchronize_ptsz") == "cuStreamSynchronize");
  CHECK(base_function("cuCtxCreate_v4") == "cuCtxCreate");
  CHECK(base_function("cuGetProcAddress") == "cuGetProcAddress");
  CHECK(base_function("cuFoo_vX") == "cuFoo_vX");
  CHECK(is_per_thread_symbol("cuEventRecord_ptsz"));
  CHECK_FALSE(is_per_thread_symbol("cuEventRecord"));
}

namespace {

/// A process-tree map (/2) of one process `pid` running `name`, holding `entries`.
json tree_map(const std::string &name, long pid, json entries) {
  return {{"schema", "cuparity.binding_map/2"},
          {"package", {{"kind", "process"}, {"name", name}, {"version", nullptr}}},
          {"command", {name}},
          {"exit_status", 0},
          {"environment", json::object()},
          {"driver", {{"path", CUPARITY_SIMDRIVER}, {"version", 13000}}},
          {"status", "ok"},
          {"error", ""},
          {"captured", "2026-12-03T12:00:00Z"},
          {"packages", json::array()},
          {"processes",
           {{{"pid", pid},
             {"image", 0},
             {"ppid", 1},
             {"forked", false},
             {"exe", name},
             {"argv", {name}},
             {"environment", json::object()},
             {"drivers", {CUPARITY_SIMDRIVER}},
             {"packages", json::array()},
             {"binds", 0},
             {"requests", entries.size()},
             {"unreadable_lines", 0}}}},
          {"problems", json::array()},
          {"entries", std::move(entries)}};
}

/// A process map (/2) binding the whole entry table at cuparity's ABIs by cuGetProcAddress, both
/// stream-0 modes where the driver has a per-thread variant (as cudart asks, flags 0 and 2), plus,
/// with `older`, the CUDA 2.0 ABIs PyTorch dlsyms (cuCtxPushCurrent, cuCtxPopCurrent,
/// cuCtxDestroy, cuStreamDestroy, cuEventDestroy, cuEventElapsedTime) bound directly.
std::string process_map(const std::string &name, bool older) {
  const auto lib = driver_library::open(CUPARITY_SIMDRIVER);
  const std::set<std::string> old_ones = {"cuCtxPushCurrent", "cuCtxPopCurrent",
                                          "cuCtxDestroy",     "cuStreamDestroy",
                                          "cuEventDestroy",   "cuEventElapsedTime"};
  json entries = json::array();
  const auto add = [&entries](const std::string &function, const std::string &symbol,
                              const std::string &source, int flags = 0) {
    entries.push_back({{"function", function},
                       {"raw_name", source == "proc" ? function : symbol},
                       {"symbol", symbol},
                       {"library", CUPARITY_SIMDRIVER},
                       {"source", source},
                       {"process", 100},
                       {"image", 0},
                       {"caller", "/opt/app/libapp.so"},
                       {"caller_package", nullptr},
                       {"request", source == "proc" ? json{{"abi", "cuGetProcAddress_v2"},
                                                           {"version", 12000},
                                                           {"flags", flags},
                                                           {"result", 0},
                                                           {"status", 0}}
                                                    : json(nullptr)},
                       {"count", 1}});
  };
  for (const auto &e : all_entries()) {
    for (const bool ptds : {true, false})
      for (const auto &c : suffix_rules::numba().candidates(e.name, ptds))
        if (lib->symbol(c.c_str())) {
          if (!ptds || is_per_thread_symbol(c))
            add(std::string(e.name), c, "proc", ptds ? 2 : 0);
          break;
        }
    if (older && old_ones.count(std::string(e.name)))
      add(std::string(e.name), std::string(e.name), "dlsym");
  }
  const json m = tree_map(name, 100, entries);
  const std::string path = scratch(name + ".map.json");
  std::ofstream(path) << m.dump(1);
  return path;
}

} // namespace

TEST_CASE("through a process map, older ABIs of the same signature run and are judged beside "
          "the current ones",
          "[capture][runner]") {
  const std::string older = process_map("older", true), current = process_map("current", false);
  const std::string matrix = scratch("older.toml");
  std::ofstream(matrix) << "[matrix]\ncases = [\"context.create.lifecycle\", "
                           "\"stream.event.elapsed\", \"alloc.copy.dtod\", "
                           "\"binding.resolve.audit\", \"stream.default.semantics\"]\n[axes]\n"
                           "CUPARITY_BINDING_MAP = [\""
                        << current << "\", \"" << older << "\"]\n";
  const std::string out = scratch("older_out");
  auto res = test::run_cuparity({"run", matrix, "--out", out, "--force", "--no-latency"},
                                {{"NUMBA_CUDA_DRIVER", CUPARITY_SIMDRIVER}});
  INFO(res.out << res.err);
  const json s = json::parse(std::ifstream(out + "/summary.json"));
  // Every case passes through the older ABIs, binding.resolve.audit included (it asks the driver
  // at the ABI bound); what differs is exactly which symbol each older entry is, reported as
  // divergences of the audit's observations, so the run is not "equivalent".
  for (const auto &r : s["results"])
    CHECK(r["outcome"] == "pass");
  // Both modes bound, none by the process's own code: stream 0 is legacy, as cudart's is.
  for (const auto &c : s["cells"])
    CHECK(c["config"]["stream0"] == "legacy");
  std::set<std::string> diverged;
  for (const auto &d : s["divergences"]) {
    CHECK(d["case"] == "binding.resolve.audit");
    diverged.insert(d["key"].get<std::string>());
  }
  CHECK(diverged ==
        std::set<std::string>{
            "observations.symbol.cuCtxDestroy", "observations.symbol.cuCtxPopCurrent",
            "observations.symbol.cuCtxPushCurrent", "observations.symbol.cuEventDestroy",
            "observations.symbol.cuEventElapsedTime", "observations.symbol.cuStreamDestroy"});
  CHECK(res.exit_code == 1);
  // What the older cell bound: the CUDA 2.0 symbols, recorded with their ABI.
  std::map<std::string, json> bound;
  std::ifstream results(out + "/results.jsonl");
  for (std::string line; std::getline(results, line);) {
    const json r = json::parse(line);
    if (r["type"] == "binding_map" && r["cell"] == "map=" + older)
      for (const auto &b : r["map"])
        bound[b["entry"]] = b;
  }
  REQUIRE(bound.count("cuCtxPushCurrent"));
  CHECK(bound["cuCtxPushCurrent"]["symbol"] == "cuCtxPushCurrent");
  CHECK(bound["cuCtxPushCurrent"]["abi"] == 2000);
  CHECK(bound["cuEventElapsedTime"]["symbol"] == "cuEventElapsedTime");
  CHECK(bound["cuEventElapsedTime"]["abi"] == 2000);
  CHECK(bound["cuMemAlloc"]["symbol"] == "cuMemAlloc_v2"); // no same-signature older ABI
  CHECK(bound["cuMemAlloc"]["abi"] == 3020);
}

TEST_CASE("a per-thread request below its variant's version fails the audit, known from the "
          "driver's status alone for a name the headers do not declare",
          "[capture]") {
  const json entry = {{"function", "cuFutureGraphLaunch"},
                      {"raw_name", "cuFutureGraphLaunch"},
                      {"symbol", nullptr},
                      {"library", nullptr},
                      {"source", "proc"},
                      {"process", 7},
                      {"image", 0},
                      {"caller", "/opt/app/libapp.so"},
                      {"caller_package", nullptr},
                      {"request",
                       {{"abi", "cuGetProcAddress_v2"},
                        {"version", 9000},
                        {"flags", 2},
                        {"result", 0},
                        {"status", 2}}}, // CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                      {"count", 1}};
  const json m = tree_map("app", 7, json::array({entry}));
  const std::string path = scratch("too-old.json");
  std::ofstream(path) << m.dump();
  const map_audit_report r = audit(path);
  CHECK(r.failed);
  REQUIRE(findings(r, finding_kind::per_thread_too_old).size() == 1);
  CHECK_THAT(r.findings[0].message,
             Catch::Contains("cuFutureGraphLaunch: asked with the per-thread flag at 9000"));
}

TEST_CASE("capture survives hostile programs: descriptors taken away, an exec in the same "
          "process, a long argument, two drivers, 64-bit flags, a relative events folder",
          "[capture]") {
  // The program closes every descriptor and opens its own file: no event may land in it.
  const std::string mine = scratch("mine.txt");
  auto closed =
      capture("closefds", {program("capture_hostile"), "closefds", mine, CUPARITY_SIMDRIVER},
              {{"CUDA_VISIBLE_DEVICES", "\xc3\xa9"}, {"LD_LIBRARY_PATH", "/x\xff"}});
  REQUIRE(closed.run.exit_code == 0);
  std::ifstream in(mine);
  CHECK(std::string((std::istreambuf_iterator<char>(in)), {}) == "mine\n");
  CHECK(entry(closed.map, "proc", "cuDeviceGet"));
  // UTF-8 text is kept as it is; a byte that is no UTF-8 is written as the four characters \xNN.
  const json &env = closed.map["processes"][0]["environment"];
  CHECK(env["CUDA_VISIBLE_DEVICES"] == "\xc3\xa9");
  CHECK(env["LD_LIBRARY_PATH"] == "/x\\xff");

  // `env VAR=1 program`: one pid, two images; the program's bindings are its own, under its own
  // environment. A 9000-character argument fits.
  const std::string long_arg(9000, 'a');
  auto exec = capture("exec", {"env", "CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM=1",
                               program("capture_numba_probe"), CUPARITY_SIMDRIVER, long_arg});
  REQUIRE(exec.run.exit_code == 0);
  const json &procs = exec.map["processes"];
  REQUIRE(procs.size() == 2);
  CHECK(procs[0]["pid"] == procs[1]["pid"]);
  CHECK(procs[1]["image"] == 1);
  CHECK(procs[1]["argv"][2] == long_arg);
  CHECK(procs[1]["environment"]["CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM"] == "1");
  CHECK(procs[0]["unreadable_lines"] == 0);
  for (const auto &e : exec.map["entries"]) {
    CHECK(e["image"] == 1);
    CHECK(e["caller"] == program("capture_numba_probe"));
  }

  // Two drivers side by side: each one's requests are seen, with its own library.
  const std::string other = scratch("second/libcuda.so.1");
  fs::create_directories(fs::path(other).parent_path());
  fs::copy_file(CUPARITY_SIMDRIVER, other, fs::copy_options::overwrite_existing);
  auto two = capture("two", {program("capture_hostile"), "two", CUPARITY_SIMDRIVER, other});
  REQUIRE(two.run.exit_code == 0);
  const json *a = entry(two.map, "proc", "cuInit"), *b = entry(two.map, "proc", "cuDeviceGet");
  REQUIRE(a);
  REQUIRE(b);
  CHECK((*a)["library"] == CUPARITY_SIMDRIVER);
  CHECK((*b)["library"] == other);

  // Flags of 2^63 and more are recorded whole, and the audit reads them.
  auto flags = capture("flags", {program("capture_hostile"), "flags", CUPARITY_SIMDRIVER});
  std::set<std::uint64_t> seen;
  for (const auto &e : flags.map["entries"])
    if (e["source"] == "proc")
      seen.insert(e["request"]["flags"].get<std::uint64_t>());
  CHECK(seen == std::set<std::uint64_t>{1ULL << 63, ~0ULL});
  CHECK_NOTHROW(audit(scratch("flags.json")));

  // A relative --events folder, and a process that changes directory: still captured.
  const std::string events = "capture-relative-events-" + std::to_string(getpid());
  fs::remove_all(events);
  fs::create_directories(events);
  auto moved = test::run_cuparity(
      {"capture", "--events", events, "--out", scratch("moved.json"), "--", "sh", "-c",
       "cd / && " + program("capture_numba_probe") + " " + CUPARITY_SIMDRIVER},
      {{"NUMBA_CUDA_DRIVER", CUPARITY_SIMDRIVER}});
  fs::remove_all(events);
  INFO(moved.err);
  REQUIRE(moved.exit_code == 0);
  const json m = json::parse(std::ifstream(scratch("moved.json")));
  CHECK(m["status"] == "ok");
  CHECK(m["entries"].size() == 4);
}

TEST_CASE("capture refuses what it can before the command runs, and passes a SIGTERM on",
          "[capture]") {
  const std::string copy = scratch("own-program");
  fs::copy_file(program("capture_numba_probe"), copy, fs::copy_options::overwrite_existing);
  auto self = test::run_cuparity({"capture", "--out", copy, "--", copy, CUPARITY_SIMDRIVER}, {});
  CHECK(self.exit_code == 2);
  CHECK_THAT(self.err, Catch::Contains("is the command itself"));
  auto no_events = test::run_cuparity(
      {"capture", "--events", scratch("absent-folder"), "--out", scratch("e.json"), "--", "true"},
      {});
  CHECK(no_events.exit_code == 2);
  CHECK_THAT(no_events.err, Catch::Contains("absent-folder: does not exist"));

  // A SIGTERM to cuparity reaches the command; cuparity still writes the map, with the status.
  const std::string out = scratch("term.json");
  fs::remove(out);
  // The signal goes once cuparity has started the command: its child `sleep` exists (named sleep
  // once it has exec'd). A fixed `sleep 1` first could end before cuparity had started it on a
  // loaded machine, and the SIGTERM then ended cuparity itself, before any map.
  const std::string until_started = R"sh(
started() {
  for f in /proc/[0-9]*/stat; do
    read -r _ name _ parent _ <"$f" && [ "$parent" = "$p" ] && [ "$name" = "(sleep)" ] && return 0
  done 2>/dev/null
  return 1
}
n=0; until started || [ $n -ge 1500 ]; do sleep 0.02; n=$((n + 1)); done
started && echo started
)sh";
  process_spec spec;
  spec.argv = {"/bin/sh", "-c",
               std::string(CUPARITY_EXE) + " capture --out " + out + " -- sleep 30 & p=$!" +
                   until_started + "kill -TERM $p; wait $p; echo rc=$?"};
  spec.env = {{"PATH", "/usr/bin:/bin"}};
  spec.timeout = std::chrono::seconds(90);
  const auto r = run_process(spec);
  INFO(r.out << r.err);
  REQUIRE_THAT(r.out, Catch::Contains("started"));
  CHECK_THAT(r.out, Catch::Contains("rc=143"));
  REQUIRE(fs::exists(out));
  CHECK(json::parse(std::ifstream(out))["exit_status"] == 143);
}

// ---- the whole driver API (issue 48): every binding judged against the headers' table, or named
// with the reason it cannot be.

#include "harness/capture/api_expectation.hpp"
#include "harness/driver/driver_api.hpp"

namespace {

json request_entry(const std::string &function, const std::optional<std::string> &symbol,
                   long long version, int flags, int status = 0,
                   const std::string &caller = "/opt/app/libcudart.so.13") {
  return {{"function", function},
          {"raw_name", function},
          {"symbol", symbol ? json(*symbol) : json(nullptr)},
          {"library", symbol ? json(CUPARITY_SIMDRIVER) : json(nullptr)},
          {"source", "proc"},
          {"process", 7},
          {"image", 0},
          {"caller", caller},
          {"caller_package", nullptr},
          {"request",
           {{"abi", "cuGetProcAddress_v2"},
            {"version", version},
            {"flags", flags},
            {"result", 0},
            {"status", status}}},
          {"count", 1}};
}

json direct_entry(const std::string &symbol, const std::string &caller, int image = 0) {
  return {{"function", base_function(symbol)},
          {"raw_name", symbol},
          {"symbol", symbol},
          {"library", CUPARITY_SIMDRIVER},
          {"source", "dlsym"},
          {"process", 7},
          {"image", image},
          {"caller", caller},
          {"caller_package", nullptr},
          {"request", nullptr},
          {"count", 1}};
}

/// Audits a one-process map (pid 7) of `entries`, edited by `edit` before it is written.
map_audit_report audit_entries(const std::string &name, const json &entries,
                               const std::function<void(json &)> &edit = {}) {
  json m = tree_map(name, 7, entries);
  if (edit)
    edit(m);
  const std::string path = scratch(name + ".json");
  std::ofstream(path) << m.dump(1);
  return audit(path);
}

const map_finding *of(const map_audit_report &r, finding_kind k, const std::string &function,
                      const std::string &captured = "") {
  for (const auto &f : r.findings)
    if (f.kind == k && f.function == function && (captured.empty() || f.captured == captured))
      return &f;
  return nullptr;
}

std::string headers_name() {
  return cuda_version_text(api_headers_version());
}

} // namespace

TEST_CASE("whole API: a function outside cuparity's entries is judged; unknown is only a name the "
          "headers do not declare, each listed with the headers' version",
          "[capture][whole-api]") {
  const json entries = json::array({request_entry("cuGraphCreate", "cuGraphCreate", 13000, 0),
                                    direct_entry("cuFutureFunction", "/opt/app/libapp.so"),
                                    request_entry("", std::nullopt, 0, 0, 1),
                                    direct_entry("cuMemAlloc_v9", "/opt/app/libapp.so")});
  const map_audit_report r = audit_entries("whole-unknown", entries);
  REQUIRE(r.audited);
  CHECK(r.headers_version == api_headers_version());
  REQUIRE(of(r, finding_kind::same, "cuGraphCreate")); // not in entries.list: judged all the same
  CHECK(r.unknown == std::vector<std::string>{"", "cuFutureFunction", "cuMemAlloc_v9"});
  CHECK(r.counts.at(finding_kind::unknown) == 3);
  REQUIRE(of(r, finding_kind::unknown, "cuFutureFunction"));
  CHECK_THAT(of(r, finding_kind::unknown, "cuFutureFunction")->message,
             Catch::Contains("cuFutureFunction: not declared by the " + headers_name() +
                             " headers cuparity was built with; not checked"));
  CHECK_THAT(of(r, finding_kind::unknown, "cuMemAlloc")->message,
             Catch::Contains("cuMemAlloc_v9 is no symbol of cuMemAlloc the " + headers_name()));
  CHECK_FALSE(r.failed);

  // The console lists every one, and says which headers; --json has the list and the version.
  json many = entries;
  for (int i = 0; i < 12; ++i)
    many.push_back(direct_entry("cuFuture" + std::to_string(i), "/opt/app/libapp.so"));
  (void)audit_entries("whole-unknown-many", many);
  const std::string out_json = scratch("whole-unknown.audit.json");
  auto cli =
      test::run_cuparity({"audit", "--map", scratch("whole-unknown-many.json"), "--json", out_json},
                         {{"NUMBA_CUDA_DRIVER", CUPARITY_SIMDRIVER}});
  INFO(cli.out << cli.err);
  CHECK(cli.exit_code == 0);
  CHECK_THAT(cli.out, Catch::Contains("  judged against the driver API of the " + headers_name() +
                                      " headers cuparity was built with (" +
                                      std::to_string(api_headers_version()) + ")\n"));
  CHECK_THAT(cli.out, Catch::Contains("  unknown: 15 names the " + headers_name() +
                                      " headers do not declare, not checked: \"\", cuFuture0, "));
  CHECK_THAT(cli.out, Catch::Contains(", cuFuture9, cuFutureFunction, cuMemAlloc_v9\n"));
  const json j = json::parse(std::ifstream(out_json));
  CHECK(j["headers_version"] == api_headers_version());
  CHECK(j["unknown"].size() == 15);
  CHECK(j["counts"]["unknown"] == 15);
}

TEST_CASE("whole API: the stream-0 mode of any function with a per-thread twin is judged",
          "[capture][whole-api]") {
  // cuda.bindings governs its callers: under "1" per-thread is due, under "0" (or unset) legacy.
  const auto bindings = [](json e) {
    e["caller"] = "/site-packages/cuda/bindings/cydriver.so";
    e["caller_package"] = "cuda-bindings";
    return e;
  };
  const json entries =
      json::array({bindings(request_entry("cuGraphLaunch", "cuGraphLaunch_ptsz", 12000, 2)),
                   bindings(request_entry("cuGraphUpload", "cuGraphUpload", 12000, 1)),
                   bindings(request_entry("cuGraphCreate", "cuGraphCreate", 12000, 1))});
  const auto under = [&entries](const char *value) {
    return audit_entries(std::string("whole-mode-") + value, entries, [value](json &m) {
      m["processes"][0]["environment"]["CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM"] = value;
    });
  };
  const map_audit_report off = under("0"), on = under("1");
  // Under "0": the per-thread cuGraphLaunch_ptsz is wrong (no entry of cuparity's table has it).
  REQUIRE(of(off, finding_kind::per_thread_wrong, "cuGraphLaunch"));
  CHECK_THAT(of(off, finding_kind::per_thread_wrong, "cuGraphLaunch")->message,
             Catch::Contains("bound the per-thread cuGraphLaunch_ptsz where cuda.bindings "
                             "(cuda-bindings): CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM=\"0\" "
                             "selects legacy"));
  CHECK(of(off, finding_kind::same, "cuGraphUpload"));
  CHECK(off.failed);
  // Under "1": the bare cuGraphUpload is wrong, its twin cuGraphUpload_ptsz exists; cuGraphCreate
  // has no twin, so bare is all it can be.
  CHECK(of(on, finding_kind::per_thread_wrong, "cuGraphUpload"));
  CHECK_FALSE(of(on, finding_kind::per_thread_wrong, "cuGraphLaunch"));
  CHECK(of(on, finding_kind::same, "cuGraphCreate"));
  CHECK(of(on, finding_kind::same, "cuGraphCreate")->because == "");
  CHECK_THAT(of(on, finding_kind::per_thread_wrong, "cuGraphUpload")->because,
             Catch::Contains("CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM=\"1\""));
}

TEST_CASE("whole API: a request is judged against the newest ABI at the version asked, and one "
          "answered with no pointer says why",
          "[capture][whole-api]") {
  const json entries = json::array({
      // Handed out an older ABI than the newest at 12050 (cuCtxCreate_v4).
      request_entry("cuCtxCreate", "cuCtxCreate_v2", 12050, 0),
      // The per-thread variant of the older ABI where cuMemPrefetchAsync_v2_ptsz is due.
      request_entry("cuMemPrefetchAsync", "cuMemPrefetchAsync_ptsz", 12020, 2),
      request_entry("cuMemPrefetchAsync", "cuMemPrefetchAsync_v2", 12020, 1),
      // No pointer: below the first ABI (11020); a function newer than this driver (12000); and
      // one the table cannot explain.
      request_entry("cuMemAllocAsync", std::nullopt, 11000, 1, 2),
      request_entry("cuMemcpyBatchAsync", std::nullopt, 12080, 0, 2),
      request_entry("cuMemAlloc", std::nullopt, 3020, 0, 1),
      // The ABI due at 12050 is newer than this driver; and any request above its own version.
      request_entry("cuCtxCreate", std::nullopt, 12050, 0, 2),
      request_entry("cuMemFree", std::nullopt, 12010, 0),
      // With the per-thread flag below the variant's version: per_thread_too_old still.
      request_entry("cuMemcpyHtoD", std::nullopt, 3020, 2, 2),
      // A name the headers do not declare: the driver's status is the only evidence.
      request_entry("cuFutureLaunch", std::nullopt, 9000, 2, 2),
  });
  const auto driver_12000 = [](json &m) { m["driver"]["version"] = 12000; };
  const map_audit_report r = audit_entries("whole-requests", entries, driver_12000);
  const map_finding *behind = of(r, finding_kind::abi_behind, "cuCtxCreate");
  REQUIRE(behind);
  CHECK_THAT(behind->message, Catch::Contains("cuCtxCreate: asked at 12050 (flags 0), the driver "
                                              "handed out cuCtxCreate_v2; the newest ABI at that "
                                              "version is cuCtxCreate_v4 (the driver, 12000, "
                                              "predates it)"));
  CHECK(behind->expected == "cuCtxCreate_v4");
  REQUIRE(of(r, finding_kind::abi_behind, "cuMemPrefetchAsync", "cuMemPrefetchAsync_ptsz"));
  CHECK(of(r, finding_kind::abi_behind, "cuMemPrefetchAsync")->expected ==
        "cuMemPrefetchAsync_v2_ptsz");
  CHECK(of(r, finding_kind::same, "cuMemPrefetchAsync", "cuMemPrefetchAsync_v2"));
  const auto null_message = [&r](const std::string &function) {
    const map_finding *f = of(r, finding_kind::null_entry, function);
    return f ? f->message : std::string("no null_entry for ") + function;
  };
  CHECK_THAT(null_message("cuMemAllocAsync"),
             Catch::Contains("cuMemAllocAsync: asked at 11000 (flags 1), the driver gave no "
                             "pointer: asked at 11000, below its first ABI (11020)"));
  CHECK_THAT(null_message("cuMemcpyBatchAsync"),
             Catch::Contains("the function (first ABI 12080) is newer than the driver (12000)"));
  CHECK_THAT(null_message("cuMemAlloc"),
             Catch::Contains("the driver lacks it for no reason the table gives (its first ABI "
                             "is 2000)"));
  CHECK_THAT(null_message("cuCtxCreate"),
             Catch::EndsWith("the ABI due at 12050 (cuCtxCreate_v4, 12050) is newer than the "
                             "driver (12000)"));
  CHECK_THAT(null_message("cuMemFree"),
             Catch::EndsWith("asked above the driver's own version (12000)"));
  CHECK(of(r, finding_kind::per_thread_too_old, "cuMemcpyHtoD"));
  CHECK(of(r, finding_kind::per_thread_too_old, "cuFutureLaunch"));
  CHECK(r.counts.at(finding_kind::null_entry) == 5);
  CHECK(r.failed); // the two too-old requests; abi_behind and null_entry are reported
}

TEST_CASE("whole API: an older ABI is old_semantics where its parameter types differ from the "
          "newest the driver has, abi_difference where they do not",
          "[capture][whole-api]") {
  const json entries = json::array({
      direct_entry("cuMemAlloc", "/opt/app/libold.so"),
      direct_entry("cuCtxPushCurrent", "/opt/app/libold.so"),
      // Asked at 3000: cuMemGetInfo (2000) is what is due there, but it holds 32-bit sizes.
      request_entry("cuMemGetInfo", "cuMemGetInfo", 3000, 1),
      // The newest ABI a 12000 driver has (cuCtxCreate_v4 is 12050): no finding.
      direct_entry("cuCtxCreate_v3", "/opt/app/libold.so"),
  });
  const map_audit_report r =
      audit_entries("whole-old", entries, [](json &m) { m["driver"]["version"] = 12000; });
  const map_finding *alloc = of(r, finding_kind::old_semantics, "cuMemAlloc");
  REQUIRE(alloc);
  CHECK(alloc->message ==
        "pid 7, dlsym: cuMemAlloc: bound cuMemAlloc (ABI 2000), older than cuMemAlloc_v2 (ABI "
        "3020): `CUdeviceptr_v1 *` where the newest has `CUdeviceptr_v2 *` (32-bit device "
        "pointers), `unsigned int` where it has `size_t` (32-bit sizes)");
  REQUIRE(of(r, finding_kind::old_semantics, "cuMemGetInfo"));
  CHECK_THAT(of(r, finding_kind::old_semantics, "cuMemGetInfo")->message,
             Catch::EndsWith("`unsigned int *` where the newest has `size_t *` (32-bit sizes)"));
  REQUIRE(of(r, finding_kind::abi_difference, "cuCtxPushCurrent"));
  CHECK_THAT(of(r, finding_kind::abi_difference, "cuCtxPushCurrent")->message,
             Catch::EndsWith("older than cuCtxPushCurrent_v2 (ABI 4000), of the same parameter "
                             "types"));
  CHECK(of(r, finding_kind::same, "cuCtxCreate"));
  CHECK_FALSE(r.failed);
  CHECK(parameter_difference("CUcontext *, unsigned int, CUdevice_v1",
                             "CUcontext *, CUctxCreateParams *, unsigned int, CUdevice") ==
        "3 parameters where the newest has 4");
  CHECK(parameter_difference("void (*)(int, int), size_t", "void (*)(int, int), size_t") == "");
}

TEST_CASE("whole API: a dlsym binder's mode is inferred from what it bound, per caller and "
          "process image; both modes in one binder is mixed_modes",
          "[capture][whole-api]") {
  const json entries = json::array({
      // libA: bare symbols with a per-thread twin, and cuInit (no twin: no evidence): legacy.
      direct_entry("cuMemcpyHtoD_v2", "/opt/app/libA.so"),
      direct_entry("cuStreamSynchronize", "/opt/app/libA.so"),
      direct_entry("cuInit", "/opt/app/libA.so"),
      // libB: per-thread variants, and cuInit: per-thread.
      direct_entry("cuMemcpyHtoD_v2_ptds", "/opt/app/libB.so"),
      direct_entry("cuInit", "/opt/app/libB.so"),
      // libC: both.
      direct_entry("cuMemcpyDtoH_v2", "/opt/app/libC.so"),
      direct_entry("cuStreamSynchronize_ptsz", "/opt/app/libC.so"),
      // libD: nothing with a per-thread variant: no mode needed, judged all the same.
      direct_entry("cuCtxGetCurrent", "/opt/app/libD.so"),
      // libA again after an exec: another image, its own mode.
      direct_entry("cuEventRecord_ptsz", "/opt/app/libA.so", 1),
  });
  const map_audit_report r = audit_entries("whole-binders", entries, [](json &m) {
    json image = m["processes"][0];
    image["image"] = 1;
    m["processes"].push_back(image);
  });
  CHECK(r.failed);
  REQUIRE(r.counts.count(finding_kind::mixed_modes));
  CHECK(r.counts.at(finding_kind::mixed_modes) == 1);
  const map_finding *mixed = of(r, finding_kind::mixed_modes, "");
  REQUIRE(mixed);
  CHECK(mixed->message == "pid 7 (whole-binders): libC.so bound both stream-0 modes by PLT or "
                          "dlsym: legacy cuMemcpyDtoH; per-thread cuStreamSynchronize");
  CHECK(mixed->raw_name == "/opt/app/libC.so");
  // Each of libC's is unchecked, saying why; nothing else is.
  CHECK(r.counts.at(finding_kind::unchecked) == 2);
  const map_finding *u = of(r, finding_kind::unchecked, "cuMemcpyDtoH");
  REQUIRE(u);
  CHECK_THAT(u->message, Catch::Contains("libC.so bound both stream-0 modes (mixed_modes names "
                                         "them): its stream-0 mode is not checked"));
  CHECK(u->because == "libC.so bound both stream-0 modes (mixed_modes names them)");
  for (const auto *f : {of(r, finding_kind::same, "cuMemcpyHtoD", "cuMemcpyHtoD_v2"),
                        of(r, finding_kind::same, "cuStreamSynchronize", "cuStreamSynchronize")}) {
    REQUIRE(f);
    CHECK(f->because == "inferred from what libA.so bound (2 functions with a per-thread "
                        "variant, all legacy)");
  }
  REQUIRE(of(r, finding_kind::same, "cuMemcpyHtoD", "cuMemcpyHtoD_v2_ptds"));
  CHECK(of(r, finding_kind::same, "cuMemcpyHtoD", "cuMemcpyHtoD_v2_ptds")->because ==
        "inferred from what libB.so bound (1 function with a per-thread variant, all "
        "per-thread)");
  CHECK(of(r, finding_kind::same, "cuCtxGetCurrent"));
  CHECK(of(r, finding_kind::same, "cuEventRecord", "cuEventRecord_ptsz"));
  CHECK(r.inferred == std::vector<std::string>{
                          "pid 7, /opt/app/libA.so: legacy, inferred from what it bound (2 "
                          "functions with a per-thread variant)",
                          "pid 7, /opt/app/libB.so: per-thread, inferred from what it bound (1 "
                          "function with a per-thread variant)",
                          "pid 7 (exec 1), /opt/app/libA.so: per-thread, inferred from what it "
                          "bound (1 function with a per-thread variant)"});
  // The JSON names each unchecked binding with its reason; the console groups them by it.
  const std::string out_json = scratch("whole-binders.audit.json");
  auto cli =
      test::run_cuparity({"audit", "--map", scratch("whole-binders.json"), "--json", out_json},
                         {{"NUMBA_CUDA_DRIVER", CUPARITY_SIMDRIVER}});
  CHECK(cli.exit_code == 1);
  CHECK_THAT(cli.out, Catch::Contains("  mixed_modes pid 7 (whole-binders): libC.so bound both"));
  CHECK_THAT(cli.out, Catch::Contains("  unchecked: 2 (libC.so bound both stream-0 modes "
                                      "(mixed_modes names them)): pid 7 cuMemcpyDtoH_v2, pid 7 "
                                      "cuStreamSynchronize_ptsz\n"));
  CHECK_THAT(cli.out, Catch::Contains("  inferred: pid 7, /opt/app/libA.so: legacy, inferred"));
  const json j = json::parse(std::ifstream(out_json));
  REQUIRE(j["unchecked"].size() == 2);
  CHECK(j["unchecked"][0]["reason"] ==
        "libC.so bound both stream-0 modes (mixed_modes names them)");
  CHECK(j["inferred"].size() == 3);
}

TEST_CASE("whole API: cuda.bindings' own table is checked against the capture by the audit: a "
          "disagreement fails it, a table not read whole is a note",
          "[capture][whole-api]") {
  json entry = request_entry("cuMemcpyHtoD", "cuMemcpyHtoD_v2", 12000, 1, 0,
                             "/site-packages/cuda/bindings/_internal/driver.so");
  entry["caller_package"] = "cuda-bindings";
  const auto table = [](const std::string &status, json functions) {
    return json{{"process", 7},
                {"image", 0},
                {"package", "cuda-bindings"},
                {"version", "13.5.0"},
                {"module", "cuda.bindings._internal.driver"},
                {"file", nullptr},
                {"folder", nullptr},
                {"status", status},
                {"note", status == "ok" ? "" : "no table in 13.3.1"},
                {"functions", std::move(functions)}};
  };
  const auto with = [&](const json &t) {
    return [t](json &m) { m["package_tables"] = json::array({t}); };
  };
  const map_audit_report agrees = audit_entries(
      "whole-table-agrees", json::array({entry}),
      with(table("ok", {{"cuMemcpyHtoD_v2",
                         {{"symbol", "cuMemcpyHtoD_v2"}, {"library", CUPARITY_SIMDRIVER}}}})));
  CHECK_FALSE(agrees.failed);
  CHECK(agrees.counts.count(finding_kind::table_disagrees) == 0);
  const map_audit_report differs = audit_entries(
      "whole-table-differs", json::array({entry}),
      with(table("ok", {{"cuMemcpyHtoD_v2",
                         {{"symbol", "cuMemcpyHtoD_v2_ptds"}, {"library", CUPARITY_SIMDRIVER}}}})));
  CHECK(differs.failed);
  REQUIRE(of(differs, finding_kind::table_disagrees, "cuMemcpyHtoD"));
  CHECK_THAT(of(differs, finding_kind::table_disagrees, "cuMemcpyHtoD")->message,
             Catch::Contains("holds cuMemcpyHtoD_v2_ptds"));
  const map_audit_report unread = audit_entries("whole-table-unread", json::array({entry}),
                                                with(table("no_table", json::object())));
  CHECK_FALSE(unread.failed);
  bool noted = false;
  for (const auto &n : unread.notes)
    noted = noted || n.find("no_table") != std::string::npos;
  CHECK(noted);
}

TEST_CASE("capture: a loaded object's distribution is found in RECORDs as pip writes them",
          "[capture]") {
  // The fast path compares a line's path as written; quoted paths, "." and ".." components and
  // another top folder's lines must still be read as the slow normalisation reads them.
  const fs::path site = scratch("owners/lib/python3.12/site-packages");
  fs::remove_all(site);
  for (const char *d : {"numpy-1.26.4.dist-info", "other-1.0.dist-info", "comma-2.0.dist-info",
                        "climb-3.0.dist-info", "nometa-4.5.dist-info"})
    fs::create_directories(site / d);
  std::ofstream(site / "numpy-1.26.4.dist-info/METADATA") << "Name: numpy\nVersion: 1.26.4\n\n";
  std::ofstream(site / "numpy-1.26.4.dist-info/RECORD")
      << "numpy/__init__.py,sha256=x,1\r\nnumpy/./core/_multiarray.so,sha256=y,2\r\n";
  std::ofstream(site / "other-1.0.dist-info/METADATA") << "Name: other\nVersion: 1.0\n\n";
  std::ofstream(site / "other-1.0.dist-info/RECORD") << "other/core/_multiarray.so,,\n";
  std::ofstream(site / "comma-2.0.dist-info/METADATA") << "Name: comma\nVersion: 2.0\n\n";
  std::ofstream(site / "comma-2.0.dist-info/RECORD") << "\"we,ird/\"\"q\"\".so\",sha256=z,3\n";
  std::ofstream(site / "climb-3.0.dist-info/METADATA") << "Name: climb\nVersion: 3.0\n\n";
  std::ofstream(site / "climb-3.0.dist-info/RECORD") << "elsewhere/../climb_lib/libc.so,,\n";
  std::ofstream(site / "nometa-4.5.dist-info/RECORD") << "nometa.so,,\n";
  const std::string s = site.string();
  const auto owners = owning_distributions(
      {s + "/numpy/core/_multiarray.so", s + "/other/core/_multiarray.so", s + "/we,ird/\"q\".so",
       s + "/climb_lib/libc.so", s + "/nometa.so", s + "/numpy/unlisted.so", "/usr/lib/libc.so.6"});
  const auto owner = [&](const std::string &rel) {
    const auto it = owners.find(s + "/" + rel);
    return it == owners.end() ? std::string("none") : it->second.name + " " + it->second.version;
  };
  CHECK(owner("numpy/core/_multiarray.so") == "numpy 1.26.4");
  CHECK(owner("other/core/_multiarray.so") == "other 1.0");
  CHECK(owner("we,ird/\"q\".so") == "comma 2.0");
  CHECK(owner("climb_lib/libc.so") == "climb 3.0");
  CHECK(owner("nometa.so") == "nometa "); // no METADATA: the name from the folder, no version
  CHECK(owner("numpy/unlisted.so") == "none");
  CHECK(owners.size() == 5);
}
