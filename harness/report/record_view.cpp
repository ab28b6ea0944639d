// Grouping a run's records per cell for the outputs.
#include "harness/report/record_view.hpp"

#include "harness/protocol/records.hpp"

namespace cuparity {

std::map<std::string, cell_view> by_cell(const std::vector<nlohmann::json> &records) {
  std::map<std::string, cell_view> out;
  for (const auto &r : records) {
    if (is_record(r, record_type::cell)) {
      auto &view = out[r.value("cell", "")];
      view.record = r;
      view.started = true;
    } else if (is_record(r, record_type::case_result))
      out[r.value("cell", "")].cases[r.value("case", "")] = r;
  }
  return out;
}

std::map<std::string, int> outcome_counts(const cell_view &view) {
  std::map<std::string, int> out;
  for (const auto &[id, rec] : view.cases)
    ++out[rec.value("outcome", "error")];
  return out;
}

std::string group_of(const comparison &c, const std::string &cell_id) {
  auto it = c.cell_group.find(cell_id);
  return it == c.cell_group.end() ? "" : it->second;
}

} // namespace cuparity
