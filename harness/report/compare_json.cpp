// cuparity.compare/1: the run-vs-run comparison as JSON, for the Python reports and for CI.
#include "harness/report/run_comparison.hpp"
#include "harness/verdict/divergence_changes.hpp"

#include <cmath>

namespace cuparity {
namespace {

using json = nlohmann::json;

/// NaN and infinities (a ratio over a zero median) are written as null, never as bad JSON.
json number(double v) {
  return std::isfinite(v) ? json(v) : json(nullptr);
}

json header_json(const run_header &h) {
  return {{"source", h.source},       {"verdict", h.verdict},
          {"exit_code", h.exit_code}, {"git_revision", h.git_revision},
          {"started", h.started},     {"simulated", h.simulated}};
}

json outcome_json(const std::optional<outcome> &o) {
  return o ? json(std::string(to_string(*o))) : json(nullptr);
}

json outcomes_json(const run_comparison &c) {
  json out = json::array();
  for (const auto &r : c.outcomes)
    if (r.change != outcome_change::unchanged)
      out.push_back({{"cell", r.cell},
                     {"case", r.case_id},
                     {"change", std::string(to_string(r.change))},
                     {"outcome_a", outcome_json(r.a)},
                     {"outcome_b", outcome_json(r.b)},
                     {"message_b", r.message_b},
                     {"known", r.known.empty() ? json(nullptr) : json(r.known)}});
  return out;
}

json bindings_json(const run_comparison &c) {
  json out = json::array();
  for (const auto &ch : c.bindings)
    out.push_back({{"cell", ch.cell},
                   {"cell_a", ch.reference},
                   {"key", ch.key},
                   {"a", ch.before},
                   {"b", ch.after},
                   {"known", ch.known.empty() ? json(nullptr) : json(ch.known)}});
  return out;
}

json observations_json(const run_comparison &c) {
  json out = json::array();
  for (const auto &ch : c.observations)
    out.push_back({{"cell", ch.cell},
                   {"case", ch.case_id},
                   {"key", ch.key},
                   {"a", ch.before},
                   {"b", ch.after}});
  return out;
}

json divergence_list(const std::vector<divergence> &list) {
  json out = json::array();
  for (const auto &d : list)
    out.push_back({{"identity", divergence_identity(d)},
                   {"case", d.case_id},
                   {"key", d.key},
                   {"place", divergence_place(d.group)},
                   {"group", d.group},
                   {"values", d.values}});
  return out;
}

json latency_json(const latency_change &l) {
  const auto &c = l.change;
  const auto &v = c.verdict;
  return {{"probe", c.probe},
          {"series", c.series},
          {"unit", l.unit},
          {"median_a", number(v.median_a)},
          {"median_b", number(v.median_b)},
          {"ratio", number(v.ratio.ratio)},
          {"ci_low", number(v.ratio.low)},
          {"ci_high", number(v.ratio.high)},
          {"p_value", number(v.p_value)},
          {"mde", number(v.mde)},
          {"verdict", v.verdict},
          {"threshold", c.rule.threshold},
          {"lower_is_better", c.rule.lower_is_better},
          {"n_a", c.n_a},
          {"n_b", c.n_b}};
}

} // namespace

nlohmann::json compare_json(const run_comparison &c) {
  json counts = json::object();
  for (auto change : all_outcome_changes)
    counts[std::string(to_string(change))] = c.count(change);
  json latency = json::array();
  for (const auto &l : c.latency)
    latency.push_back(latency_json(l));
  return {{"schema", compare_schema},
          {"a", header_json(c.a)},
          {"b", header_json(c.b)},
          {"regressed", c.regressed()},
          {"complete", c.complete()},
          {"incomplete", c.incomplete},
          {"verdict", c.verdict()},
          {"exit_code", compare_exit_code(c)},
          {"counts", counts},
          {"outcomes", outcomes_json(c)},
          {"observations", observations_json(c)},
          {"bindings", bindings_json(c)},
          {"bindings_compared", c.bindings_compared},
          {"divergences",
           {{"new", divergence_list(c.divergences.added)},
            {"gone", divergence_list(c.divergences.gone)}}},
          {"latency", latency},
          {"slower", c.slower()},
          {"notes", c.notes}};
}

} // namespace cuparity
