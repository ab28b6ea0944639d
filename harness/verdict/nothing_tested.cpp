// A matrix of suites or programs whose every case ended not_supported (every program exited its
// skip_exit_code): nothing was looked at, so nothing can be said to hold (docs/verdicts.md,
// "Nothing tested").
#include "harness/verdict/compare_steps.hpp"

namespace cuparity::verdict {
namespace {

/// "program 'skips'" or "suite 'ext'": what a case id of the matrix belongs to.
std::string owner_of(const matrix &m, const std::string &case_id) {
  for (const auto &x : m.suites)
    if (case_id == x.name || case_id.rfind(x.name + ".", 0) == 0)
      return (x.program ? "program '" : "suite '") + x.name + "'";
  return "case '" + case_id + "'";
}

/// What the matrix runs, as the message names it: "programs", "suites" or both.
std::string what_runs(const matrix &m) {
  bool programs = false, suites = false;
  for (const auto &x : m.suites)
    (x.program ? programs : suites) = true;
  return programs && suites ? "suites and programs" : programs ? "programs" : "suites";
}

} // namespace

void report_nothing_tested(const matrix &m, const record_index &index, comparison &out) {
  // Built-in cases declare their requirements (a not_supported is earned case by case, and the
  // configuration cases always run); a suite or a program skips on whatever it finds missing.
  if (m.suites.empty())
    return;
  const nlohmann::json *first = nullptr;
  for (const auto &[key, rec] : index.cases) {
    if (rec.value("outcome", "") != std::string(to_string(outcome::not_supported)))
      return; // something ran and ended: there is evidence to judge
    first = first ? first : &rec;
  }
  // No result at all is judged elsewhere: a planned pair without one makes the run incomplete,
  // and a suite or program that could not start is a cell_error.
  if (!first)
    return;
  const std::string cell = first->value("cell", ""), id = first->value("case", "");
  out.problems.push_back(
      {"nothing_tested", "", "",
       "every one of the " + std::to_string(index.cases.size()) + " results of the " +
           what_runs(m) + " ended not_supported (first: " + owner_of(m, id) + " in cell '" + cell +
           "': " + first->value("message", "") +
           "): nothing was tested, so the run cannot be equivalent; install what they need (its "
           "reason says what is missing) or run them where it is"});
}

} // namespace cuparity::verdict
