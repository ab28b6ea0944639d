// Indexing a run's records for the verdict steps.
#include "harness/verdict/record_index.hpp"

#include "harness/protocol/records.hpp"

namespace cuparity::verdict {

record_index index_records(const std::vector<nlohmann::json> &records) {
  record_index out;
  for (const auto &r : records) {
    const auto type = record_type_of(r);
    if (type == record_type::cell) {
      out.cells[r.value("cell", "")] = r;
      out.driver_error_everywhere = false;
    } else if (type == record_type::cell_error) {
      out.cell_errors[r.value("cell", "")] = r.value("message", "");
      if (r.value("kind", "") != "driver")
        out.driver_error_everywhere = false;
    } else if (type == record_type::case_result) {
      out.cases[{r.value("cell", ""), r.value("case", "")}] = r;
    }
  }
  return out;
}

nlohmann::json config_of(const nlohmann::json &cell_record) {
  return cell_record.value("config", nlohmann::json::object());
}

cell_lookup::cell_lookup(const matrix &m) {
  for (const auto &c : m.cells)
    m_cells.try_emplace(c.id, &c);
}

const cell *cell_lookup::find(const std::string &id) const {
  auto it = m_cells.find(id);
  return it == m_cells.end() ? nullptr : it->second;
}

} // namespace cuparity::verdict
