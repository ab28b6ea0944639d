// What the cells' own records decide: their semantic groups, and which cells never started.
#include "harness/verdict/compare_steps.hpp"

namespace cuparity::verdict {

void assign_groups(const record_index &index, comparison &out) {
  for (const auto &[id, rec] : index.cells) {
    std::string key = semantic_key(config_of(rec));
    out.groups[key].push_back(id);
    out.cell_group[id] = key;
  }
}

void report_cell_errors(const record_index &index, comparison &out) {
  for (const auto &[id, msg] : index.cell_errors)
    if (!index.cells.count(id))
      out.problems.push_back({"cell_error", id, "", msg});
}

} // namespace cuparity::verdict
