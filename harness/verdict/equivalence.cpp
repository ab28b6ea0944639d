// Equivalence inside each semantic group: the same case must end alike and observe alike.
#include "harness/verdict/compare_steps.hpp"

#include <set>

namespace cuparity::verdict {
namespace {

using per_cell_results = std::map<std::string, const nlohmann::json *>; ///< cell -> case record

/// Every case id recorded by some member of the group.
std::set<std::string> cases_of(const std::set<std::string> &members, const record_index &index) {
  std::set<std::string> out;
  for (const auto &[key, rec] : index.cases)
    if (members.count(key.first))
      out.insert(key.second);
  return out;
}

/// The members' records of one case, less the excused ones (an accepted known failure differs
/// on purpose).
per_cell_results comparable_results(const std::vector<std::string> &members,
                                    const std::string &case_id, const record_index &index,
                                    const std::set<case_key> &excused) {
  per_cell_results out;
  for (const auto &c : members) {
    auto it = index.cases.find({c, case_id});
    if (it != index.cases.end() && !excused.count({c, case_id}))
      out[c] = &it->second;
  }
  return out;
}

nlohmann::json observations_of(const nlohmann::json &rec) {
  return rec.value("observations", nlohmann::json::object());
}

/// A divergence when `value_of` is not the same for every cell (an absent value is null).
template <class ValueOf>
void report_if_different(const std::string &group, const std::string &case_id,
                         const std::string &key, const per_cell_results &results, ValueOf value_of,
                         comparison &out) {
  std::map<std::string, nlohmann::json> values;
  std::set<std::string> distinct;
  for (const auto &[c, rec] : results) {
    values[c] = value_of(*rec);
    distinct.insert(values[c].dump());
  }
  if (distinct.size() > 1)
    out.divergences.push_back({group, case_id, key, std::move(values)});
}

/// The outcome, then each observation any member made; a configuration case observes the
/// configuration, which may differ inside a group (docs/verdicts.md).
void compare_case(const std::string &group, const std::string &case_id,
                  const per_cell_results &results, comparison &out) {
  report_if_different(
      group, case_id, "outcome", results,
      [](const nlohmann::json &r) { return nlohmann::json(r.value("outcome", "?")); }, out);
  if (is_configuration_case(case_id))
    return;
  std::set<std::string> keys;
  for (const auto &[c, rec] : results) {
    const auto obs = observations_of(*rec); // items() refers to it: it must outlive the loop
    for (const auto &[k, v] : obs.items())
      keys.insert(k);
  }
  for (const auto &k : keys)
    report_if_different(
        group, case_id, "observations." + k, results,
        [&](const nlohmann::json &r) {
          const auto obs = observations_of(r);
          return obs.contains(k) ? obs.at(k) : nlohmann::json();
        },
        out);
}

} // namespace

void compare_groups(const record_index &index, const std::set<case_key> &excused, comparison &out) {
  for (const auto &[group, members] : out.groups) {
    if (members.size() < 2)
      continue;
    for (const auto &case_id : cases_of({members.begin(), members.end()}, index)) {
      const auto results = comparable_results(members, case_id, index, excused);
      if (results.size() >= 2)
        compare_case(group, case_id, results, out);
    }
  }
}

} // namespace cuparity::verdict
