// Indexing a run's records for the verdict steps.
#include "harness/verdict/record_index.hpp"

#include "harness/protocol/records.hpp"

namespace cuparity::verdict {
namespace {

/// A suite that ran to its end: its earlier error is over, and its bindings join its cell's.
void index_suite_end(const nlohmann::json &r, record_index &out) {
  const std::string cell = r.value("cell", "");
  out.suite_errors.erase({cell, r.value("suite", "")});
  auto &cell_bindings = out.bindings[cell];
  auto &own = out.suite_bindings[{cell, r.value("suite", "")}];
  own.clear(); // a resumed suite's last end is its evidence
  out.suite_ends[{cell, r.value("suite", "")}] = r;
  // Held here: items() refers to the object, and a temporary would end before the loop runs.
  const nlohmann::json bindings = r.value("bindings", nlohmann::json::object());
  for (const auto &[function, symbols] : bindings.items())
    if (symbols.is_array())
      for (const auto &s : symbols)
        if (s.is_string()) {
          cell_bindings[function].insert(s.get<std::string>());
          own[function].insert(s.get<std::string>());
        }
}

/// Whether a suite_end says its suite's environment was broken in its cell.
bool environment_broken(const nlohmann::json &suite_end) {
  const auto it = suite_end.find("environment");
  return it != suite_end.end() && it->is_object();
}

/// The cases of every (cell, suite) whose environment was broken move to `set_aside`. After
/// indexing: a suite's case records come before its suite_end, and a resumed run's last end rules.
void set_aside_broken_suites(record_index &out) {
  for (const auto &[key, end] : out.suite_ends) {
    if (!environment_broken(end))
      continue;
    const auto &[cell, suite] = key;
    // Suite names have no dot (docs/configuration.md): "<suite>." starts its tests' ids alone.
    const std::string prefix = suite + ".";
    auto it = out.cases.lower_bound({cell, prefix});
    while (it != out.cases.end() && it->first.first == cell &&
           it->first.second.compare(0, prefix.size(), prefix) == 0) {
      out.set_aside.insert(*it);
      it = out.cases.erase(it);
    }
  }
}

} // namespace

record_index index_records(const std::vector<nlohmann::json> &records) {
  record_index out;
  for (const auto &r : records) {
    const auto type = record_type_of(r);
    if (type == record_type::cell) {
      out.cells[r.value("cell", "")] = r;
      out.driver_error_everywhere = false;
    } else if (type == record_type::cell_error && r.contains("suite")) {
      out.suite_errors[{r.value("cell", ""), r.value("suite", "")}] = r.value("message", "");
      out.driver_error_everywhere = false;
    } else if (type == record_type::suite_end) {
      index_suite_end(r, out);
    } else if (type == record_type::cell_error) {
      out.cell_errors[r.value("cell", "")] = r.value("message", "");
      if (r.value("kind", "") != "driver")
        out.driver_error_everywhere = false;
    } else if (type == record_type::latency_error) {
      // A benchmark's message names it; a probe process's is said to be one.
      const bool benchmark = r.contains("benchmark");
      out.latency_errors.emplace(
          case_key{r.value("cell", ""), benchmark ? r.value("benchmark", "") : "latency probes"},
          (benchmark ? "" : "latency probe process: ") + r.value("message", ""));
    } else if (type == record_type::case_result) {
      out.cases[{r.value("cell", ""), r.value("case", "")}] = r;
    }
  }
  set_aside_broken_suites(out);
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
