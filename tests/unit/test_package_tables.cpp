// The map's package_tables[] (cuda.bindings' own driver table, written by the capture's Python
// start-up hook): the event reader, the map writer and reader, and the check of the capture
// against the table (harness/capture/table_check.cpp).
#include "harness/capture/api_coverage.hpp"
#include "harness/capture/capture_events.hpp"
#include "harness/capture/capture_map.hpp"
#include "harness/capture/captured_map.hpp"
#include "harness/capture/table_check.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

using namespace cuparity;
using json = nlohmann::json;

namespace {

namespace fs = std::filesystem;

const std::string k_site = "/venv/lib/python3.12/site-packages";
const std::string k_module =
    k_site + "/cuda/bindings/_internal/driver.cpython-312-x86_64-linux-gnu.so";
const std::string k_driver = "/usr/lib/libcuda.so.1";

fs::path scratch(const std::string &name) {
  const auto dir = fs::temp_directory_path() / "cuparity-package-table-tests";
  fs::create_directories(dir);
  return dir / name;
}

proc_event request(const std::string &name, const std::string &symbol,
                   const std::string &caller = k_module) {
  proc_event r;
  r.abi = "cuGetProcAddress_v2";
  r.symbol = name;
  r.version = 12000;
  r.status = 0;
  r.null_pointer = false;
  r.pointer_symbol = symbol;
  r.pointer_library = k_driver;
  r.caller = caller;
  return r;
}

/// One python3 process whose cuda.bindings module asked for two functions.
captured_process python_process() {
  captured_process p;
  p.pid = 4242;
  p.ppid = 1;
  p.exe = "/usr/bin/python3.12";
  p.argv = {"python3", "-c", "import cuda.bindings.driver"};
  p.objects = {k_driver, k_module};
  p.drivers = {k_driver};
  p.requests = {request("cuMemcpyHtoD", "cuMemcpyHtoD_v2"),
                request("cuStreamSynchronize", "cuStreamSynchronize")};
  return p;
}

/// What the hook writes for that process: the same two pointers (folder: the package's).
package_table_event hook_table() {
  package_table_event t;
  t.file = "package-table-4242.json";
  t.pid = 4242;
  t.package = "cuda-bindings";
  t.version = "13.5.0";
  t.module = "cuda.bindings._internal.driver";
  t.module_file = k_module;
  t.folder = k_site + "/cuda/bindings";
  t.status = "ok";
  t.functions["cuMemcpyHtoD_v2"] = table_pointer{"cuMemcpyHtoD_v2", k_driver};
  t.functions["cuStreamSynchronize"] = table_pointer{"cuStreamSynchronize", k_driver};
  t.functions["cuGraphCreate"] = std::nullopt; // 0: the package holds no function
  return t;
}

json map_of(const std::vector<captured_process> &processes,
            const std::vector<package_table_event> &tables, bool hook = true) {
  capture_facts facts;
  facts.command = {"python3"};
  facts.captured = "2026-12-06T00:00:00Z";
  facts.python_hook = hook;
  return capture_map_json(processes, facts, tables);
}

/// Writes `map` (edited by `edit`) and reads it back as `audit` does.
captured_map read_back(json map, const std::function<void(json &)> &edit = {}) {
  if (edit)
    edit(map);
  const fs::path path = scratch("map.json");
  std::ofstream(path, std::ios::trunc) << map.dump(1);
  return read_captured_map(path.string());
}

std::string read_error(const std::function<void(json &)> &edit) {
  try {
    (void)read_back(map_of({python_process()}, {hook_table()}), edit);
  } catch (const map_error &e) {
    return e.what();
  }
  return "read without error";
}

} // namespace

TEST_CASE("package tables: the hook's table goes into the map and reads back whole",
          "[package-tables]") {
  const json map = map_of({python_process()}, {hook_table()});
  REQUIRE(map["package_tables"].size() == 1);
  const json &t = map["package_tables"][0];
  CHECK(t["process"] == 4242);
  CHECK(t["image"] == 0);
  CHECK(t["package"] == "cuda-bindings");
  CHECK(t["version"] == "13.5.0");
  CHECK(t["module"] == "cuda.bindings._internal.driver");
  CHECK(t["functions"]["cuMemcpyHtoD_v2"]["symbol"] == "cuMemcpyHtoD_v2");
  CHECK(t["functions"]["cuGraphCreate"].is_null());

  const captured_map m = read_back(map);
  REQUIRE(m.package_tables.size() == 1);
  const package_table &r = m.package_tables[0];
  CHECK(r.process == 4242);
  CHECK(r.status == "ok");
  CHECK(r.folder == k_site + "/cuda/bindings");
  REQUIRE(r.functions.size() == 3);
  CHECK(r.functions.at("cuStreamSynchronize")->library == k_driver);
  CHECK_FALSE(r.functions.at("cuGraphCreate").has_value());
}

TEST_CASE("package tables: a table goes to the last image of its pid", "[package-tables]") {
  captured_process shell = python_process();
  shell.requests.clear();
  shell.exe = "/usr/bin/env";
  captured_process python = python_process();
  python.image = 1; // `env python3`: one pid, two images; the hook writes at the last one's exit
  const json map = map_of({shell, python}, {hook_table()});
  REQUIRE(map["package_tables"].size() == 1);
  CHECK(map["package_tables"][0]["image"] == 1);
  CHECK(read_back(map).package_tables.at(0).image == 1);
}

TEST_CASE("package tables: cuda.bindings bound the driver but no table was written: the map "
          "says why",
          "[package-tables]") {
  for (const bool hook : {true, false}) {
    const json map = map_of({python_process()}, {}, hook);
    REQUIRE(map["package_tables"].size() == 1);
    const json &t = map["package_tables"][0];
    CHECK(t["status"] == "not_recorded");
    CHECK_THAT(t["note"].get<std::string>(), Catch::Contains(k_module));
    CHECK_THAT(t["note"].get<std::string>(),
               Catch::Contains(hook ? "os._exit" : "--no-python-hook"));
    const auto notes = table_notes(read_back(map));
    REQUIRE(notes.size() == 1);
    CHECK_THAT(notes[0], Catch::Contains("not_recorded"));
    CHECK(table_findings(read_back(map)).empty());
  }
  // A process where nothing of a cuda/bindings folder asked the driver needs no table.
  captured_process other = python_process();
  for (auto &r : other.requests)
    r.caller = "/opt/torch/lib/libcudart.so.13";
  CHECK(map_of({other}, {})["package_tables"].empty());
}

TEST_CASE("package tables: a map without the member still reads; a malformed one is an error "
          "naming the member",
          "[package-tables]") {
  CHECK(read_back(map_of({python_process()}, {}), [](json &m) {
          m.erase("package_tables");
        }).package_tables.empty());
  CHECK_THAT(read_error([](json &m) { m["package_tables"] = json::object(); }),
             Catch::Contains("package_tables: expected an array"));
  CHECK_THAT(read_error([](json &m) { m["package_tables"][0]["status"] = "fine"; }),
             Catch::Contains("package_tables[0].status: expected ok, not_bound"));
  CHECK_THAT(
      read_error([](json &m) { m["package_tables"][0]["functions"]["cuMemcpyHtoD_v2"] = 7; }),
      Catch::Contains("package_tables[0].functions.cuMemcpyHtoD_v2: expected an object"));
  CHECK_THAT(read_error([](json &m) {
               m["package_tables"][0]["functions"]["cuStreamSynchronize"]["symbol"] = 1;
             }),
             Catch::Contains("package_tables[0].functions.cuStreamSynchronize.symbol: expected a "
                             "string or null"));
  CHECK_THAT(read_error([](json &m) { m["package_tables"][0].erase("functions"); }),
             Catch::Contains("package_tables[0].functions: expected an object"));
  CHECK_THAT(read_error([](json &m) { m["package_tables"][0]["process"] = 99; }),
             Catch::Contains("package_tables[0].process: pid 99 image 0 is not among"));
  CHECK_THAT(read_error([](json &m) { m["package_tables"].push_back(m["package_tables"][0]); }),
             Catch::Contains("package_tables[1]: a second table of cuda-bindings"));
  CHECK_THAT(read_error([](json &m) { m["package_tables"][0]["version"] = 13; }),
             Catch::Contains("package_tables[0].version: expected a string or null"));
}

TEST_CASE("package tables: the capture agrees with the table, or each difference is named",
          "[package-tables]") {
  SECTION("the same pointers: no finding") {
    CHECK(table_findings(read_back(map_of({python_process()}, {hook_table()}))).empty());
  }
  SECTION("the table holds another symbol than the capture saw bound") {
    auto t = hook_table();
    t.functions["cuMemcpyHtoD_v2"] = table_pointer{"cuMemcpyHtoD_v2_ptds", k_driver};
    const auto f = table_findings(read_back(map_of({python_process()}, {t})));
    REQUIRE(f.size() == 1);
    CHECK(f[0].kind == finding_kind::table_disagrees);
    CHECK(f[0].function == "cuMemcpyHtoD");
    CHECK(f[0].process == 4242);
    CHECK(f[0].captured == "cuMemcpyHtoD_v2");
    CHECK_THAT(f[0].message, Catch::Contains("pid 4242") && Catch::Contains("13.5.0") &&
                                 Catch::Contains("holds cuMemcpyHtoD_v2_ptds") &&
                                 Catch::Contains("bind cuMemcpyHtoD_v2"));
  }
  SECTION("the table holds a pointer the capture never saw bound") {
    auto t = hook_table();
    t.functions["cuCtxSynchronize"] = table_pointer{"cuCtxSynchronize", k_driver};
    const auto f = table_findings(read_back(map_of({python_process()}, {t})));
    REQUIRE(f.size() == 1);
    CHECK(f[0].function == "cuCtxSynchronize");
    CHECK_THAT(f[0].message, Catch::Contains("never saw cuda-bindings bind it"));
  }
  SECTION("cuda.bindings bound a function its table does not hold") {
    auto t = hook_table();
    t.functions.erase("cuStreamSynchronize");
    const auto f = table_findings(read_back(map_of({python_process()}, {t})));
    REQUIRE(f.size() == 1);
    CHECK(f[0].function == "cuStreamSynchronize");
    CHECK_THAT(f[0].message, Catch::Contains("has no cuStreamSynchronize") &&
                                 Catch::Contains("bind cuStreamSynchronize"));
    t.functions["cuStreamSynchronize"] = std::nullopt; // the table's key with no pointer
    const auto g = table_findings(read_back(map_of({python_process()}, {t})));
    REQUIRE(g.size() == 1);
    CHECK_THAT(g[0].message, Catch::Contains("holds no pointer for cuStreamSynchronize"));
  }
  SECTION("only the package's own objects count: other callers' bindings are not its") {
    auto p = python_process();
    p.requests.push_back(request("cuCtxSynchronize", "cuCtxSynchronize_v2", "/opt/libcudart.so"));
    CHECK(table_findings(read_back(map_of({p}, {hook_table()}))).empty());
  }
  SECTION("a package outside site-packages is found by its folder, not its distribution") {
    auto p = python_process();
    const std::string module = "/tmp/t13.5.0/cuda/bindings/_internal/driver.so";
    for (auto &r : p.requests)
      r.caller = module;
    p.objects = {k_driver, module};
    auto t = hook_table();
    t.folder = "/tmp/t13.5.0/cuda/bindings";
    CHECK(table_findings(read_back(map_of({p}, {t}))).empty());
    t.folder = "/tmp/elsewhere/cuda/bindings"; // then none of the bindings is the package's
    CHECK(table_findings(read_back(map_of({p}, {t}))).size() == 2);
  }
  SECTION("the capture's own cuGetProcAddress wrapper in the table is what the driver answered") {
    auto p = python_process();
    p.requests.push_back(request("cuGetProcAddress", "cuGetProcAddress_v2"));
    auto t = hook_table();
    t.functions["cuGetProcAddress_v2"] =
        table_pointer{std::nullopt, "/opt/cuparity/lib/cuparity/libcuparity_audit.so"};
    CHECK(table_findings(read_back(map_of({p}, {t}))).empty());
    t.functions["cuMemcpyHtoD_v2"] =
        table_pointer{std::nullopt, "/opt/cuparity/lib/cuparity/libcuparity_audit.so"};
    CHECK(table_findings(read_back(map_of({p}, {t}))).size() == 1); // for no other function
  }
  SECTION("a table not read whole is never checked, and said so") {
    auto t = hook_table();
    t.status = "no_table";
    t.why = "cuda.bindings._bindings.cydriver has no _inspect_function_pointers()";
    t.functions.clear();
    const captured_map m = read_back(map_of({python_process()}, {t}));
    CHECK(table_findings(m).empty());
    const auto notes = table_notes(m);
    REQUIRE(notes.size() == 1);
    CHECK_THAT(notes[0], Catch::Contains("pid 4242") && Catch::Contains("no_table") &&
                             Catch::Contains("no _inspect_function_pointers"));
  }
}

TEST_CASE("package tables: the hook's event files are read strictly, a bad one kept as failed",
          "[package-tables]") {
  const fs::path dir = scratch("events");
  fs::remove_all(dir);
  fs::create_directories(dir);
  const json good = {
      {"event", "package_table"},
      {"pid", 17},
      {"package", "cuda-bindings"},
      {"version", "13.3.1"},
      {"module", "cuda.bindings._bindings.cydriver"},
      {"file", "/x/cydriver.so"},
      {"folder", "/x"},
      {"status", "ok"},
      {"why", ""},
      {"functions",
       {{"cuInit", {{"symbol", "cuInit"}, {"library", k_driver}}}, {"cuFoo", nullptr}}}};
  std::ofstream(dir / "package-table-17.json") << good.dump();
  json wrong = good;
  wrong["pid"] = 18;
  wrong["functions"]["cuInit"]["library"] = 5;
  std::ofstream(dir / "package-table-18.json") << wrong.dump();
  std::ofstream(dir / "package-table-19.json") << "{\"event\": \"package_ta";
  std::ofstream(dir / "package-table-x.json") << good.dump(); // no name the hook writes
  const auto tables = read_package_tables(dir.string());
  REQUIRE(tables.size() == 3);
  CHECK(tables[0].pid == 17);
  CHECK(tables[0].status == "ok");
  CHECK(tables[0].version == "13.3.1");
  CHECK(tables[0].functions.at("cuInit")->symbol == "cuInit");
  CHECK_FALSE(tables[0].functions.at("cuFoo").has_value());
  CHECK(tables[1].status == "failed");
  CHECK_THAT(tables[1].why, Catch::Contains("package-table-18.json: functions.cuInit.library"));
  CHECK(tables[2].status == "failed");
  CHECK_THAT(tables[2].why, Catch::Contains("package-table-19.json: not JSON"));
}

TEST_CASE("capture summary: the functions each process bound, and those the headers lack",
          "[package-tables]") {
  captured_process p = python_process();
  p.requests.push_back(request("cuParityNotInAnyHeader", "cuParityNotInAnyHeader"));
  proc_event unanswered = request("cuAlsoNotInAnyHeader", "");
  unanswered.null_pointer = true;
  unanswered.pointer_symbol.reset();
  unanswered.pointer_library.reset();
  p.requests.push_back(unanswered); // no pointer: nothing bound
  captured_process idle = python_process();
  idle.pid = 4343;
  idle.requests.clear();
  const auto c = api_coverage_of(read_back(map_of({p, idle}, {})));
  REQUIRE(c.size() == 2);
  CHECK(c.at({4242, 0}).functions == 3);
  // Asked and not answered is still a name the audit can only call unknown.
  CHECK(c.at({4242, 0}).undeclared ==
        std::vector<std::string>{"cuAlsoNotInAnyHeader", "cuParityNotInAnyHeader"});
  CHECK(c.at({4343, 0}).functions == 0);
  CHECK(api_headers_name().find('.') != std::string::npos);
}
