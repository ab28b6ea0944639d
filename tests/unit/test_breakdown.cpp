// The helper server's protocol and process, case costs in records, and the phase's breakdown.
#include "harness/protocol/events.hpp"
#include "harness/protocol/helper_protocol.hpp"
#include "harness/protocol/records.hpp"
#include "harness/report/breakdown.hpp"
#include "test_support.hpp"

#include <catch2/catch.hpp>
#include <filesystem>

using namespace cuparity;
using json = nlohmann::json;

TEST_CASE("helper requests round-trip; a malformed one says what is wrong", "[helper]") {
  std::string error;
  const auto back = parse_helper_request(to_line({"ipc.mem.reopen", {"ab", "65536"}}), error);
  REQUIRE(back);
  CHECK(back->name == "ipc.mem.reopen");
  CHECK(back->args == std::vector<std::string>{"ab", "65536"});
  CHECK_FALSE(parse_helper_request("ipc.mem.reopen ab", error));
  CHECK(error == "not a JSON object");
  CHECK_FALSE(parse_helper_request(R"({"helper": 5, "args": []})", error));
  CHECK(error == "member 'helper' is not a string");
  CHECK_FALSE(parse_helper_request(R"({"helper": "x"})", error));
  CHECK(error == "member 'args' is not an array");
  CHECK_FALSE(parse_helper_request(R"({"helper": "x", "args": [1]})", error));
  CHECK(error == "member 'args' holds a non-string");

  const auto reply = helper_reply_of(to_event({3, "wrong=2\n", "why"}));
  REQUIRE(reply);
  CHECK(reply->exit_code == 3);
  CHECK(reply->out == "wrong=2\n");
  CHECK(reply->err == "why");
  CHECK_FALSE(helper_reply_of(make_event(event_kind::case_end, {{"exit_code", 0}})));
  CHECK_FALSE(helper_reply_of(make_event(event_kind::helper_result, {{"exit_code", "0"}})));
}

TEST_CASE("the helper server answers each request in order and exits at end of input", "[helper]") {
  const std::string dir = std::filesystem::temp_directory_path() / "cuparity_helper_server";
  std::filesystem::create_directories(dir);
  process_spec spec;
  spec.argv = {CUPARITY_EXE, "helper", "--serve", "--events-fd", "3"};
  spec.env = {{"PATH", "/usr/bin:/bin"}, {"NUMBA_CUDA_DRIVER", CUPARITY_SIMDRIVER}};
  child_process server(spec, dir + "/server.log", true);
  auto next = [&] {
    std::string line;
    REQUIRE(server.read_line(line, std::chrono::seconds(30)) == child_process::read_status::line);
    return json::parse(line);
  };
  CHECK(next()["event"] == "cell_start"); // its start-up is done before the first answer
  REQUIRE(server.send_line(to_line({"ping", {}})));
  REQUIRE(server.send_line("not json"));
  REQUIRE(server.send_line(to_line({"no.such.helper", {}})));
  REQUIRE(server.send_line(to_line({"ipc.mem.reopen", {"zz"}})));
  REQUIRE(server.send_line(to_line({"ping", {}})));
  const auto pong = helper_reply_of(next());
  REQUIRE(pong);
  CHECK(pong->exit_code == 0);
  CHECK(pong->out == "pong");
  const auto bad = helper_reply_of(next());
  REQUIRE(bad);
  CHECK(bad->exit_code == 2);
  CHECK(bad->err == "bad request (not a JSON object): not json");
  const auto unknown = helper_reply_of(next());
  REQUIRE(unknown);
  CHECK(unknown->exit_code == 2);
  CHECK(unknown->err == "no helper named 'no.such.helper'");
  const auto usage = helper_reply_of(next()); // a malformed handle: the helper refuses it
  REQUIRE(usage);
  CHECK(usage->exit_code == 2);
  const auto again = helper_reply_of(next()); // and the server still serves
  REQUIRE(again);
  CHECK(again->out == "pong");
  server.close_input();
  const auto ended = server.wait();
  CHECK(ended.exited);
  CHECK(ended.exit_code == 0);
}

TEST_CASE("a case record keeps its costs; an older record reads as zero costs", "[protocol]") {
  case_record r{"c", "ipc.mem.offset", outcome::pass, "", json::object(), 40.0, {1.5, 20.0, 30.0}};
  const auto back = case_record_from_json(to_json(r));
  CHECK(back.costs.lock_wait_ms == 1.5);
  CHECK(back.costs.helper_start_ms == 20.0);
  CHECK(back.costs.helper_ms == 30.0);
  auto old = to_json(r);
  old.erase("costs");
  CHECK(case_record_from_json(old).costs.helper_ms == 0.0);
}

namespace {

json cell_record(const std::string &cell, double launch, double init, double retain) {
  return make_record(record_type::cell,
                     {{"cell", cell},
                      {"config", json::object()},
                      {"launch_ms", launch},
                      {"startup_ms", {{"cuInit", init}, {"primary_ctx_retain", retain}}}});
}

json case_of(const std::string &cell, const std::string &id, double ms, case_costs costs = {}) {
  return to_json(case_record{cell, id, outcome::pass, "", json::object(), ms, costs});
}

json exit_of(const std::string &cell, double wall, double exit) {
  return make_record(record_type::cell_exit,
                     {{"cell", cell}, {"pid", 1}, {"wall_ms", wall}, {"exit_ms", exit}});
}

} // namespace

TEST_CASE("the breakdown sums each part over the cell processes", "[report][breakdown]") {
  const std::vector<json> records = {
      cell_record("a", 500, 100, 300),
      cell_record("b", 90, 100, 300), // a launch shorter than its parts counts no process start
      case_of("a", "ipc.mem.offset", 1000, {10, 600, 200}),
      case_of("b", "ipc.mem.offset", 3000, {0, 0, 100}),
      case_of("a", "context.create.many", 2500, {400, 0, 0}),
      make_record(record_type::binding_map, {{"cell", "a"}, {"map", json::array()}}),
      exit_of("a", 4000, 50),
      exit_of("b", 3000, 25),
      exit_of("b", 2000, 25), // a second process of b (a resume): lifetimes add up
  };
  const phase_breakdown b = breakdown_of(records, 12.5);
  CHECK(b.wall_s == 12.5);
  CHECK(b.processes == 2);
  CHECK(b.process_start_ms == 100.0);
  CHECK(b.cuinit_ms == 200.0);
  CHECK(b.primary_ctx_ms == 600.0);
  CHECK(b.lock_wait_ms == 410.0);
  CHECK(b.cases_ms == 6500.0);
  CHECK(b.helper_start_ms == 600.0);
  CHECK(b.helper_starts == 1);
  CHECK(b.helper_ms == 900.0);
  CHECK(b.exit_ms == 100.0);
  CHECK(b.suites_ms == std::map<std::string, double>{{"context", 2500.0}, {"ipc", 4000.0}});
  REQUIRE(b.cases.size() == 2);
  CHECK(b.cases[0].case_id == "ipc.mem.offset");
  CHECK(b.cases[0].summed_ms == 4000.0);
  CHECK(b.cases[0].max_ms == 3000.0);
  CHECK(b.cases[0].runs == 2);
  CHECK(b.cases[1].case_id == "context.create.many");
  CHECK(b.longest_cell == "b");
  CHECK(b.longest_cell_ms == 5000.0);

  const json j = breakdown_json(b, 1);
  CHECK(j["summed_ms"]["gpu_lock_wait"] == 410.0);
  CHECK(j["summed_ms"]["process_start"] == 100.0);
  CHECK(j["suites_ms"]["ipc"] == 4000.0);
  REQUIRE(j["cases"].size() == 1);
  CHECK(j["cases"][0]["case"] == "ipc.mem.offset");
  CHECK(j["longest_cell"]["cell"] == "b");

  const std::string text = breakdown_text(b);
  CHECK_THAT(text, Catch::Contains("2 cell processes: process start 0.1 s, cuInit 0.2 s, "
                                   "primary context 0.6 s, waiting for the GPU lock 0.4 s, "
                                   "cases 6.5 s (helpers 0.9 s, 1 helper starts 0.6 s), exit "
                                   "0.1 s"));
  CHECK_THAT(text, Catch::Contains("by suite: ipc 4.0 s; context 2.5 s\n"));
  CHECK_THAT(text, Catch::Contains("costliest cases: ipc.mem.offset 4.0 s (max 3.0 s); "
                                   "context.create.many 2.5 s (max 2.5 s)\n"));
  CHECK_THAT(text, Catch::Contains("longest cell: b 5.0 s"));
}

TEST_CASE("the timeline: how long k cases ran at once, from the cases' start times",
          "[report][breakdown]") {
  auto at = [](const std::string &cell, double start, double ms) {
    case_record r{cell, "x.y.z", outcome::pass, "", json::object(), ms};
    r.started_at_ms = start;
    return to_json(r);
  };
  // a: 100..600; b: 300..900 (an older record without a start time is left out); c: 1000..1200.
  const std::vector<json> records = {at("a", 100, 500), at("b", 300, 600), case_of("d", "x.y.z", 5),
                                     at("c", 1000, 200)};
  const phase_breakdown b = breakdown_of(records, 2);
  CHECK(b.first_case_ms == 100.0);
  CHECK(b.last_case_end_ms == 1200.0);
  // 0 running: 0..100 and 900..1000; 1: 100..300, 600..900, 1000..1200; 2: 300..600.
  REQUIRE(b.running_ms.size() == 3);
  CHECK(b.running_ms[0] == Approx(200));
  CHECK(b.running_ms[1] == Approx(700));
  CHECK(b.running_ms[2] == Approx(300));
  const json j = breakdown_json(b);
  CHECK(j["timeline"]["running_ms"].size() == 3);
  CHECK(j["timeline"]["first_case_ms"] == 100.0);
  CHECK_THAT(breakdown_text(b),
             Catch::Contains("timeline: first case at 0.1 s, last case ended at 1.2 s; cases "
                             "running at once: 0 for 0.2 s, 1 for 0.7 s, 2 for 0.3 s\n"));
  CHECK_FALSE(breakdown_json(breakdown_of({case_of("d", "x.y.z", 5)}, 1)).contains("timeline"));
  // One cell's cases never overlap: a start stamped before the previous case's end (the cell
  // measured that end later than the runner heard of the next start) is moved to that end.
  const phase_breakdown one = breakdown_of({at("a", 0, 100), at("a", 90, 100)}, 1);
  REQUIRE(one.running_ms.size() == 2);
  CHECK(one.running_ms[1] == Approx(190)); // 0..100, then 100..190
  CHECK(one.last_case_end_ms == Approx(190));
  // A case of no duration, alone or at another's edge, runs nothing and breaks nothing.
  const phase_breakdown empty =
      breakdown_of({at("a", 0, 100), at("a", 100, 0), at("b", 100, 0)}, 1);
  REQUIRE(empty.running_ms.size() == 2);
  CHECK(empty.running_ms[1] == Approx(100));
  // The record keeps its start through JSON; an older one reads as unknown.
  CHECK(case_record_from_json(at("a", 100, 5)).started_at_ms == 100.0);
  CHECK(case_record_from_json(case_of("d", "x.y.z", 5)).started_at_ms < 0);
}

TEST_CASE("a breakdown of no records says so without suites or cases", "[report][breakdown]") {
  const phase_breakdown b = breakdown_of({}, 0);
  CHECK(b.processes == 0);
  const std::string text = breakdown_text(b);
  CHECK(text.find("by suite") == std::string::npos);
  CHECK(text.find("costliest") == std::string::npos);
  CHECK(text.find("longest cell") == std::string::npos);
}

TEST_CASE("breakdown names reach the terminal escaped", "[report][breakdown]") {
  const phase_breakdown b =
      breakdown_of({case_of("c\x1b[2J", "x\x1b]0;t\x07.y", 5), exit_of("c\x1b[2J", 9, 1)}, 1);
  const std::string text = breakdown_text(b);
  CHECK(text.find('\x1b') == std::string::npos);
  CHECK(text.find('\x07') == std::string::npos);
}

// ---- scheduling by cost

#include "harness/framework/case_registry.hpp"
#include "harness/run/plan.hpp"

namespace {

/// Registers the cases the scheduling test names, once (the test binary holds no case suites;
/// no other test reads the registry).
void register_costed_cases() {
  static const bool done = [] {
    case_registry::instance().add({"launch.sched_test.heavy", "a costly case", nullptr}).cost_s =
        5.0;
    case_registry::instance().add({"launch.sched_test.light", "a cheap case", nullptr}).cost_s =
        0.5;
    return true;
  }();
  (void)done;
}

} // namespace

TEST_CASE("the costliest cells start first; equal costs keep the matrix's order", "[plan]") {
  register_costed_cases();
  const cell a{.id = "a"}, b{.id = "b"}, c{.id = "c"}, d{.id = "d"};
  std::vector<work_cell> work = {
      {&a, {"launch.sched_test.light"}},
      {&b, {"launch.sched_test.light", "launch.sched_test.heavy"}},
      {&c, {"not.registered.case"}}, // an unknown case costs as much as an ordinary one
      {&d, {"launch.sched_test.light"}},
  };
  CHECK(work_cost(work[1]) == 5.5);
  CHECK(work_cost(work[2]) == case_def{}.cost_s);
  order_by_cost(work);
  std::vector<std::string> order;
  for (const auto &w : work)
    order.push_back(w.c->id);
  CHECK(order == std::vector<std::string>{"b", "a", "d", "c"});
  CHECK(work[0].cases ==
        std::vector<std::string>{"launch.sched_test.light", "launch.sched_test.heavy"});
}
