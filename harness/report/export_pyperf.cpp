// pyperf's JSON: a suite of benchmarks, each of runs of values, with metadata at each level.
#include "harness/report/export_pyperf.hpp"

#include <map>
#include <utility>

namespace cuparity {
namespace {

using json = nlohmann::json;

/// pyperf refuses a metadata string that is empty or holds a line break (parse_metadata).
void put(json &metadata, const char *key, const std::string &value) {
  if (!value.empty() && value.find_first_of("\r\n") == std::string::npos)
    metadata[key] = value;
}

/// A figure's value in seconds, as pyperf's unit "second" wants it (lower is better).
double seconds(const std::string &unit, double v) {
  if (unit == "ns")
    return v / 1e9; // exact ns and 1e9: the nearest double to the value in seconds
  if (unit == "GB/s")
    return v > 0 ? 1.0 / v : 0;
  return v; // "s"
}

json suite_metadata(const export_run &run) {
  const auto &c = run.context;
  json m = json::object();
  put(m, "cuparity_matrix", c.matrix);
  put(m, "cuparity_gpu", c.gpu);
  put(m, "cuparity_driver_release", c.driver_release);
  put(m, "cuparity_driver_version", c.driver_version);
  put(m, "cuparity_revision", c.revision);
  put(m, "cuparity_source", c.source);
  m["cuparity_simulated"] = c.simulated ? "true" : "false";
  // summary.json's latency.probes[].samples are the rounds' latency_sample values: the same in a
  // run directory and in a committed run that kept only its summary.
  m["cuparity_values"] = "per-round samples of summary.json latency.probes[].samples; "
                         "functional phase: functional_wall_s";
  if (!c.started.empty()) { // pyperf reads dates with datetime.fromisoformat
    auto date = c.started;
    if (date.size() > 10 && date[10] == 'T')
      date[10] = ' ';
    if (!date.empty() && date.back() == 'Z')
      date.pop_back();
    m["date"] = date;
  }
  return m;
}

std::string unit_note(const std::string &unit) {
  return unit == "GB/s" ? "s per GB (1 / GB/s)" : unit;
}

} // namespace

json pyperf_json(const export_run &run, bool context_in_names) {
  json benchmarks = json::array();
  std::map<std::pair<std::string, std::string>, std::size_t> facade; // (cell, probe) -> index
  std::size_t left_out = 0, paired_left_out = 0;
  for (const auto &f : run.figures) {
    if (f.kind == figure_kind::paired_ratio)
      continue;
    json values = json::array();
    for (const double v :
         f.kind == figure_kind::functional_phase ? std::vector{f.value} : f.samples)
      if (const double s = seconds(f.unit, v); s > 0)
        values.push_back(s);
      else
        ++left_out;
    if (values.empty())
      continue;
    json meta = {{"name", figure_name(run, f, context_in_names)}, {"unit", "second"}};
    put(meta, "cuparity_cell", f.cell);
    put(meta, "cuparity_probe", f.probe);
    put(meta, "cuparity_series", f.series);
    put(meta, "cuparity_unit", unit_note(f.unit));
    if (f.series == "facade")
      facade[{f.cell, f.probe}] = benchmarks.size();
    benchmarks.push_back({{"metadata", meta}, {"runs", json::array({{{"values", values}}})}});
  }
  for (const auto &f : run.figures) {
    if (f.kind != figure_kind::paired_ratio)
      continue;
    const auto it = facade.find({f.cell, f.probe});
    if (it == facade.end()) {
      ++paired_left_out;
      continue;
    }
    auto &meta = benchmarks[it->second]["metadata"];
    meta["cuparity_paired_ratio"] = f.value;
    meta["cuparity_paired_ci_low"] = *f.lower;
    meta["cuparity_paired_ci_high"] = *f.upper;
    put(meta, "cuparity_paired_verdict", f.verdict);
  }
  json suite = {{"version", "1.0"}, {"metadata", suite_metadata(run)}, {"benchmarks", benchmarks}};
  if (left_out > 0)
    suite["metadata"]["cuparity_values_left_out"] = left_out;
  if (paired_left_out > 0)
    suite["metadata"]["cuparity_paired_left_out"] = paired_left_out;
  return suite;
}

} // namespace cuparity
