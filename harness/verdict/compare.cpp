// The functional verdict: who may differ, who must agree, and what was expected (docs/verdicts.md).
#include "harness/verdict/compare.hpp"

#include "harness/verdict/compare_steps.hpp"
#include "harness/verdict/record_index.hpp"

namespace cuparity {

std::string semantic_key(const nlohmann::json &config) {
  return "stream0=" + config.value("stream0", std::string("?")) +
         " driver=" + config.value("driver_path", std::string("?")) +
         " include=" + config.value("include_path", std::string("?"));
}

bool is_configuration_case(const std::string &case_id) {
  return case_id.rfind("binding.config.", 0) == 0;
}

comparison compare_results(const matrix &m, const std::vector<nlohmann::json> &records,
                           const std::vector<planned_pair> &planned,
                           const std::vector<baseline_entry> &baseline,
                           const std::function<bool(const std::string &)> &known_case) {
  using namespace verdict;
  comparison out;
  const record_index index = index_records(records);
  const cell_lookup cells(m);
  out.results = index.cases.size() + index.set_aside.size();
  out.coverage = check_coverage(planned, records);
  out.environment_problem = !index.cell_errors.empty() && index.driver_error_everywhere;
  // The order of the steps is the order of the problems in every output.
  assign_groups(index, cells, m.reference, out);
  report_cell_errors(index, out);
  report_suite_ends(m, index, out);
  check_configurations(index, cells, out);
  const expectation_use use = judge_outcomes(index, cells, baseline, m.suites, out);
  report_stale_allowances(m, use, out);
  report_stale_baseline(baseline, use, cells, known_case, out);
  compare_groups(index, use.excused, out);
  attach_binding_differences(index, out);
  report_noop_variables(m, index, out);
  report_nothing_tested(m, index, out);
  out.changes = changes_against_reference(m, index, records);
  out.stale_known = apply_known_changes(out.changes, m.known_changes);
  // A capability the reference has and the candidate lost (pass -> anything else) is a
  // regression whatever fail_on_change says, unless the known-changes file lists it: a driver
  // that cannot launch a kernel must not read as equivalent.
  for (const auto &c : out.changes)
    if (c.known.empty() && is_lost_capability(c))
      out.problems.push_back({"regression", c.cell, c.case_id, change_text(c)});
  // With fail_on_change the known-changes file is the list of accepted changes, and it must be
  // current: a change it does not list fails, and so does an entry that matched nothing.
  if (m.fail_on_change) {
    for (const auto &c : out.changes)
      if (c.known.empty() && !is_lost_capability(c))
        out.problems.push_back({"change", c.cell, c.case_id, change_text(c)});
    for (const auto &k : out.stale_known)
      out.problems.push_back(
          {"stale_expectation", k.cell.value_or(""), k.case_id, stale_known_text(k)});
  }
  return out;
}

} // namespace cuparity
