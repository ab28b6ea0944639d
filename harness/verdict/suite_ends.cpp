// What each external suite's end says of its cell (docs/verdicts.md "Suites"): a broken
// environment, a failure budget that stopped it, fewer tests collected than elsewhere; and the
// per-(cell, suite) counts summary.json and the console show.
#include "harness/protocol/outcome.hpp"
#include "harness/verdict/compare_steps.hpp"

#include <algorithm>

namespace cuparity::verdict {
namespace {

/// A count member: a whole number not below zero, else none (absent, null, or older records).
std::optional<std::size_t> count_of(const nlohmann::json &object, const char *key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number_integer() || it->get<long long>() < 0)
    return std::nullopt;
  return it->get<std::size_t>();
}

std::optional<suite_environment> environment_of(const nlohmann::json &end) {
  const auto it = end.find("environment");
  if (it == end.end() || !it->is_object())
    return std::nullopt;
  const auto stopped = it->find("stopped");
  return suite_environment{it->value("message", ""), count_of(*it, "count").value_or(0),
                           stopped != it->end() && stopped->is_boolean() && stopped->get<bool>(),
                           count_of(*it, "not_run").value_or(0)};
}

std::optional<suite_budget> budget_of(const nlohmann::json &end) {
  const auto it = end.find("budget");
  if (it == end.end() || !it->is_object())
    return std::nullopt;
  return suite_budget{count_of(*it, "max_fails").value_or(0), count_of(*it, "failures").value_or(0),
                      count_of(*it, "not_run").value_or(0)};
}

/// One suite_end read: records older than process_count count the processes they list.
suite_count count_of_end(const case_key &key, const nlohmann::json &end) {
  suite_count s{key.first, key.second};
  const auto program = end.find("program");
  s.program = program != end.end() && program->is_boolean() && program->get<bool>();
  s.collected = count_of(end, "collected");
  s.tests = count_of(end, "tests").value_or(0);
  const auto processes = end.find("processes");
  s.process_count =
      count_of(end, "process_count")
          .value_or(processes != end.end() && processes->is_array() ? processes->size()
                                                                    : std::size_t{0});
  if (const auto w = end.find("wall_ms"); w != end.end() && w->is_number())
    s.wall_ms = w->get<double>();
  s.environment = environment_of(end);
  s.budget = budget_of(end);
  return s;
}

std::string quoted(const std::string &s) {
  return "'" + s + "'";
}

std::string environment_text(const suite_count &s) {
  const suite_environment &e = *s.environment;
  // The runner's rule is a share (at least 9 in 10 of the tests that ended, skips aside), not
  // every test: tests that do not use a broken fixture still pass beside it.
  return "suite " + quoted(s.suite) + " in cell " + quoted(s.cell) + ": " +
         std::to_string(e.count) + " tests" + (e.stopped ? " of those it ran" : "") +
         " failed with one message, so its environment is broken (its tests did not run as "
         "written; they are not judged one by one)" +
         (e.stopped ? "; stopped there, " + std::to_string(e.not_run) + " tests not run" : "") +
         ": " + e.message;
}

std::string budget_text(const suite_count &s) {
  const suite_budget &b = *s.budget;
  return "suite " + quoted(s.suite) + " in cell " + quoted(s.cell) +
         " stopped at its failure budget: " + std::to_string(b.failures) + " failures (max_fails " +
         std::to_string(b.max_fails) + "); " + std::to_string(b.not_run) +
         " tests not run, so the cell's results of it are partial";
}

/// "cell 'a'" or "cells 'a', 'b'".
std::string cells_text(const std::vector<std::string> &cells) {
  std::string out = cells.size() == 1 ? "cell " : "cells ";
  for (std::size_t i = 0; i < cells.size(); ++i)
    out += (i ? ", " : "") + quoted(cells[i]);
  return out;
}

/// Per suite, the cells where it ended with a known count: each that collected fewer than the
/// most any cell collected (or none at all) is a problem naming both counts.
void report_collection(const std::vector<suite_count> &counts, comparison &out) {
  std::map<std::string, std::vector<const suite_count *>> by_suite;
  for (const auto &s : counts)
    if (!s.error && s.collected)
      by_suite[s.suite].push_back(&s);
  for (const auto &[suite, ends] : by_suite) {
    std::size_t most = 0;
    for (const suite_count *s : ends)
      most = std::max(most, *s->collected);
    std::vector<std::string> most_cells;
    for (const suite_count *s : ends)
      if (*s->collected == most)
        most_cells.push_back(s->cell);
    for (const suite_count *s : ends) {
      const std::string where = "suite " + quoted(suite) + " collected " +
                                std::to_string(*s->collected) + " tests in cell " + quoted(s->cell);
      if (*s->collected < most)
        out.problems.push_back(
            {"collection", s->cell, "",
             where + ", but " + std::to_string(most) + " in " + cells_text(most_cells)});
      else if (most == 0)
        out.problems.push_back({"collection", s->cell, "", where + ": zero tests is never a pass"});
    }
  }
}

/// Each (cell, suite) that ended or could not run, in cell then suite order.
std::vector<suite_count> suite_counts_of(const record_index &index) {
  std::vector<suite_count> out;
  std::set<case_key> keys;
  for (const auto &[key, end] : index.suite_ends)
    keys.insert(key);
  for (const auto &[key, message] : index.suite_errors)
    keys.insert(key);
  for (const auto &key : keys) {
    const auto error = index.suite_errors.find(key);
    if (error != index.suite_errors.end()) { // a later error than its last end, or no end
      suite_count s{key.first, key.second};
      s.error = error->second;
      out.push_back(std::move(s));
    } else {
      out.push_back(count_of_end(key, index.suite_ends.at(key)));
    }
  }
  return out;
}

} // namespace

void report_suite_ends(const matrix &m, const record_index &index, comparison &out) {
  if (m.suites.empty())
    return;
  // The set-aside tests ran and are counted; the environment problem speaks for them.
  for (const auto &[key, rec] : index.set_aside) {
    out.set_aside.insert(key);
    ++out.outcome_counts[rec.value("outcome", std::string(to_string(outcome::error)))];
  }
  const auto counts = suite_counts_of(index);
  for (const auto &s : counts) {
    if (s.environment)
      out.problems.push_back({"environment", s.cell, "", environment_text(s)});
    if (s.budget)
      out.problems.push_back({"failure_budget", s.cell, "", budget_text(s)});
  }
  report_collection(counts, out);
  out.suites = counts;
}

} // namespace cuparity::verdict
