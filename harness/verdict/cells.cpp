// What the cells' own records decide: their semantic groups, and which cells never started.
#include "harness/verdict/compare_steps.hpp"

namespace cuparity::verdict {

void assign_groups(const record_index &index, const cell_lookup &cells,
                   const std::optional<reference_rule> &reference, comparison &out) {
  for (const auto &[id, rec] : index.cells) {
    std::string key = semantic_key(config_of(rec));
    // The reference axis is what is under test (a candidate driver, say): its values may change
    // behaviour, so cells that differ in it are compared against the reference, not forced
    // equal in one group.
    if (const cell *c = reference ? cells.find(id) : nullptr)
      for (const auto &[var, value] : reference->values) {
        const auto it = c->env.find(var);
        key += " " + var + "=" + (it != c->env.end() && it->second ? *it->second : "-");
      }
    out.groups[key].push_back(id);
    out.cell_group[id] = key;
  }
}

void report_cell_errors(const record_index &index, comparison &out) {
  for (const auto &[id, msg] : index.cell_errors)
    if (!index.cells.count(id))
      out.problems.push_back({"cell_error", id, "", msg});
  // One per suite that could not run in a cell, however many tests it would have had.
  for (const auto &[key, msg] : index.suite_errors)
    out.problems.push_back({"cell_error", key.first, "", msg});
  // One per benchmark, and one for the probe processes, that could not run in a cell: their
  // series there would be missing unseen, and a latency verdict would stand over nothing.
  for (const auto &[key, msg] : index.latency_errors)
    out.problems.push_back({"cell_error", key.first, "", msg});
}

} // namespace cuparity::verdict
