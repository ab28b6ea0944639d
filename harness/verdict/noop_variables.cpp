// The no-op rule: a matrix variable that changed nothing the run recorded is a misspelling until
// the matrix says otherwise (docs/verdicts.md, "No-op variables").
#include "harness/config/known_variables.hpp"
#include "harness/verdict/compare_steps.hpp"

#include <algorithm>

namespace cuparity::verdict {

bool differ_only_in(const cell &a, const cell &b, const std::string &var) {
  for (const auto &[k, v] : a.env) {
    const auto it = b.env.find(k);
    const bool same = it != b.env.end() && it->second == v;
    if ((k == var) == same)
      return false;
  }
  return true;
}

namespace {

/// Each recorded case of a cell: its outcome and what it observed.
std::map<std::string, nlohmann::json> results_of(const record_index &index,
                                                 const std::string &cell) {
  std::map<std::string, nlohmann::json> out;
  for (auto it = index.cases.lower_bound({cell, ""});
       it != index.cases.end() && it->first.first == cell; ++it)
    out[it->first.second] = {it->second.value("outcome", ""),
                             it->second.value("observations", nlohmann::json::object())};
  return out;
}

/// What a cell of built-in cases recorded that a variable can change: its effective
/// configuration (binding, stream 0, the raw values of the variables it read). A suite's or a
/// program's cell is judged by what its package bound instead (variable_effects.cpp).
struct evidence_kind {
  [[nodiscard]] bool has(const record_index &index, const std::string &id) const {
    return index.cells.count(id) > 0;
  }
  /// Whether two cells with evidence did anything differently.
  [[nodiscard]] bool differ(const record_index &index, const cell &a, const cell &b) const {
    if (config_of(index.cells.at(a.id)) != config_of(index.cells.at(b.id)))
      return true;
    // A variable the driver reads (a fault to inject) changes outcomes or observations only.
    return results_of(index, a.id) != results_of(index, b.id);
  }
};

/// The pairs of cells with evidence that differ in `var` alone: how many, the first, and whether
/// one of them did anything differently.
struct pair_scan {
  std::size_t pairs = 0;
  const cell *first_a = nullptr, *first_b = nullptr;
  bool changed = false;
};

pair_scan scan_pairs(const matrix &m, const record_index &index, const evidence_kind &kind,
                     const std::string &var) {
  pair_scan out;
  for (std::size_t i = 0; i < m.cells.size() && !out.changed; ++i)
    for (std::size_t j = i + 1; j < m.cells.size() && !out.changed; ++j) {
      const cell &a = m.cells[i], &b = m.cells[j];
      if (!kind.has(index, a.id) || !kind.has(index, b.id) || !differ_only_in(a, b, var))
        continue;
      if (out.pairs++ == 0)
        out.first_a = &a, out.first_b = &b;
      out.changed = kind.differ(index, a, b);
    }
  return out;
}

std::string shown_value(const env_value &v) {
  return v ? "\"" + *v + "\"" : "unset";
}

std::string written_at(const matrix &m, const std::string &var) {
  const auto it = m.variable_at.find(var);
  return it == m.variable_at.end() ? "" : " (written at " + it->second.text() + ")";
}

/// "N pair(s) of cells differ in it alone and <same> (first: 'a' with "0" and 'b' with unset)".
std::string noop_text(const matrix &m, const std::string &var, bool captured, std::size_t pairs,
                      const cell &a, const cell &b) {
  return var + " changed nothing" + written_at(m, var) + ": " +
         (captured ? "the package does not read it. " : "nothing in the run reads it. ") +
         std::to_string(pairs) + " pair(s) of cells differ in it alone and " +
         (captured ? "bound the same symbols and ended every test alike"
                   : "have the same effective configuration and ended and observed every case "
                     "alike") +
         " (first: '" + a.id + "' with " + shown_value(a.env.at(var)) + " and '" + b.id +
         "' with " + shown_value(b.env.at(var)) + "). " + closest_known_variable_text(var) +
         "; if it is meant to change nothing, say why in [matrix] " + "inert = { " + var +
         " = \"...\" }";
}

const cell &cell_named(const matrix &m, const std::string &id) {
  return *std::find_if(m.cells.begin(), m.cells.end(), [&](const cell &c) { return c.id == id; });
}

/// Built-in cases with no pair to compare: nothing in the run is known to read the variable, and
/// some cell ran to show what it read (a misspelt variable beside others, as in a copy of
/// smoke.toml whose cells differ in several variables at once).
bool unread_without_pairs(const matrix &m, const record_index &index) {
  return std::any_of(m.cells.begin(), m.cells.end(),
                     [&](const cell &c) { return index.cells.count(c.id) > 0; });
}

std::string unread_text(const matrix &m, const std::string &var) {
  return var + " changed nothing" + written_at(m, var) +
         ": nothing in the run is known to read it, and no two cells that ran differ in it "
         "alone to show otherwise. " +
         closest_known_variable_text(var) +
         "; if it is meant to change nothing, say why in [matrix] " + "inert = { " + var +
         " = \"...\" }";
}

/// The packages axis of a matrix whose Python probe processes or [[benchmark]]s run under each
/// cell's package set: they import those packages (the Python probe records their versions), which
/// built-in cases never do, so no case record can show the axis read.
bool packages_read_outside_cases(const matrix &m, const std::string &var) {
  if (!m.packages || var != m.packages->axis)
    return false;
  const auto &l = m.latency;
  const bool python_probes =
      l.enabled && (!l.python_probes.empty() || (l.python && l.probes.empty()));
  return python_probes || !m.benchmarks.empty();
}

/// Suites and programs: a variable no pair shows their package read, by what each bound and how
/// each ended (variable_effects.cpp), whatever else reads it.
void report_captured_noops(const matrix &m, const record_index &index, comparison &out) {
  out.variable_effects = variable_effects_of(m, index);
  for (const auto &e : *out.variable_effects) {
    // A package may ignore even cuparity's own variables; the driver, the shim and the simulated
    // driver act where no captured map shows it (a fault changes outcomes only, a delay nothing).
    const auto reader = known_reader(e.variable);
    if (reader && *reader != variable_reader::configuration)
      continue;
    // The packages axis chooses the package itself: versions that bind alike are a finding of the
    // report (variable_effects), not a variable nobody reads.
    if (m.packages && e.variable == m.packages->axis)
      continue;
    if (e.inert || e.pairs == 0 || !e.bindings.empty() || e.outcome_pairs > 0)
      continue;
    out.problems.push_back({"no_op_configuration", "", "",
                            noop_text(m, e.variable, true, e.pairs, cell_named(m, e.first_a),
                                      cell_named(m, e.first_b))});
  }
}

} // namespace

void report_noop_variables(const matrix &m, const record_index &index, comparison &out) {
  if (!m.suites.empty())
    return report_captured_noops(m, index, out);
  const evidence_kind kind;
  for (const auto &var : m.variables) {
    // cuparity's own configuration reads its variables in every cell of built-in cases and records
    // their raw values; the driver, the shim and the simulated driver act where the records may
    // not show it (a delay moves a latency only).
    if (known_reader(var))
      continue;
    if (packages_read_outside_cases(m, var))
      continue;
    const pair_scan s = scan_pairs(m, index, kind, var);
    if (m.inert.count(var) || s.changed)
      continue;
    if (s.pairs > 0)
      out.problems.push_back({"no_op_configuration", "", "",
                              noop_text(m, var, false, s.pairs, *s.first_a, *s.first_b)});
    else if (unread_without_pairs(m, index))
      out.problems.push_back({"no_op_configuration", "", "", unread_text(m, var)});
  }
}

} // namespace cuparity::verdict
