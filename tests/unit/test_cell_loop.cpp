// The cell loop in-process (harness/framework/cell_loop): events in order, requirements, a poisoned
// case ending the cell, the cell's end with its binding map.
#include "harness/framework/case_context.hpp"
#include "harness/framework/case_registry.hpp"
#include "harness/framework/cell_loop.hpp"
#include "harness/protocol/exit_codes.hpp"
#include "harness/session/session.hpp"
#include "test_support.hpp"

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <unistd.h>

using namespace cuparity;
using json = nlohmann::json;

namespace {

/// The events a loop wrote to a temporary file.
struct event_file {
  event_file() : file(std::tmpfile()) {}
  ~event_file() { std::fclose(file); }
  event_file(const event_file &) = delete;
  event_file &operator=(const event_file &) = delete;
  [[nodiscard]] int fd() const { return fileno(file); }
  [[nodiscard]] std::vector<json> read() const {
    std::vector<json> out;
    std::rewind(file);
    char buf[1 << 16];
    std::string text;
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, file)) > 0;)
      text.append(buf, n);
    for (std::size_t at = 0, end; (end = text.find('\n', at)) != std::string::npos; at = end + 1)
      out.push_back(json::parse(text.substr(at, end - at)));
    return out;
  }
  std::FILE *file;
};

void register_loop_cases() {
  static bool done = false;
  if (done)
    return;
  done = true;
  case_registry &r = case_registry::instance();
  r.add({"loopsuite.order.first", "passes", [](case_context &ctx) { ctx.observe("one", 1); }});
  r.add({"loopsuite.order.needs_two", "needs 64 devices", [](case_context &) {}}).needs_devices(64);
  r.add({"loopsuite.order.poisons", "poisons the process",
         [](case_context &ctx) { ctx.mark_poisoned(); }});
  r.add({"loopsuite.order.zz_after", "never reached after the poison", [](case_context &) {}});
}

} // namespace

TEST_CASE("the cell loop runs in-process: events per case, requirements, a poisoned case ends "
          "the cell, the cell's end carries the binding map",
          "[cell_loop]") {
  register_loop_cases();
  auto sess = session::open(test::sim_settings({}));
  driver &d = sess->drv();
  d.cuInit(0);       // what the cell's start does before the loop
  gpu_lock lock(""); // no directory: a lock that does nothing
  event_file file;
  const event_stream events(file.fd());

  const int rc =
      run_cell_cases(d, sess->config(), lock, events, {"loopsuite"}, {"loopsuite.order.poisons"});
  CHECK(rc == exit_code::ok);
  std::map<std::string, json> ends;
  std::vector<std::string> kinds;
  for (const auto &e : file.read()) {
    kinds.push_back(e["event"]);
    if (e["event"] == "case_end")
      ends[e["case"]] = e;
  }
  REQUIRE(ends.size() == 3);
  CHECK(ends["loopsuite.order.first"]["outcome"] == "pass");
  CHECK(ends["loopsuite.order.first"]["observations"]["one"] == 1);
  CHECK(ends["loopsuite.order.needs_two"]["outcome"] == "not_supported");
  CHECK(kinds.front() == "lock_wait");

  event_file second;
  const event_stream more(second.fd());
  CHECK(run_cell_cases(d, sess->config(), lock, more, {"loopsuite"}, {}) ==
        exit_code::cell_poisoned);
  finish_cell(d, lock, more, true, std::nullopt);
  std::vector<std::string> cases;
  json cell_end;
  for (const auto &e : second.read()) {
    if (e["event"] == "case_end")
      cases.push_back(e["case"]);
    if (e["event"] == "cell_end")
      cell_end = e;
  }
  // Sorted by id: first, needs_two, poisons; zz_after is never reached.
  CHECK(cases == std::vector<std::string>{"loopsuite.order.first", "loopsuite.order.needs_two",
                                          "loopsuite.order.poisons"});
  REQUIRE(cell_end.is_object());
  CHECK(cell_end["binding_map"].is_array());
}
