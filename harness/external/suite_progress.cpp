// Reading the plugin's progress lines into the tests a suite process started and ended.
#include "harness/external/suite_progress.hpp"

#include <fstream>
#include <nlohmann/json.hpp>

namespace cuparity {

const suite_test_progress *suite_progress::in_flight() const {
  for (auto it = tests.rbegin(); it != tests.rend(); ++it)
    if (!it->ended)
      return &*it;
  return nullptr;
}

const suite_test_progress *suite_progress::find_junit(const std::string &classname,
                                                      const std::string &name) const {
  for (const auto &t : tests)
    if (t.classname == classname && t.name == name)
      return &t;
  return nullptr;
}

namespace {

std::string text_of(const nlohmann::json &j, const char *key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

void apply_progress_event(suite_progress &p, const nlohmann::json &ev) {
  const std::string event = text_of(ev, "event"), nodeid = text_of(ev, "nodeid");
  if (event == "collected" && ev.contains("count") && ev["count"].is_number_integer()) {
    p.collected = ev["count"].get<long>();
  } else if (event == "start" && !nodeid.empty()) {
    // A test started again in one process (pytest-rerunfailures) keeps its first place.
    if (p.by_nodeid.emplace(nodeid, p.tests.size()).second)
      p.tests.push_back({nodeid, text_of(ev, "classname"), text_of(ev, "name")});
    suite_test_progress &t = p.tests[p.by_nodeid[nodeid]];
    t.ended = false;
    if (ev.contains("time") && ev["time"].is_number())
      t.started_unix = ev["time"].get<double>();
  } else if (event == "end" && p.by_nodeid.count(nodeid)) {
    suite_test_progress &t = p.tests[p.by_nodeid[nodeid]];
    t.ended = true;
    t.outcome = text_of(ev, "outcome");
    t.message = text_of(ev, "message");
    if (ev.contains("duration") && ev["duration"].is_number())
      t.duration_s = ev["duration"].get<double>();
  }
}

} // namespace

suite_progress read_suite_progress(const std::string &path) {
  suite_progress p;
  std::ifstream in(path, std::ios::binary);
  std::string line;
  while (std::getline(in, line)) {
    const nlohmann::json ev = nlohmann::json::parse(line, nullptr, false);
    if (ev.is_object())
      apply_progress_event(p, ev);
  }
  return p;
}

} // namespace cuparity
