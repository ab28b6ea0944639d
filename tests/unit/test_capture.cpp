// `cuparity capture`: programs that bind the simulated driver the ways packages do, captured
// through the audit library; the maps are checked exactly, then audited and run.
#include "backends/internal/suffix_rules.hpp"
#include "harness/capture/capture_map.hpp"
#include "harness/capture/map_audit.hpp"
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
    // Nothing says what a plain C program should bind: its bindings are stated, not judged.
    const map_audit_report r = audit(scratch(ptds ? "probe1.json" : "probe0.json"));
    CHECK_FALSE(r.failed);
    CHECK(findings(r, finding_kind::unchecked).size() == 4);
    CHECK(findings(r, finding_kind::per_thread_wrong).empty());
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
          "driver's status alone for a function outside cuparity's table",
          "[capture]") {
  const json entry = {{"function", "cuGraphLaunch"},
                      {"raw_name", "cuGraphLaunch"},
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
             Catch::Contains("cuGraphLaunch: asked with the per-thread flag at 9000"));
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
  process_spec spec;
  spec.argv = {"/bin/sh", "-c",
               std::string(CUPARITY_EXE) + " capture --out " + out +
                   " -- sleep 30 & p=$!; sleep 1; kill -TERM $p; wait $p; echo rc=$?"};
  spec.env = {{"PATH", "/usr/bin:/bin"}};
  spec.timeout = std::chrono::seconds(20);
  const auto r = run_process(spec);
  INFO(r.out << r.err);
  CHECK_THAT(r.out, Catch::Contains("rc=143"));
  REQUIRE(fs::exists(out));
  CHECK(json::parse(std::ifstream(out))["exit_status"] == 143);
}
