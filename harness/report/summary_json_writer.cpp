// summary.json's sections, each from the matrix, the records or the comparison.
#include "harness/report/summary_json_writer.hpp"

#include "harness/report/breakdown.hpp"
#include "harness/report/record_view.hpp"
#include "harness/report/summary.hpp"

namespace cuparity {
namespace {

using json = nlohmann::json;

/// A matrix cell with what its process reported; "config" is null for a cell that never started.
json cell_entry(const cell &mc, const std::map<std::string, cell_view> &cells,
                const comparison &c) {
  json env = json::object();
  for (const auto &[k, v] : mc.env)
    env[k] = v ? json(*v) : json(nullptr);
  json entry{{"id", mc.id}, {"label", mc.label}, {"env", env}};
  auto it = cells.find(mc.id);
  if (it == cells.end()) {
    entry["config"] = nullptr;
    return entry;
  }
  const json &rec = it->second.record;
  entry["config"] = it->second.started ? rec.value("config", json::object()) : json(nullptr);
  entry["device"] = rec.value("device", "");
  entry["startup_ms"] = rec.value("startup_ms", json::object());
  entry["group"] = group_of(c, mc.id);
  entry["counts"] = outcome_counts(it->second);
  return entry;
}

json cells_section(const matrix &m, const std::map<std::string, cell_view> &cells,
                   const comparison &c) {
  json out = json::array();
  for (const auto &mc : m.cells)
    out.push_back(cell_entry(mc, cells, c));
  return out;
}

json groups_section(const comparison &c) {
  json out = json::array();
  for (const auto &[key, members] : c.groups)
    out.push_back({{"key", key}, {"cells", members}});
  return out;
}

json divergences_section(const comparison &c) {
  json out = json::array();
  for (const auto &d : c.divergences) {
    json bindings = json::array();
    for (const auto &b : d.bindings)
      bindings.push_back(
          {{"function", b.function}, {"cells", b.cells}, {"same_symbols", b.same_symbols}});
    out.push_back({{"group", d.group},
                   {"case", d.case_id},
                   {"key", d.key},
                   {"values", d.values},
                   {"bindings", bindings}});
  }
  return out;
}

/// null without a reference; the changes are listed in full (a candidate driver that changes
/// everything is exactly what this section is for).
json changes_section(const matrix &m, const comparison &c) {
  if (!m.reference)
    return nullptr;
  json reference = json::object();
  for (const auto &[k, v] : m.reference->values)
    reference[k] = v ? json(*v) : json(nullptr);
  json list = json::array();
  for (const auto &ch : c.changes)
    list.push_back({{"cell", ch.cell},
                    {"reference", ch.reference},
                    {"case", ch.case_id},
                    {"key", ch.key},
                    {"before", ch.before},
                    {"after", ch.after},
                    {"known", ch.known.empty() ? json(nullptr) : json(ch.known)}});
  json stale = json::array();
  for (const auto &k : c.stale_known)
    stale.push_back({{"cell", k.cell ? json(*k.cell) : json(nullptr)},
                     {"case", k.case_id},
                     {"key", k.key},
                     {"after", k.after ? *k.after : json(nullptr)},
                     {"reason", k.reason},
                     {"where", k.where.text()}});
  json pairs = json::array();
  for (const auto &p : reference_pairs(m))
    pairs.push_back({{"cell", p.c->id}, {"reference", p.reference->id}});
  return {{"reference", reference},
          {"fail_on_change", m.fail_on_change},
          {"pairs", pairs},
          {"count", c.changes.size()},
          {"changes", list},
          {"known_changes", m.known_changes_path ? json(*m.known_changes_path) : json(nullptr)},
          {"stale_known", stale}};
}

json env_json(const env_value &v) {
  return v ? json(*v) : json(nullptr);
}

/// Suites and programs: per matrix variable, the functions it changed the bindings of; null for a
/// matrix of built-in cases (its cells' configurations tell that).
json variables_section(const comparison &c) {
  if (!c.variable_effects)
    return nullptr;
  json out = json::array();
  for (const auto &e : *c.variable_effects) {
    json bindings = json::array();
    for (const auto &b : e.bindings)
      bindings.push_back({{"suite", b.suite},
                          {"function", b.function},
                          {"cells", {b.cell_a, b.cell_b}},
                          {"values", {env_json(b.value_a), env_json(b.value_b)}},
                          {"before", b.a},
                          {"after", b.b},
                          {"same_symbols", b.same_symbols},
                          {"pairs", b.pairs}});
    out.push_back({{"variable", e.variable},
                   {"pairs", e.pairs},
                   {"first", e.pairs ? json{e.first_a, e.first_b} : json(nullptr)},
                   {"outcome_pairs", e.outcome_pairs},
                   {"inert", e.inert ? json(*e.inert) : json(nullptr)},
                   {"bindings", bindings}});
  }
  return out;
}

/// Suites and programs: per (cell, suite), what its end recorded (docs/formats.md); null for a
/// matrix of built-in cases.
json suites_section(const comparison &c) {
  if (!c.suites)
    return nullptr;
  json out = json::array();
  for (const auto &s : *c.suites) {
    json environment = nullptr, budget = nullptr;
    if (s.environment)
      environment = {{"message", s.environment->message},
                     {"count", s.environment->count},
                     {"stopped", s.environment->stopped},
                     {"not_run", s.environment->not_run}};
    if (s.budget)
      budget = {{"max_fails", s.budget->max_fails},
                {"failures", s.budget->failures},
                {"not_run", s.budget->not_run}};
    out.push_back({{"cell", s.cell},
                   {"suite", s.suite},
                   {"program", s.program},
                   {"error", s.error ? json(*s.error) : json(nullptr)},
                   {"collected", s.collected ? json(*s.collected) : json(nullptr)},
                   {"tests", s.tests},
                   {"process_count", s.process_count},
                   {"wall_ms", s.wall_ms ? json(*s.wall_ms) : json(nullptr)},
                   {"environment", environment},
                   {"budget", budget}});
  }
  return out;
}

json problems_section(const comparison &c) {
  json out = json::array();
  for (const auto &p : c.problems)
    out.push_back(
        {{"kind", p.kind}, {"cell", p.cell}, {"case", p.case_id}, {"message", p.message}});
  return out;
}

json results_section(const std::map<std::string, cell_view> &cells) {
  json out = json::array();
  for (const auto &[cell_id, view] : cells)
    for (const auto &[case_id, rec] : view.cases) {
      json r = {{"cell", cell_id},
                {"case", case_id},
                {"outcome", rec.value("outcome", "error")},
                {"message", rec.value("message", "")},
                {"duration_ms", rec.value("duration_ms", 0.0)},
                {"observations", rec.value("observations", json::object())}};
      // The declared requirement behind a not_supported (docs/verdicts.md#requirements).
      if (const auto q = rec.find("requirement"); q != rec.end() && q->is_string())
        r["requirement"] = *q;
      out.push_back(std::move(r));
    }
  return out;
}

/// The matrix as read: `digest` tells two files of one name apart.
json matrix_section(const matrix &m) {
  return {{"name", m.name}, {"path", m.path}, {"description", m.description}, {"digest", m.digest}};
}

} // namespace

nlohmann::json make_summary(const matrix &m, const std::vector<nlohmann::json> &records,
                            const comparison &c, const run_facts &facts) {
  const auto cells = by_cell(records);
  const int code = verdict_exit_code(c, facts);
  return {{"schema", summary_schema},
          {"provenance", facts.provenance},
          {"matrix", matrix_section(m)},
          {"started", facts.started},
          {"finished", facts.finished},
          {"shard", facts.shard},
          {"functional_wall_s", facts.functional_wall_s},
          {"counts", c.outcome_counts},
          {"results_count", c.results},
          {"allowed", c.allowed},
          {"flaky_excused", c.flaky_excused},
          {"cells", cells_section(m, cells, c)},
          {"groups", groups_section(c)},
          {"divergences", divergences_section(c)},
          {"problems", problems_section(c)},
          {"variables", variables_section(c)},
          {"suites", suites_section(c)},
          {"changes", changes_section(m, c)},
          {"results", results_section(cells)},
          {"coverage", coverage_json(c.coverage)},
          {"breakdown", breakdown_json(breakdown_of(records, facts.functional_wall_s))},
          {"latency", facts.latency},
          {"verdict", verdict_name(c, facts)},
          {"exit_code", code}};
}

std::string summary_json_writer::text(const run_outputs &run) const {
  return make_summary(run.m, run.records, run.verdict, run.facts).dump(2) + "\n";
}

} // namespace cuparity
