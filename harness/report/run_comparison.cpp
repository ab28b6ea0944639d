// Run B against run A: the functional rules of verdict/ and the latency rule of latency/.
#include "harness/report/run_comparison.hpp"

#include "harness/latency/latency_rule.hpp"
#include "harness/protocol/exit_codes.hpp"

#include <algorithm>
#include <map>

namespace cuparity {
namespace {

void note_series_in_one_run(const std::string &probe, const recorded_probe &a,
                            const recorded_probe &b, std::vector<std::string> &notes) {
  for (const auto &[series, values] : a.samples)
    if (!b.samples.count(series))
      notes.push_back("probe " + probe + " series " + series + " only in A");
  for (const auto &[series, values] : b.samples)
    if (!a.samples.count(series))
      notes.push_back("probe " + probe + " series " + series + " only in B");
}

void compare_probes(const recorded_run &a, const recorded_run &b, const latency_settings &l,
                    run_comparison &out) {
  for (const auto &[probe, pb] : b.latency) {
    auto pa = a.latency.find(probe);
    if (pa == a.latency.end()) {
      out.notes.push_back("probe " + probe + " only in B");
      continue;
    }
    if (pa->second.unit != pb.unit) {
      out.notes.push_back("probe " + probe + " is in " + pa->second.unit + " in A and " + pb.unit +
                          " in B: not compared");
      continue;
    }
    const auto rule = rule_for(l, probe, pb.unit);
    for (auto &change : compare_across_runs(probe, pa->second.samples, pb.samples, rule))
      out.latency.push_back({std::move(change), pb.unit});
    note_series_in_one_run(probe, pa->second, pb, out.notes);
  }
  for (const auto &[probe, pa] : a.latency)
    if (!b.latency.count(probe))
      out.notes.push_back("probe " + probe + " only in A");
}

std::string first_pair(const result_change &r) {
  return "cell '" + r.cell + "', case '" + r.case_id + "'";
}

/// The reasons a comparison of A and B cannot vouch for every pair.
std::vector<std::string> incompleteness(const recorded_run &a, const recorded_run &b,
                                        const std::vector<result_change> &outcomes) {
  std::vector<std::string> out;
  for (const recorded_run *r : {&a, &b}) {
    const char *name = r == &a ? "A" : "B";
    if (r->header.verdict == "incomplete" || (r->coverage && !r->coverage->complete()))
      out.push_back(std::string("run ") + name + " is incomplete" +
                    (r->coverage ? ": " + coverage_message(*r->coverage) : std::string()));
  }
  if (b.results.empty())
    out.push_back("run B has no results");
  std::size_t missing = 0;
  const result_change *first = nullptr;
  for (const auto &r : outcomes)
    if (r.change == outcome_change::missing && !missing++)
      first = &r;
  if (missing)
    out.push_back(std::to_string(missing) +
                  " pairs of A have no result in B (first: " + first_pair(*first) + ")");
  return out;
}

} // namespace

std::size_t run_comparison::count(outcome_change c) const {
  return static_cast<std::size_t>(std::count_if(
      outcomes.begin(), outcomes.end(), [c](const result_change &r) { return r.change == c; }));
}

std::size_t run_comparison::slower() const {
  return static_cast<std::size_t>(
      std::count_if(latency.begin(), latency.end(),
                    [](const latency_change &l) { return l.change.regression(); }));
}

std::size_t run_comparison::unexcused_regressions() const {
  return static_cast<std::size_t>(
      std::count_if(outcomes.begin(), outcomes.end(), [](const result_change &r) {
        return r.change == outcome_change::regression && r.known.empty();
      }));
}

bool run_comparison::regressed() const {
  return unexcused_regressions() > 0 || !divergences.added.empty() || slower() > 0;
}

const char *run_comparison::verdict() const {
  return regressed() ? "regressed" : complete() ? "no regression" : "incomplete";
}

/// Per (cell, case) recorded in both runs, every observation that differs; configuration cases
/// describe the environment (a driver path, a warning) and are left out, as in a run's verdict.
std::vector<reference_change> observation_changes(const std::vector<run_result> &a,
                                                  const std::vector<run_result> &b) {
  std::map<std::pair<std::string, std::string>, const run_result *> in_a;
  for (const auto &r : a)
    in_a[{r.cell, r.case_id}] = &r;
  std::vector<reference_change> out;
  for (const auto &r : b) {
    const auto it = in_a.find({r.cell, r.case_id});
    if (it == in_a.end() || is_configuration_case(r.case_id))
      continue;
    const nlohmann::json before{{"case", r.case_id}, {"observations", it->second->observations}};
    const nlohmann::json after{{"case", r.case_id}, {"observations", r.observations}};
    for (auto &c : case_changes(r.cell, r.cell, before, after))
      out.push_back(std::move(c));
  }
  return out;
}

/// provenance.packages.cells of a run: cell id -> {value, others, distributions}.
nlohmann::json package_cells(const run_header &h) {
  const nlohmann::json none = nlohmann::json::object();
  if (!h.provenance.is_object() || !h.provenance.contains("packages"))
    return none;
  const nlohmann::json &p = h.provenance["packages"];
  return p.is_object() && p.contains("cells") && p["cells"].is_object() ? p["cells"] : none;
}

/// B's cells that A lacks, each with the one cell of A (that B lacks) whose other variables are
/// the same and whose packages value is another: comparing package versions runs each version in
/// a run of its own, and their cell ids differ by that value alone.
std::map<std::string, std::string> package_partners(const run_header &a, const run_header &b) {
  const nlohmann::json ca = package_cells(a), cb = package_cells(b);
  std::map<std::string, std::string> out;
  for (const auto &[bid, bc] : cb.items()) {
    if (ca.contains(bid) || !bc.is_object())
      continue;
    std::vector<std::string> found;
    for (const auto &[aid, ac] : ca.items())
      if (!cb.contains(aid) && ac.is_object() && ac.value("others", "") == bc.value("others", "") &&
          ac.value("value", nlohmann::json()) != bc.value("value", nlohmann::json()))
        found.push_back(aid);
    if (found.size() == 1)
      out[bid] = found.front();
  }
  return out;
}

/// B with its paired cells' results under A's cell ids, so that outcomes pair up; each pairing
/// is a note.
recorded_run paired_with(const recorded_run &b, const std::map<std::string, std::string> &partners,
                         std::vector<std::string> &notes) {
  recorded_run out = b;
  for (auto &r : out.results)
    if (const auto it = partners.find(r.cell); it != partners.end())
      r.cell = it->second;
  for (const auto &[bid, aid] : partners)
    notes.push_back("cell '" + bid + "' of B compared with cell '" + aid +
                    "' of A: they differ by their packages value alone");
  return out;
}

/// Binding-map changes per cell both runs mapped (a paired cell against its partner); a run
/// without results.jsonl gives a note.
void compare_bindings(const recorded_run &a, const recorded_run &b,
                      const std::map<std::string, std::string> &partners, run_comparison &out) {
  for (const auto *r : {&a, &b})
    if (!r->binding_maps && !r->results_path.empty()) // a summary read from a file without one
      out.notes.push_back("binding maps not compared: no " + r->results_path);
  if (!a.binding_maps || !b.binding_maps)
    return;
  out.bindings_compared = true;
  for (const auto &[cell, map_b] : *b.binding_maps) {
    const auto partner = partners.find(cell);
    const std::string in_a = partner == partners.end() ? cell : partner->second;
    if (const auto it = a.binding_maps->find(in_a); it != a.binding_maps->end())
      for (auto &c : binding_changes(cell, in_a, it->second, map_b))
        out.bindings.push_back(std::move(c));
  }
}

/// Marks each outcome change a known change accepts with its reason.
void apply_known_outcomes(std::vector<result_change> &outcomes,
                          const std::vector<known_change> &known) {
  for (auto &r : outcomes)
    for (const auto &k : known) {
      if (k.key != "outcome" || k.case_id != r.case_id || (k.cell && *k.cell != r.cell))
        continue;
      const nlohmann::json after = r.b ? nlohmann::json(std::string(to_string(*r.b))) : nullptr;
      if (k.after && *k.after != after)
        continue;
      r.known = k.reason;
      break;
    }
}

run_comparison compare_runs(const recorded_run &a, const recorded_run &b,
                            const latency_settings &latency,
                            const std::vector<known_change> &known) {
  run_comparison out;
  out.a = a.header;
  out.b = b.header;
  const auto partners = package_partners(a.header, b.header);
  const recorded_run b_paired = paired_with(b, partners, out.notes);
  out.outcomes = compare_outcomes(a.results, b_paired.results);
  apply_known_outcomes(out.outcomes, known);
  out.divergences = compare_divergences(a.divergences, b.divergences);
  out.observations = observation_changes(a.results, b_paired.results);
  compare_bindings(a, b, partners, out);
  // A binding change a known change lists ("binding.<function>") carries its reason; binding
  // changes are reported, never judged, so an entry matching none is not an error here.
  (void)apply_known_changes(out.bindings, known);
  out.incomplete = incompleteness(a, b, out.outcomes);
  if (a.has_latency && b.has_latency)
    compare_probes(a, b, latency, out);
  else if (a.has_latency || b.has_latency)
    out.notes.push_back(std::string("latency only in ") + (a.has_latency ? "A" : "B") +
                        ": no latency comparison");
  return out;
}

int compare_exit_code(const run_comparison &c) {
  return c.regressed() || !c.complete() ? exit_code::failures : exit_code::ok;
}

} // namespace cuparity
