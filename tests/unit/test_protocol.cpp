// The process protocol: every event and record name round-trips, case records are checked, and
// cell.startup is selected as its globs say.
#include "harness/protocol/events.hpp"
#include "harness/protocol/probe_ids.hpp"
#include "harness/protocol/records.hpp"

#include <catch2/catch.hpp>
#include <set>
#include <string>

using namespace cuparity;

TEST_CASE("every event kind has one distinct name that parses back", "[protocol]") {
  std::set<std::string> names;
#define CHECK_EVENT(name)                                                                          \
  CHECK(to_string(event_kind::name) == #name);                                                     \
  CHECK(parse_event_kind(#name) == event_kind::name);                                              \
  names.insert(std::string(to_string(event_kind::name)));
  CUPARITY_EVENTS(CHECK_EVENT)
#undef CHECK_EVENT
  CHECK(names.size() == 11);
  CHECK_FALSE(parse_event_kind("case_ended"));
  CHECK(event_of(make_event(event_kind::case_end, {{"case", "a.b.c"}})) == event_kind::case_end);
  CHECK_FALSE(event_of(nlohmann::json{{"event", 5}}));
  CHECK_FALSE(event_of(nlohmann::json(42)));
}

TEST_CASE("every record type has one distinct name that parses back", "[protocol]") {
  std::set<std::string> names;
#define CHECK_RECORD(id, name)                                                                     \
  CHECK(to_string(record_type::id) == name);                                                       \
  CHECK(parse_record_type(name) == record_type::id);                                               \
  names.insert(name);
  CUPARITY_RECORDS(CHECK_RECORD)
#undef CHECK_RECORD
  CHECK(names.size() == 15);
  CHECK(to_string(record_type::case_result) == "case"); // the on-disk name since results/1
  CHECK(is_record(make_record(record_type::run), record_type::run));
  CHECK_FALSE(is_record(nlohmann::json{{"type", "runs"}}, record_type::run));
  CHECK_FALSE(record_type_of(nlohmann::json::array()));
}

TEST_CASE("cell.startup is selected by no globs or one that matches it, and by nothing else",
          "[protocol]") {
  CHECK(selects_startup({})); // no --probe: every probe, cell.startup among them
  CHECK(selects_startup({"cell.*"}));
  CHECK(selects_startup({"ctx.get_current", "cell.startup"}));
  CHECK_FALSE(selects_startup({"ctx.*"}));
  CHECK_FALSE(selects_startup({"cell.startup2", "launch.*"}));
  CHECK(glob_matches_startup("*.startup"));
  CHECK_FALSE(glob_matches_startup("cell"));
}

TEST_CASE("a case record round-trips and a malformed one names its field", "[protocol]") {
  case_record r{"cell-a", "stream.default.semantics", outcome::fail, "why", {{"k", 1}}, 2.5};
  const auto j = to_json(r);
  CHECK(j["type"] == "case");
  const auto back = case_record_from_json(j);
  CHECK(back.cell == r.cell);
  CHECK(back.case_id == r.case_id);
  CHECK(back.result == outcome::fail);
  CHECK(back.message == "why");
  CHECK(back.observations == r.observations);
  CHECK(back.duration_ms == 2.5);

  auto broken = j;
  broken["cell"] = 5;
  CHECK_THROWS_WITH(case_record_from_json(broken), Catch::Contains("'cell'"));
  broken = j;
  broken.erase("case");
  CHECK_THROWS_WITH(case_record_from_json(broken), Catch::Contains("'case'"));
  broken = j;
  broken["outcome"] = "passed";
  CHECK_THROWS_WITH(case_record_from_json(broken), Catch::Contains("passed"));
  CHECK_THROWS(case_record_from_json(make_record(record_type::cell)));
}
