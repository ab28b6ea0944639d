// A suite's tests in one cell: their tries, their case records, and the rules over them all.
#include "harness/run/suite_tests.hpp"

#include "harness/protocol/records.hpp"

#include <algorithm>
#include <filesystem>
#include <map>

namespace cuparity {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

outcome outcome_of_junit(junit_outcome o) {
  switch (o) {
  case junit_outcome::passed:
    return outcome::pass;
  case junit_outcome::failed:
    return outcome::fail;
  case junit_outcome::skipped:
    return outcome::not_supported;
  case junit_outcome::errored:
    break;
  }
  return outcome::error;
}

outcome outcome_of_progress(const suite_test_progress &t) {
  return t.outcome == "passed"    ? outcome::pass
         : t.outcome == "skipped" ? outcome::not_supported
         : t.errored()            ? outcome::error
         : t.outcome == "failed"  ? outcome::fail
                                  : outcome::error;
}

/// The first line of a failure's message attribute, else of its text: pytest puts the whole
/// assertion rewrite in the attribute, and the traceback is in the suite's log. A test id the
/// file holds more than once is one result, the gravest (junit_test::duplicates): never flaky,
/// and its message says so.
std::string junit_message(const junit_test &t, const std::string &junit_path) {
  const std::string &text = t.message.empty() ? t.detail : t.message;
  const std::string first = text.substr(0, text.find('\n'));
  if (t.duplicates.empty())
    return first;
  std::string each;
  for (const auto &[line, o] : t.duplicates)
    each +=
        (each.empty() ? "" : ", ") + std::string(to_string(o)) + " at line " + std::to_string(line);
  return "duplicate test id in " + fs::path(junit_path).filename().string() + ": " +
         std::to_string(t.duplicates.size()) + " <testcase> elements (" + each +
         "), the gravest stands" + (first.empty() ? "" : ": " + first);
}

/// A try from a JUnit test. An error's message is the plugin's where it said one: JUnit's is the
/// first line of a report, and a report without a crash line (a fixture pytest cannot find) starts
/// with the test's file and line ("failed on setup with "file t.py, line 13"), which names
/// neither the cause nor is the same for two tests that hit the same one.
test_try junit_try(const junit_test &t, const suite_test_progress *seen, const std::string &path,
                   const std::string &tag) {
  std::string message = junit_message(t, path);
  if (t.outcome == junit_outcome::errored && t.duplicates.empty() && seen && seen->ended &&
      seen->errored() && !seen->message.empty())
    message = seen->junit_style_message();
  return {outcome_of_junit(t.outcome), message, t.time_s, tag};
}

bool is_collect_error(const suite_process_result &p, const junit_test &t) {
  for (const auto &e : p.progress.collect_errors)
    if (e.classname == t.classname && e.name == t.name)
      return true;
  return false;
}

} // namespace

bool suite_test::unchanged() const {
  for (const auto &t : tries)
    if (t.result != tries.front().result)
      return false;
  return true;
}

std::vector<reported_try> reported_tries(const suite_process_result &p, const std::string &tag) {
  std::vector<reported_try> out;
  if (p.junit) {
    for (const auto &t : p.junit->tests) {
      if (is_collect_error(p, t))
        continue; // the plugin's collect_error line says more than JUnit's "collection failure"
      const suite_test_progress *seen = p.progress.find_junit(t.classname, t.name);
      out.push_back({seen ? seen->nodeid : t.classname + "::" + t.name, t.classname, t.name,
                     junit_try(t, seen, p.junit_path, tag)});
    }
    return out;
  }
  for (const auto &t : p.progress.tests)
    if (t.ended)
      out.push_back({t.nodeid,
                     t.classname,
                     t.name,
                     {outcome_of_progress(t), t.junit_style_message(), t.duration_s, tag}});
  return out;
}

test_try in_flight_try(const suite_process_result &p, const std::string &tag) {
  return {p.timed_out ? outcome::timeout : outcome::crash,
          "the suite's process " + p.how_it_ended() + " during this test (log: " + p.log_path + ")",
          p.in_flight_s(), tag};
}

json suite_case_record(const suite_test &t, const std::string &cell) {
  const test_try &first = t.first();
  std::string sequence;
  const test_try *changed = nullptr;
  json tries = json::array();
  for (const auto &x : t.tries) {
    if (!changed && x.result != first.result)
      changed = &x;
    sequence += (sequence.empty() ? "" : ", ") + std::string(to_string(x.result));
    tries.push_back({{"outcome", to_string(x.result)},
                     {"message", x.message},
                     {"time_s", x.time_s},
                     {"process", x.process}});
  }
  case_record r{.cell = cell,
                .case_id = t.case_id,
                .result = first.result,
                .message = first.message,
                .duration_ms = first.time_s * 1000};
  if (changed) {
    r.result = outcome::flaky;
    r.message = "changed outcome between tries: " + sequence + " (first: " + first.message + ")";
    // Re-run alone ("a1"), after failing alike in every batch: it fails only beside other tests.
    if (changed->process.rfind('a', 0) == 0)
      r.message += "; it changed only when run alone (" + changed->process + "): order-dependent";
  } else if (t.tries.size() > 1) {
    r.message += " (the same in " + std::to_string(t.tries.size()) + " tries)";
  }
  json record = to_json(r);
  record["nodeid"] = t.nodeid;
  record["tries"] = tries;
  if (t.collection_error)
    record["collection_error"] = true;
  return record;
}

std::optional<std::pair<std::string, long>>
identical_failures(const std::vector<const suite_test *> &tests) {
  std::map<std::string, long> alike; // failure message -> tests that failed with it
  long ended = 0;                    // tests that did not skip
  for (const suite_test *t : tests) {
    const outcome o = t->first().result;
    if (o == outcome::not_supported)
      continue; // a skip says nothing either way
    ++ended;
    if (o == outcome::fail || o == outcome::error)
      ++alike[t->first().message];
  }
  const auto most = std::max_element(
      alike.begin(), alike.end(), [](const auto &a, const auto &b) { return a.second < b.second; });
  if (most == alike.end() || most->second < 2 || most->second * 10 < ended * 9)
    return std::nullopt;
  return *most;
}

} // namespace cuparity
