// The latency summary: statistics per series, backend-vs-backend comparisons, facade overhead,
// the noise block and the comparison with a baseline run (docs/latency.md).
#include "harness/latency/latency_summary.hpp"

#include "harness/latency/latency_rule.hpp"
#include "harness/latency/latency_samples.hpp"
#include "harness/latency/latency_stats.hpp"
#include "harness/latency/paired_summary.hpp"
#include "harness/latency/python_path.hpp"
#include "harness/latency/recorded_latency.hpp"
#include "harness/latency/run_vs_run_latency.hpp"
#include "harness/protocol/records.hpp"
#include "harness/verdict/compare.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>

namespace cuparity {
namespace {

using json = nlohmann::json;

/// The probe without driver calls (cases/probes.cpp): its spread is the host's, not a binding's.
constexpr const char *reference_probe = "host.cpu_reference";

/// The records the summary reads, indexed the ways it reads them.
struct latency_records {
  probe_samples samples;                                                ///< values in record order
  std::map<std::string, std::pair<std::string, std::string>> kind_unit; ///< probe -> kind, unit
  /// cell -> semantic group, from what each cell's process decided (functional or probe process)
  std::map<std::string, std::string> cell_group;
  std::map<std::string, std::string> cell_backend; ///< cell -> the binding its process used
  /// The same for the cell's Python probe process (its `latency_cell` has process "python"):
  /// what its py.* probes are grouped and compared by, since Numba may fall back to ctypes.
  std::map<std::string, std::string> python_group, python_backend;
  int rounds = 0;                   ///< one past the highest round of any sample
  json environment = json::array(); ///< the latency_environment records, less their type
  json errors = json::array();      ///< the latency_error records, less their type
};

void add_sample(latency_records &out, const json &r) {
  out.rounds = std::max(out.rounds, r.value("round", 0) + 1);
  if (!r.contains("value"))
    return;
  const std::string probe = r.value("probe", "");
  const std::string series = series_name(r.value("cell", ""), r.value("series", "facade"));
  const double value = r["value"].get<double>();
  out.samples[probe][series].push_back(value);
  out.kind_unit[probe] = {r.value("kind", "host"), r.value("unit", "ns")};
}

latency_records index_records(const std::vector<json> &records) {
  latency_records out;
  for (const auto &r : records) {
    if (is_record(r, record_type::latency_sample)) {
      add_sample(out, r);
    } else if (is_record(r, record_type::latency_environment) ||
               is_record(r, record_type::latency_error)) {
      auto e = r;
      e.erase("type");
      (is_record(r, record_type::latency_error) ? out.errors : out.environment).push_back(e);
    } else if ((is_record(r, record_type::cell) || is_record(r, record_type::latency_cell)) &&
               r.contains("config")) {
      const bool python = r.value("process", "") == "python";
      (python ? out.python_group : out.cell_group)[r.value("cell", "")] = semantic_key(r["config"]);
      if (r["config"].is_object())
        (python ? out.python_backend : out.cell_backend)[r.value("cell", "")] =
            r["config"].value("binding", "");
    }
  }
  return out;
}

/// The arrays of the summary, filled probe by probe.
struct summary_parts {
  json probes = json::array(), stats = json::array(), comparisons = json::array(),
       baseline = json::array();
  bool failed = false;
};

void add_series_stats(json &stats, const std::string &probe, const series_samples &series) {
  for (const auto &[name, values] : series)
    stats.push_back({{"probe", probe},
                     {"series", name},
                     {"median", median(values)},
                     {"cv", coefficient_of_variation(values)},
                     {"rcv", robust_cv(values)},
                     {"n", values.size()}});
}

/// Backend against backend across processes: every pair of cells of different bindings inside a
/// semantic group, in matrix order. Either direction is a difference between the backends, so
/// with fail_on_regression both slower and faster fail.
void compare_backends(const matrix &m, const std::string &probe, const series_samples &series,
                      const comparison_rule &rule, const latency_records &rec,
                      summary_parts &parts) {
  // py.* probes ran in the Python probe process: its binding is what they measured.
  const bool python = probe.rfind("py.", 0) == 0;
  const auto &groups = python ? rec.python_group : rec.cell_group;
  const auto &backends = python ? rec.python_backend : rec.cell_backend;
  const auto group = [&](const std::string &cell) {
    auto it = groups.find(cell);
    return it == groups.end() ? std::optional<std::string>{} : it->second;
  };
  const auto backend = [&](const std::string &cell) {
    auto it = backends.find(cell);
    return it == backends.end() ? std::string{} : it->second;
  };
  for (std::size_t i = 0; i < m.cells.size(); ++i)
    for (std::size_t j = i + 1; j < m.cells.size(); ++j) {
      const auto &a = m.cells[i].id, &b = m.cells[j].id;
      if (!series.count(a) || !series.count(b) || !group(a) || group(a) != group(b) ||
          backend(a) == backend(b))
        continue;
      auto v = compare_samples(series.at(a), series.at(b), rule);
      auto j_v = verdict_json(v, rule);
      j_v["probe"] = probe, j_v["group"] = *group(a), j_v["a"] = a, j_v["b"] = b;
      j_v["a_backend"] = backend(a), j_v["b_backend"] = backend(b);
      parts.comparisons.push_back(j_v);
      parts.failed = parts.failed || (m.latency.fail_on_regression &&
                                      (v.verdict == "slower" || v.verdict == "faster"));
    }
}

/// The A/A control of a [[benchmark]] with `control`: in every cell, the series `control:<cell>`
/// (a second process in the same rounds) against the cell's own, by the cross-process rule. It
/// must read same; slower or faster is the method's noise, and fails as a difference would.
void compare_controls(const matrix &m, const std::string &probe, const series_samples &series,
                      const comparison_rule &rule, const latency_records &rec,
                      summary_parts &parts) {
  for (const auto &c : m.cells) {
    const std::string control = series_name(c.id, "control");
    if (!series.count(c.id) || !series.count(control))
      continue;
    const auto v = compare_samples(series.at(c.id), series.at(control), rule);
    auto j_v = verdict_json(v, rule);
    const auto group = rec.cell_group.find(c.id);
    const auto backend = rec.cell_backend.find(c.id);
    j_v["probe"] = probe, j_v["a"] = c.id, j_v["b"] = control, j_v["control"] = true;
    j_v["group"] = group == rec.cell_group.end() ? "" : group->second;
    j_v["a_backend"] = j_v["b_backend"] = backend == rec.cell_backend.end() ? "" : backend->second;
    parts.comparisons.push_back(j_v);
    parts.failed = parts.failed || (m.latency.fail_on_regression &&
                                    (v.verdict == "slower" || v.verdict == "faster"));
  }
}

/// This run against a previous one (its summary.json), series by series: the run-vs-run rule
/// (run_vs_run_latency.hpp). The baseline was checked when it was read (read_summary).
void compare_with_baseline(const json *baseline, const latency_settings &l,
                           const std::string &probe, const series_samples &series,
                           const comparison_rule &rule, summary_parts &parts) {
  if (!baseline || !baseline->contains("latency") || !(*baseline)["latency"].is_object())
    return;
  const auto before = read_recorded_latency((*baseline)["latency"]);
  auto it = before.find(probe);
  if (it == before.end())
    return;
  for (const auto &change : compare_across_runs(probe, it->second.samples, series, rule)) {
    parts.baseline.push_back(baseline_row(change));
    parts.failed = parts.failed || (l.fail_on_regression && change.regression());
  }
}

/// Noise: which series spread more than the matrix's target over the rounds (robust CV, as the
/// stopping rule), read against the driver-free reference probe measured in the same rounds.
json noise_block(const json &stats, double target_cv) {
  json over_target = json::array(), reference = nullptr;
  for (const auto &st : stats) {
    const double rcv = st["rcv"], cv = st["cv"];
    if (st["probe"] == reference_probe) {
      if (reference.is_null())
        reference = {{"probe", reference_probe}, {"rcv_max", rcv}, {"cv_max", cv}};
      reference["rcv_max"] = std::max(reference["rcv_max"].get<double>(), rcv);
      reference["cv_max"] = std::max(reference["cv_max"].get<double>(), cv);
    }
    if (rcv > target_cv)
      over_target.push_back(
          {{"probe", st["probe"]}, {"series", st["series"]}, {"rcv", rcv}, {"cv", cv}});
  }
  return {{"target_cv", target_cv}, {"over_target", over_target}, {"reference", reference}};
}

} // namespace

json latency_summary(const matrix &m, const std::vector<json> &records, const json *baseline,
                     bool &failed) {
  failed = false;
  latency_records rec = index_records(records);
  const bool any_pairs = std::any_of(records.begin(), records.end(), [](const json &r) {
    return is_record(r, record_type::latency_pairs);
  });
  if (rec.samples.empty() && !any_pairs && rec.errors.empty())
    return nullptr;
  const auto &l = m.latency;
  summary_parts parts;
  for (const auto &[probe, series] : rec.samples) {
    const auto &[kind, unit] = rec.kind_unit[probe];
    const auto rule = rule_for(l, probe, unit);
    parts.probes.push_back({{"name", probe},
                            {"kind", kind},
                            {"unit", unit},
                            {"lower_is_better", rule.lower_is_better},
                            {"samples", series}});
    add_series_stats(parts.stats, probe, series);
    compare_backends(m, probe, series, rule, rec, parts);
    compare_controls(m, probe, series, rule, rec, parts);
    compare_with_baseline(baseline, l, probe, series, rule, parts);
  }
  paired_blocks paired = paired_summary(l, records);
  failed = parts.failed || (l.fail_on_regression && paired.differs);
  const auto &environment = rec.environment;
  return {{"schema", "cuparity.latency/2"},
          {"rounds", rec.rounds},
          {"environment", environment.empty() ? json::object() : environment.front()},
          {"environment_rounds", environment},
          {"probes", parts.probes},
          {"stats", parts.stats},
          {"comparisons", parts.comparisons},
          {"overhead", paired.overhead},
          {"paired", paired.paired},
          {"floors", paired.floors},
          // What the Python call path costs above cuparity's C++ one, per operation and binding.
          {"python_path", python_path_rows(rec.samples, rec.python_backend, rec.cell_backend,
                                           1 - comparison_rule{}.alpha)},
          {"noise", noise_block(parts.stats, l.target_cv)},
          // Probe processes that could not start or run in a cell, named (a Python process
          // whose interpreter or a required module is missing).
          {"errors", rec.errors},
          {"baseline", parts.baseline},
          // The thresholds these verdicts were judged with, so a later `cuparity compare` of
          // this run judges by them too.
          {"settings",
           {{"regression_threshold", l.regression_threshold},
            {"paired_threshold", l.paired_threshold},
            {"thresholds", l.thresholds}}}};
}

} // namespace cuparity
