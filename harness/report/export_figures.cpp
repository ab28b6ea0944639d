// The figures of a run for `cuparity export`, from summary.json as read_recorded_run checked it.
#include "harness/report/export_figures.hpp"

#include "harness/io/input_file.hpp"
#include "harness/io/json_input.hpp"
#include "harness/latency/latency_stats.hpp"
#include "harness/report/summary_reader.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

namespace cuparity {
namespace {

using json = nlohmann::json;

/// Between a name's parts: cell ids hold '/' (a driver path), ',', '=' and ':', never this.
const std::string sep = " | ";

std::string string_of(const json &provenance, const char *name) {
  const auto it = provenance.find(name);
  return it != provenance.end() && it->is_string() ? it->get<std::string>() : "";
}

/// provenance.gpus as one label: "NVIDIA H200", "2x NVIDIA H200", or distinct names joined by
/// " + " (a host of mixed GPUs); "" when none is recorded.
std::string gpu_label(const json &provenance) {
  const auto it = provenance.find("gpus");
  if (it == provenance.end() || !it->is_array() || it->empty())
    return "";
  std::vector<std::string> names;
  for (const auto &g : *it)
    if (g.is_string())
      names.push_back(g.get<std::string>());
  if (names.empty())
    return "";
  if (std::all_of(names.begin(), names.end(), [&](const auto &n) { return n == names.front(); }))
    return names.size() == 1 ? names.front() : std::to_string(names.size()) + "x " + names.front();
  std::string out;
  for (const auto &n : names)
    out += (out.empty() ? "" : " + ") + n;
  return out;
}

export_context context_of(const recorded_run &run, const json &summary) {
  export_context c;
  c.source = run.header.source;
  c.results_path = run.results_path;
  const auto &m = member(summary, "", "matrix", json_kind::object);
  c.matrix = member(m, "matrix", "name", json_kind::string).get<std::string>();
  const auto &p = run.header.provenance.is_object() ? run.header.provenance : json::object();
  c.gpu = gpu_label(p);
  c.driver_release = string_of(p, "driver_release");
  c.driver_version = string_of(p, "driver_version_text");
  c.revision = run.header.git_revision;
  c.started = run.header.started;
  c.simulated = run.header.simulated;
  return c;
}

/// A series name split into its cell and what it times: "direct:<cell>" (this backend's raw
/// pointer), "other:<cell>" (the other backend's pointer), "cupy:<cell>" and "cuda_core:<cell>"
/// (the Python probe's library series), else the cell itself (the facade).
std::pair<std::string, std::string> split_series(const std::string &series) {
  for (const char *prefix : {"direct", "other", "cupy", "cuda_core"}) {
    const std::string p = std::string(prefix) + ":";
    if (series.rfind(p, 0) == 0)
      return {series.substr(p.size()), prefix};
  }
  return {series, "facade"};
}

/// Each series: the median of its rounds (the figure latency.stats[] gives) within the fastest
/// and slowest round.
void add_latency(const recorded_run &run, const std::string &matrix, export_run &out) {
  for (const auto &[probe, recorded] : run.latency)
    for (const auto &[series, values] : recorded.samples) {
      if (values.empty())
        continue;
      export_figure f;
      f.kind = figure_kind::latency_series;
      std::tie(f.cell, f.series) = split_series(series);
      f.probe = probe;
      f.name = matrix + sep + f.cell + sep + probe + sep + f.series;
      f.unit = recorded.unit;
      f.value = median(values);
      f.lower = *std::min_element(values.begin(), values.end());
      f.upper = *std::max_element(values.begin(), values.end());
      f.samples = values;
      out.figures.push_back(std::move(f));
    }
}

/// latency.paired[]: nvidia / internal in one process, within its 99 % interval.
void add_paired(const json &summary, const std::string &matrix, export_run &out) {
  const auto *lat = optional_member(summary, "", "latency", json_kind::object);
  const auto *paired = lat ? optional_member(*lat, "latency", "paired", json_kind::array) : nullptr;
  if (!paired)
    return;
  for (std::size_t i = 0; i < paired->size(); ++i) {
    const auto &row = (*paired)[i];
    const auto path = element_path("latency.paired", i);
    require_kind(row, path, json_kind::object);
    export_figure f;
    f.kind = figure_kind::paired_ratio;
    f.cell = member(row, path, "cell", json_kind::string).get<std::string>();
    f.probe = member(row, path, "probe", json_kind::string).get<std::string>();
    f.verdict = member(row, path, "verdict", json_kind::string).get<std::string>();
    if (f.verdict == "not_measured") {
      ++out.not_measured;
      continue;
    }
    f.series = "nvidia/internal";
    f.name = matrix + sep + f.cell + sep + f.probe + sep + "paired-nvidia-internal";
    f.unit = "ratio";
    f.value = member(row, path, "ratio", json_kind::number).get<double>();
    f.lower = member(row, path, "ci_low", json_kind::number).get<double>();
    f.upper = member(row, path, "ci_high", json_kind::number).get<double>();
    out.figures.push_back(std::move(f));
  }
}

/// A dashboard keys by name: two figures of one name would be one (BMF keeps the last, pyperf
/// refuses the file). Only ids or probe names holding " | " can collide.
void check_distinct(const export_run &run) {
  std::set<std::string> seen;
  for (const auto &f : run.figures)
    if (!seen.insert(f.name).second)
      throw json_input_error("latency", "two figures would be named '" + f.name +
                                            "' (a cell id or probe name holds \"" + sep + "\")");
}

export_run figures_of(const recorded_run &run, const json &summary) {
  export_run out;
  out.context = context_of(run, summary);
  if (const auto *wall = optional_member(summary, "", "functional_wall_s", json_kind::number)) {
    export_figure f;
    f.kind = figure_kind::functional_phase;
    f.name = out.context.matrix + sep + "functional-phase";
    f.unit = "s";
    f.value = wall->get<double>();
    out.figures.push_back(std::move(f));
  }
  add_latency(run, out.context.matrix, out);
  add_paired(summary, out.context.matrix, out);
  check_distinct(out);
  return out;
}

} // namespace

export_run read_export_run(const std::string &path) {
  const auto run = read_recorded_run(path); // the whole summary checked, as compare reads it
  const auto &file = run.header.source;
  json summary;
  try {
    summary = read_json_file(file);
  } catch (const bad_input_error &e) { // changed since it was read
    throw summary_input_error(file, "", std::string(e.what()).substr(file.size() + 2));
  }
  try {
    return figures_of(run, summary);
  } catch (const json_input_error &e) {
    const std::string what = e.what();
    throw summary_input_error(file, e.path(), what.substr(e.path().size() + 2));
  }
}

std::string driver_label(const export_context &c) {
  if (!c.driver_release.empty())
    return c.driver_release;
  return c.driver_version.empty() ? "unknown" : "CUDA " + c.driver_version;
}

std::string figure_name(const export_run &run, const export_figure &f, bool with_context) {
  if (!with_context)
    return f.name;
  const auto &c = run.context;
  return f.name + " [" + (c.gpu.empty() ? "unknown GPU" : c.gpu) + ", driver " + driver_label(c) +
         ", " + (c.revision.empty() ? "unknown revision" : c.revision.substr(0, 12)) + "]";
}

} // namespace cuparity
