// Outcome expectations: a non-pass needs an allowance (matrix) or a baseline line to be accepted.
#include "harness/matrix/flakes.hpp"
#include "harness/protocol/case_ids.hpp"
#include "harness/verdict/compare_steps.hpp"

#include <algorithm>

namespace cuparity::verdict {
namespace {

bool contains(const std::vector<outcome> &v, outcome o) {
  return std::find(v.begin(), v.end(), o) != v.end();
}

/// The allowances of the cell's expectations that name the case (by one of their globs).
std::vector<const allowance *> allowances_for(const cell *c, const std::string &case_id) {
  std::vector<const allowance *> out;
  if (!c)
    return out;
  for (const expectation *x : c->expectations)
    for (const auto &a : x->allow)
      if (std::any_of(a.cases.begin(), a.cases.end(),
                      [&](const std::string &g) { return case_matches(case_id, g); }))
        out.push_back(&a);
  return out;
}

/// The last baseline line naming the pair; every line naming it sees the pair's outcome `o`.
const baseline_entry *baseline_for(const std::vector<baseline_entry> &baseline, const case_key &key,
                                   outcome o, std::vector<std::optional<outcome>> &seen) {
  const baseline_entry *found = nullptr;
  for (std::size_t i = 0; i < baseline.size(); ++i)
    if (baseline[i].case_id == key.second && baseline[i].cell == key.first) {
      found = &baseline[i];
      seen[i] = o;
    }
  return found;
}

/// An outcome nothing accepted: a non-pass is a failure, a pass where a non-pass was expected is
/// an unexpected pass (the expectation has to go), not_supported is fine either way.
void report_unaccepted(const case_key &key, const nlohmann::json &rec, outcome o,
                       const std::vector<outcome> &expected, comparison &out) {
  const auto &[cell_id, case_id] = key;
  if (is_success(o)) {
    if (!expected.empty() && o == outcome::pass)
      out.problems.push_back({"unexpected_pass", cell_id, case_id,
                              "passed, but " + join_outcomes(expected) +
                                  " is expected: update the matrix or baseline"});
    return;
  }
  std::string msg = std::string(to_string(o)) + ": " + rec.value("message", "");
  if (!expected.empty())
    msg += " (expected " + join_outcomes(expected) + ")";
  out.problems.push_back({"failure", cell_id, case_id, msg});
}

/// The flakes-file entry of the suite a case id belongs to that excuses it, if any.
const flake_rule *flake_for(const std::vector<external_suite> &suites, const std::string &case_id) {
  for (const auto &x : suites)
    if (case_id.rfind(x.name + ".", 0) == 0)
      return find_flake(x.flakes, case_id);
  return nullptr;
}

/// A flaky test nothing else accepted: excused by its suite's flakes file (counted), else a
/// problem of its own. Either way it is left out of the group comparison: one cell's flaky test
/// says nothing about the binding, and it is reported as what it is.
void judge_flaky(const case_key &key, const nlohmann::json &rec,
                 const std::vector<external_suite> &suites, expectation_use &use, comparison &out) {
  use.excused.insert(key);
  if (flake_for(suites, key.second)) {
    ++out.flaky_excused;
    ++out.allowed;
    return;
  }
  out.problems.push_back({"flaky", key.first, key.second,
                          rec.value("message", "") + " (no flakes file entry excuses it)"});
}

/// Judges one recorded (cell, case) against what its allowances and baseline line expect.
void judge_one(const case_key &key, const nlohmann::json &rec, outcome o,
               const std::vector<const allowance *> &allows, const baseline_entry *base,
               const std::vector<external_suite> &suites, expectation_use &use, comparison &out) {
  ++out.outcome_counts[std::string(to_string(o))];
  bool accepted = false;
  std::vector<outcome> expected;
  for (const allowance *a : allows) {
    expected.insert(expected.end(), a->outcomes.begin(), a->outcomes.end());
    if (contains(a->outcomes, o)) {
      accepted = true;
      use.used.insert(a);
    }
  }
  if (base) {
    expected.push_back(base->expected);
    accepted = accepted || base->expected == o;
  }
  if (!accepted && o == outcome::flaky)
    return judge_flaky(key, rec, suites, use, out);
  if (!accepted)
    return report_unaccepted(key, rec, o, expected, out);
  use.excused.insert(key);
  if (!is_success(o))
    ++out.allowed;
}

} // namespace

std::string join_outcomes(const std::vector<outcome> &outcomes) {
  std::string s;
  for (auto o : outcomes)
    s += (s.empty() ? "" : "/") + std::string(to_string(o));
  return s;
}

expectation_use judge_outcomes(const record_index &index, const cell_lookup &cells,
                               const std::vector<baseline_entry> &baseline,
                               const std::vector<external_suite> &suites, comparison &out) {
  expectation_use use;
  use.baseline_seen.assign(baseline.size(), std::nullopt);
  for (const auto &[key, rec] : index.cases) {
    const outcome o = parse_outcome(rec.value("outcome", "error")).value_or(outcome::error);
    const auto allows = allowances_for(cells.find(key.first), key.second);
    use.applicable.insert(allows.begin(), allows.end());
    const baseline_entry *base = baseline_for(baseline, key, o, use.baseline_seen);
    judge_one(key, rec, o, allows, base, suites, use, out);
  }
  return use;
}

} // namespace cuparity::verdict
