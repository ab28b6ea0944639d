// Captured binding maps (tools/capture) read, judged and audited against the simulated driver.
#include "harness/capture/map_audit.hpp"
#include "test_support.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

using namespace cuparity;
using json = nlohmann::json;

namespace {

std::string scratch(const std::string &name) {
  const auto dir = std::filesystem::temp_directory_path() / "cuparity-map-audit-tests";
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

/// A committed example map with its placeholders replaced, written to a scratch file.
std::string example(const std::string &name, const std::function<void(json &)> &edit = {}) {
  std::ifstream in(std::string(CUPARITY_SOURCE_DIR) + "/tools/capture/fixtures/" + name + ".json");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  for (std::string::size_type at; (at = text.find("{driver}")) != std::string::npos;)
    text.replace(at, 8, CUPARITY_SIMDRIVER);
  json j = json::parse(text);
  if (edit)
    edit(j);
  const std::string path = scratch(name + ".json");
  std::ofstream(path) << j.dump(2);
  return path;
}

std::string error_of(const std::function<void(json &)> &edit) {
  try {
    (void)read_captured_map(example("fixed-ptds0", edit));
  } catch (const map_error &e) {
    return e.what();
  }
  return "";
}

map_audit_report audit(const std::string &path) {
  const auto lib = driver_library::open(CUPARITY_SIMDRIVER);
  return audit_captured_map(read_captured_map(path), *lib);
}

const map_finding *finding(const map_audit_report &r, const std::string &function) {
  for (const auto &f : r.findings)
    if (f.function == function)
      return &f;
  return nullptr;
}

} // namespace

TEST_CASE("a malformed captured map names the file and the member", "[map]") {
  CHECK_THAT(error_of([](json &j) { j["schema"] = "x/1"; }),
             Catch::EndsWith("fixed-ptds0.json: schema: expected \"cuparity.binding_map/1\" or "
                             "\"cuparity.binding_map/2\""));
  CHECK_THAT(error_of([](json &j) { j["package"]["kind"] = "pycuda"; }),
             Catch::Contains("package.kind: expected \"cuda.bindings\" or \"numba\""));
  CHECK_THAT(error_of([](json &j) { j["entries"] = 3; }),
             Catch::Contains("entries: expected an array"));
  CHECK_THAT(error_of([](json &j) { j["entries"][2].erase("function"); }),
             Catch::Contains("entries[2].function: expected a string"));
  CHECK_THAT(error_of([](json &j) { j["entries"][0]["symbol"] = 5; }),
             Catch::Contains("entries[0].symbol: expected a string or null"));
  CHECK_THAT(error_of([](json &j) { j["status"] = "fine"; }),
             Catch::Contains("status: expected ok, import_failed or load_failed"));
  CHECK_THAT(error_of([](json &j) { j["environment"]["X"] = 1; }),
             Catch::Contains("environment.X: expected a string or null"));
}

TEST_CASE("a map that lists one binding twice is refused naming the file and both entries",
          "[map]") {
  CHECK_THAT(
      error_of([](json &j) { j["entries"].push_back(j["entries"][3]); }),
      Catch::Contains("fixed-ptds0.json: entries[98]: raw_name \"__cuCtxEnablePeerAccess\" again "
                      "(entries[3] is the same)"));
  // Two versions of one function under their own names are not doubles (cuda.bindings has them).
  CHECK(error_of([](json &j) {
          json e = j["entries"][3];
          e["raw_name"] = "__cuCtxEnablePeerAccess_v2";
          j["entries"].push_back(e);
        }) == "");
}

TEST_CASE("a map that gives the audit nothing to check is not audited, never passed", "[map]") {
  const auto empty = audit(example("fixed-ptds0", [](json &j) { j["entries"] = json::array(); }));
  CHECK_FALSE(empty.audited);
  CHECK_FALSE(empty.failed);
  CHECK_THAT(empty.not_audited, Catch::Contains("no entries"));
  const test::vars env{{"NUMBA_CUDA_DRIVER", CUPARITY_SIMDRIVER}};
  auto cli = test::run_cuparity(
      {"audit", "--map", example("fixed-ptds0", [](json &j) { j["entries"] = json::array(); })},
      env);
  CHECK(cli.exit_code == 4);
  CHECK_THAT(cli.out, Catch::Contains("NOT AUDITED: the map holds no entries"));
  CHECK_THAT(cli.out, !Catch::Contains("PASSED"));
  // A driver without cuGetProcAddress_v2 cannot answer: not audited either.
  auto legacy = test::run_cuparity({"audit", "--map", example("fixed-ptds0")},
                                   {{"NUMBA_CUDA_DRIVER", CUPARITY_SIMDRIVER_LEGACY}});
  CHECK(legacy.exit_code == 4);
  CHECK_THAT(legacy.out, Catch::Contains("does not export cuGetProcAddress_v2"));
}

TEST_CASE("the stream-0 mode a package should choose follows its documented parse", "[map]") {
  captured_map m;
  m.kind = "cuda.bindings";
  const std::string var = "CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM";
  CHECK_FALSE(expected_ptds(m).per_thread); // unset
  m.environment[var] = "0";
  CHECK_FALSE(expected_ptds(m).per_thread); // "0" means off (the bug: any value meant on)
  m.environment[var] = "1";
  CHECK(expected_ptds(m).per_thread);
  m.environment[var] = "yes";
  CHECK(expected_ptds(m).value_refused);
  CHECK(expected_ptds(m).why == var + "=\"yes\"");
  m.kind = "numba";
  m.environment = {{"NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM", "on"}};
  CHECK_FALSE(expected_ptds(m).per_thread); // _readenv: a warning, the default
  CHECK_FALSE(expected_ptds(m).value_refused);
  m.environment = {{"NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM", "2"}};
  CHECK(expected_ptds(m).per_thread);
}

TEST_CASE("a package that parses the PTDS variable as cuda-python once did is caught and named",
          "[map]") {
  const auto fixed = audit(example("fixed-ptds0"));
  CHECK(fixed.audited);
  CHECK_FALSE(fixed.failed);
  CHECK(fixed.counts.count(finding_kind::per_thread_wrong) == 0);
  // cuda.bindings 13 binds cuCtxCreate_v4: the newest ABI, what the driver answers for it.
  REQUIRE(finding(fixed, "cuCtxCreate"));
  CHECK(finding(fixed, "cuCtxCreate")->kind == finding_kind::same);
  CHECK(finding(fixed, "cuCtxCreate")->driver == "cuCtxCreate_v4");
  CHECK(finding(fixed, "cuMemcpyHtoD")->kind == finding_kind::same);
  CHECK(finding(fixed, "cuMemcpyHtoD")->internal == "cuMemcpyHtoD_v2");
  // Outside cuparity's entry table, yet judged against the whole API (its slot is empty in a
  // fixture made before the simulated driver exported it, bound in one made after).
  CHECK(finding(fixed, "cuGraphCreate")->kind != finding_kind::unknown);
  // The one name the double binds that no header declares (and so no driver exports).
  CHECK(fixed.unknown == std::vector<std::string>{"cuNotADriverFunction"});
  // The CUDA 2.0 cuCtxSynchronize where CUDA 13.0 has cuCtxSynchronize_v2(CUcontext).
  CHECK(finding(fixed, "cuCtxSynchronize")->kind == finding_kind::old_semantics);
  CHECK_THAT(finding(fixed, "cuCtxSynchronize")->message,
             Catch::EndsWith("0 parameters where the newest has 1"));

  const auto buggy = audit(example("buggy-ptds0"));
  CHECK(buggy.failed);
  CHECK(buggy.counts.at(finding_kind::per_thread_wrong) ==
        22); // every entry with a per-thread variant
  const map_finding *f = finding(buggy, "cuMemcpyHtoD");
  REQUIRE(f);
  CHECK(f->kind == finding_kind::per_thread_wrong);
  CHECK(f->message == "__cuMemcpyHtoD_v2: bound the per-thread cuMemcpyHtoD_v2_ptds where "
                      "CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM=\"0\" selects legacy (the "
                      "driver answers cuMemcpyHtoD_v2)");
  CHECK(finding(buggy, "cuMemAlloc")->kind == finding_kind::same);

  // The same buggy capture under "1" is right: per-thread is what "1" selects.
  const auto on = audit(example("buggy-ptds0", [](json &j) {
    j["environment"]["CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM"] = "1";
  }));
  CHECK_FALSE(on.failed);
  // And the fixed one under "1" binds legacy symbols: the reverse mismatch.
  const auto off = audit(example("fixed-ptds0", [](json &j) {
    j["environment"]["CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM"] = "1";
  }));
  CHECK(off.failed);
  CHECK_THAT(finding(off, "cuMemcpyHtoD")->message, Catch::Contains("bound the legacy"));
}

TEST_CASE("a package that refused to load is not audited; one that accepted garbage fails",
          "[map]") {
  const auto refused = audit(example("fixed-ptds0", [](json &j) {
    j["status"] = "import_failed";
    j["error"] = "ValueError: invalid literal for int() with base 10: 'yes'";
    j["entries"] = json::array();
  }));
  CHECK_FALSE(refused.audited);
  CHECK_FALSE(refused.failed);
  CHECK_THAT(refused.not_audited, Catch::Contains("ValueError"));
  // Its symbols are the legacy ones "yes" would fall back to: only the accepted value fails it.
  const auto accepted = audit(example("fixed-ptds0", [](json &j) {
    j["environment"]["CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM"] = "yes";
  }));
  CHECK(accepted.failed);
  REQUIRE_FALSE(accepted.notes.empty());
  CHECK_THAT(accepted.notes[0], Catch::Contains("is not an integer"));
}

TEST_CASE("cuparity audit --map: exit 0 passed, 1 failed, 2 for a bad map", "[map][cli]") {
  const test::vars env{{"NUMBA_CUDA_DRIVER", CUPARITY_SIMDRIVER}};
  auto ok = test::run_cuparity({"audit", "--map",
                                example("fixed-ptds0",
                                        [](json &j) {
                                          j["entries"].push_back({{"function", "cuFutureCreate"},
                                                                  {"raw_name", "__cuFutureCreate"},
                                                                  {"symbol", nullptr},
                                                                  {"library", nullptr}});
                                        })},
                               env);
  INFO(ok.out << ok.err);
  CHECK(ok.exit_code == 0);
  CHECK_THAT(ok.out, Catch::Contains("PASSED"));
  // Names the headers do not declare: one line, every name (the fixture's own and the one added).
  CHECK_THAT(ok.out, Catch::Contains("  unknown: 2 names the CUDA "));
  CHECK_THAT(ok.out,
             Catch::Contains(
                 " headers do not declare, not checked: cuFutureCreate, cuNotADriverFunction\n"));
  const std::string json_out = scratch("buggy.audit.json");
  auto bad =
      test::run_cuparity({"audit", "--map", example("buggy-ptds0"), "--json", json_out}, env);
  CHECK(bad.exit_code == 1);
  CHECK_THAT(bad.out, Catch::Contains("MISMATCH __cuMemcpyHtoD_v2"));
  std::ifstream in(json_out);
  const json j = json::parse(in);
  CHECK(j["failed"] == true);
  CHECK(j["counts"]["per_thread_wrong"] == 22);
  auto missing = test::run_cuparity({"audit", "--map", scratch("absent.json")}, env);
  CHECK(missing.exit_code == 2);
  CHECK_THAT(missing.err, Catch::Contains("absent.json: No such file or directory"));
}

// ---- the map backend: suites run through exactly what a package bound

#include "backends/internal/suffix_rules.hpp"
#include "harness/driver/entry.hpp"

namespace {

/// A capture of a package that binds every entry of cuparity's table the way Numba's probing
/// would in `per_thread` mode (the buggy parse: per-thread under "0"), and cuCtxCreate as
/// cuda.bindings 13 does (_v4), under CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM="0".
std::string full_map(const std::string &name, bool per_thread) {
  const auto lib = driver_library::open(CUPARITY_SIMDRIVER);
  json entries = json::array();
  for (const auto &e : all_entries()) {
    std::string symbol;
    for (const auto &c : suffix_rules::numba().candidates(e.name, per_thread))
      if (lib->symbol(c.c_str())) {
        symbol = c;
        break;
      }
    if (e.name == "cuCtxCreate")
      symbol = "cuCtxCreate_v4";
    entries.push_back({{"function", std::string(e.name)},
                       {"raw_name", "__" + (symbol.empty() ? std::string(e.name) : symbol)},
                       {"symbol", symbol.empty() ? json(nullptr) : json(symbol)},
                       {"library", CUPARITY_SIMDRIVER}});
  }
  const json m{{"schema", "cuparity.binding_map/1"},
               {"package", {{"kind", "cuda.bindings"}, {"name", "double"}, {"version", name}}},
               {"environment", {{"CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM", "0"}}},
               {"status", "ok"},
               {"error", ""},
               {"entries", entries}};
  const std::string path = scratch(name + ".map.json");
  std::ofstream(path) << m.dump(1);
  return path;
}

/// Runs `cases` in two cells, one per captured map, on the simulated driver; returns each
/// result as "fixed <case>" / "buggy <case>" -> {outcome, message}.
std::map<std::string, std::pair<std::string, std::string>>
run_through_maps(const std::string &name, const std::string &cases, const std::string &fixed,
                 const std::string &buggy) {
  const std::string matrix = scratch(name + ".toml");
  std::ofstream(matrix) << "[matrix]\ncases = [" << cases << "]\n[axes]\nCUPARITY_BINDING_MAP = [\""
                        << fixed << "\", \"" << buggy << "\"]\n";
  const std::string out = scratch(name + "_out");
  auto res = test::run_cuparity({"run", matrix, "--out", out, "--force"},
                                {{"NUMBA_CUDA_DRIVER", CUPARITY_SIMDRIVER}});
  INFO(res.out << res.err);
  CHECK(res.exit_code == 1); // the buggy capture fails its stream cases
  std::ifstream in(out + "/summary.json");
  const json s = json::parse(in);
  CHECK(s["cells"][0]["config"]["binding"] == "map");
  std::map<std::string, std::pair<std::string, std::string>> results;
  for (const auto &r : s["results"])
    results[(r["cell"] == "map=" + fixed ? "fixed " : "buggy ") + r["case"].get<std::string>()] = {
        r["outcome"], r["message"]};
  return results;
}

} // namespace

TEST_CASE("the map backend runs the suites through a captured map: the wrong PTDS parse fails "
          "stream 0's case, another ABI is refused by name",
          "[map][runner]") {
  const std::string fixed = full_map("fixed", false), buggy = full_map("buggy", true);
  const auto r = run_through_maps("map_backend",
                                  "\"stream.default.semantics\", \"stream.handles.legacy_per_"
                                  "thread\", \"alloc.copy.dtod\", \"context.create.lifecycle\"",
                                  fixed, buggy);
  std::map<std::string, std::string> outcome, message;
  for (const auto &[key, v] : r) {
    outcome[key] = v.first;
    message[key] = v.second;
  }
  CHECK(outcome["fixed stream.default.semantics"] == "pass");
  CHECK(outcome["fixed alloc.copy.dtod"] == "pass");
  CHECK(outcome["buggy stream.default.semantics"] == "fail");
  CHECK_THAT(message["buggy stream.default.semantics"],
             Catch::Contains("cuStreamSynchronize on stream 0 behaved as per-thread"));
  CHECK_THAT(message["buggy stream.default.semantics"],
             Catch::Contains("but the configuration says legacy"));
  CHECK(outcome["buggy alloc.copy.dtod"] == "pass");
  // Another ABI is the package's own choice, not a failure: the case cannot run through it.
  CHECK(outcome["fixed context.create.lifecycle"] == "not_supported");
  CHECK_THAT(message["fixed context.create.lifecycle"],
             Catch::Contains("needs cuCtxCreate: the binding under test does not bind it"));
  CHECK_THAT(message["fixed context.create.lifecycle"],
             Catch::Contains("binds cuCtxCreate_v4, an ABI other than cuparity's cuCtxCreate_v2 "
                             "(ABI 3020): refused"));
}

TEST_CASE("through a map of a package that binds fewer functions (as Numba's table does), cases "
          "run on what it binds and the rest are not supported, naming the function",
          "[map][runner]") {
  // Numba's ctypes table has cuCtxPushCurrent and cuCtxPopCurrent but no cuCtxSetCurrent,
  // cuModuleLoadDataEx but no cuModuleLoadData, cuMemsetD8 but no cuMemsetD32, and no
  // cuStreamCreateWithPriority.
  auto narrow = [](const std::string &name, bool per_thread) {
    const std::string path = full_map(name, per_thread);
    json m = json::parse(std::ifstream(path));
    json kept = json::array();
    for (const auto &e : m["entries"])
      if (e["function"] != "cuCtxSetCurrent" && e["function"] != "cuStreamCreateWithPriority" &&
          e["function"] != "cuModuleLoadData" && e["function"] != "cuMemsetD32")
        kept.push_back(e);
    m["entries"] = kept;
    std::ofstream(path) << m.dump(1);
    return path;
  };
  const std::string fixed = narrow("narrow_fixed", false), buggy = narrow("narrow_buggy", true);
  std::map<std::string, std::pair<std::string, std::string>> r = run_through_maps(
      "narrow_maps",
      "\"alloc.copy.dtod\", \"stream.create.flags_priorities\", \"binding.resolve.audit\", "
      "\"stream.default.semantics\", \"context.current.per_thread\", \"stream.threads.overlap\"",
      fixed, buggy);
  CHECK(r["fixed alloc.copy.dtod"].first == "pass"); // made current by cuCtxPushCurrent
  // Loaded by cuModuleLoadDataEx, its meeting flags zeroed by cuMemsetD8.
  CHECK(r["fixed stream.default.semantics"].first == "pass");
  CHECK(r["buggy stream.default.semantics"].first == "fail");
  // Worker threads make the context current by push where there is no cuCtxSetCurrent.
  CHECK(r["fixed stream.threads.overlap"].first == "pass");
  // A thread's missing function ends the case, not the cell (it aborted the cell on the H200).
  CHECK(r["fixed context.current.per_thread"].first == "not_supported");
  CHECK_THAT(r["fixed context.current.per_thread"].second,
             Catch::Contains("cuCtxSetCurrent is not in the captured map of"));
  CHECK(r["fixed stream.create.flags_priorities"].first == "not_supported");
  CHECK_THAT(r["fixed stream.create.flags_priorities"].second,
             Catch::Contains("cuStreamCreateWithPriority is not in the captured map of"));
  // The audit compares what the package binds and leaves out what it does not; the buggy parse
  // bound per-thread symbols where the driver answers legacy ones.
  CHECK(r["fixed binding.resolve.audit"].first == "pass");
  CHECK(r["buggy binding.resolve.audit"].first == "fail");
  CHECK_THAT(r["buggy binding.resolve.audit"].second,
             Catch::Contains("(bound cuMemcpyHtoD_v2_ptds, driver says cuMemcpyHtoD_v2)"));
  CHECK_THAT(r["buggy binding.resolve.audit"].second, !Catch::Contains("cuCtxSetCurrent"));
}

TEST_CASE("a cell whose captured map is unreadable or of a package that did not load is a "
          "config error naming it",
          "[map][runner]") {
  const std::string bad = scratch("garbled.map.json");
  std::ofstream(bad) << "{\"schema\": 5}";
  auto res = test::run_cuparity(
      {"env"}, {{"NUMBA_CUDA_DRIVER", CUPARITY_SIMDRIVER}, {"CUPARITY_BINDING_MAP", bad}});
  CHECK(res.exit_code == 2);
  CHECK_THAT(res.out + res.err,
             Catch::Contains("CUPARITY_BINDING_MAP: " + bad + ": schema: expected a string"));
  const std::string refused = example("fixed-ptds0", [](json &j) {
    j["status"] = "load_failed";
    j["error"] = "ValueError: bad value";
  });
  res = test::run_cuparity(
      {"env"}, {{"NUMBA_CUDA_DRIVER", CUPARITY_SIMDRIVER}, {"CUPARITY_BINDING_MAP", refused}});
  CHECK(res.exit_code == 2);
  CHECK_THAT(res.out + res.err, Catch::Contains("the package did not load (load_failed): "
                                                "ValueError: bad value"));
}

TEST_CASE("the committed captures of the test-double packages run through the map backend: the "
          "wrong parse is caught by stream 0's case",
          "[map][runner]") {
  const std::string dir = std::string(CUPARITY_SOURCE_DIR) + "/tools/capture/fixtures/";
  const std::string fixed = dir + "fixed-ptds0.json", buggy = dir + "buggy-ptds0.json";
  std::map<std::string, std::string> outcome;
  for (const auto &[key, v] : run_through_maps("committed_maps",
                                               "\"stream.default.semantics\", \"stream.threads."
                                               "overlap\", \"alloc.copy.dtod\"",
                                               fixed, buggy))
    outcome[key] = v.first;
  CHECK(outcome["fixed stream.default.semantics"] == "pass");
  CHECK(outcome["fixed stream.threads.overlap"] == "pass");
  CHECK(outcome["fixed alloc.copy.dtod"] == "pass");
  CHECK(outcome["buggy stream.default.semantics"] == "fail");
  CHECK(outcome["buggy stream.threads.overlap"] == "fail");
  CHECK(outcome["buggy alloc.copy.dtod"] == "pass");
}
