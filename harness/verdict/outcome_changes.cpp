// Outcome changes between two runs, pair by pair.
#include "harness/verdict/outcome_changes.hpp"

#include <map>
#include <set>
#include <utility>

namespace cuparity {
namespace {

using pair_key = std::pair<std::string, std::string>; ///< (cell, case)

std::map<pair_key, const run_result *> by_pair(const std::vector<run_result> &results) {
  std::map<pair_key, const run_result *> out;
  for (const auto &r : results)
    out[{r.cell, r.case_id}] = &r;
  return out;
}

} // namespace

std::string_view to_string(outcome_change c) noexcept {
  switch (c) {
#define CUPARITY_OUTCOME_CHANGE_NAME(id, name)                                                     \
  case outcome_change::id:                                                                         \
    return name;
    CUPARITY_OUTCOME_CHANGES(CUPARITY_OUTCOME_CHANGE_NAME)
#undef CUPARITY_OUTCOME_CHANGE_NAME
  }
  return "unchanged";
}

outcome_change classify_change(std::optional<outcome> a, std::optional<outcome> b) {
  if (!a)
    return outcome_change::added;
  if (!b)
    return outcome_change::missing;
  if (*a == *b)
    return outcome_change::unchanged;
  // A pass that became not_supported lost a capability: a regression, not a neutral change
  // (a driver that no longer launches kernels must not compare as fine).
  if (*a == outcome::pass)
    return outcome_change::regression;
  if (is_success(*a) != is_success(*b))
    return is_success(*a) ? outcome_change::regression : outcome_change::fix;
  return outcome_change::changed;
}

std::vector<result_change> compare_outcomes(const std::vector<run_result> &a,
                                            const std::vector<run_result> &b) {
  const auto in_a = by_pair(a), in_b = by_pair(b);
  std::set<pair_key> keys;
  for (const auto &[k, r] : in_a)
    keys.insert(k);
  for (const auto &[k, r] : in_b)
    keys.insert(k);
  std::vector<result_change> out;
  for (const auto &k : keys) {
    result_change c{k.first, k.second};
    if (auto it = in_a.find(k); it != in_a.end())
      c.a = it->second->result;
    if (auto it = in_b.find(k); it != in_b.end()) {
      c.b = it->second->result;
      c.message_b = it->second->message;
    }
    c.change = classify_change(c.a, c.b);
    out.push_back(std::move(c));
  }
  return out;
}

} // namespace cuparity
