// Outcome expectations: a non-pass needs an allowance (matrix) or a baseline line to be accepted.
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

/// Judges one recorded (cell, case) against what its allowances and baseline line expect.
void judge_one(const case_key &key, const nlohmann::json &rec, outcome o,
               const std::vector<const allowance *> &allows, const baseline_entry *base,
               expectation_use &use, comparison &out) {
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
                               const std::vector<baseline_entry> &baseline, comparison &out) {
  expectation_use use;
  use.baseline_seen.assign(baseline.size(), std::nullopt);
  for (const auto &[key, rec] : index.cases) {
    const outcome o = parse_outcome(rec.value("outcome", "error")).value_or(outcome::error);
    const auto allows = allowances_for(cells.find(key.first), key.second);
    use.applicable.insert(allows.begin(), allows.end());
    const baseline_entry *base = baseline_for(baseline, key, o, use.baseline_seen);
    judge_one(key, rec, o, allows, base, use, out);
  }
  return use;
}

} // namespace cuparity::verdict
