// Stale expectations: allowances that excused nothing and baseline lines naming what is gone.
#include "harness/verdict/compare_steps.hpp"

namespace cuparity::verdict {

void report_stale_allowances(const matrix &m, const expectation_use &use, comparison &out) {
  // An allowance that matched no recorded case at all says nothing about this run (another
  // selection of cases, a shard): only one that matched and excused none is stale.
  for (const auto &x : m.expectations)
    for (const auto &a : x.allow)
      if (use.applicable.count(&a) && !use.used.count(&a))
        out.problems.push_back({"stale_expectation", "", "",
                                a.where.text() + ": allows " + join_outcomes(a.outcomes) +
                                    " but no matching case ended so (" + a.reason + ")"});
}

void report_stale_baseline(const std::vector<baseline_entry> &baseline, const expectation_use &use,
                           const cell_lookup &cells,
                           const std::function<bool(const std::string &)> &known_case,
                           comparison &out) {
  // A line whose cell and case both exist but were not run this time is not stale. A line whose
  // pair ended not_supported is: the known failure no longer happens (a pass is an unexpected
  // pass already, and any other outcome a failure).
  for (std::size_t i = 0; i < baseline.size(); ++i) {
    const auto &b = baseline[i];
    if (const auto seen = use.baseline_seen[i]) {
      if (*seen == outcome::not_supported && b.expected != outcome::not_supported)
        out.problems.push_back({"stale_expectation", b.cell, b.case_id,
                                "baseline line " + std::to_string(b.line) + " expects " +
                                    std::string(to_string(b.expected)) +
                                    ", but the case ended not_supported: update the baseline"});
      continue;
    }
    const bool cell_known = cells.find(b.cell) != nullptr;
    const bool case_known = known_case(b.case_id);
    if (!cell_known || !case_known)
      out.problems.push_back({"stale_expectation", b.cell, b.case_id,
                              "baseline line " + std::to_string(b.line) + " names a " +
                                  (cell_known ? "case" : "cell") + " that does not exist"});
  }
}

} // namespace cuparity::verdict
