// Calibration: cells with delays injected by the fault shim, the latency phase, the paired
// verdicts.
#include "harness/run/calibrate.hpp"

#include "harness/config/config.hpp"
#include "harness/config/env_vars.hpp"
#include "harness/latency/latency_phase.hpp"
#include "harness/platform/self_exe.hpp"
#include "harness/protocol/exit_codes.hpp"
#include "harness/protocol/output_file.hpp"
#include "harness/protocol/records.hpp"
#include "harness/suite/probe_registry.hpp"

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <ostream>
#include <sstream>

namespace cuparity {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr const char *shim_target = "CUPARITY_SHIM_TARGET";
constexpr const char *shim_faults = "CUPARITY_SHIM_FAULTS";

/// One calibration cell: its delay and the path it slows ("" for the A/A cell).
struct delay_cell {
  std::string id, path;
  double pct = 0;
  long ns = 0;
  std::string faults;
};

/// The fault spec that slows `path` by `ns` for every symbol. The dlsym path keeps the proc path
/// clean explicitly, so it reads the same under the shim and the simulated driver.
std::string fault_spec(const calibrate_options &o, const std::string &path, long ns) {
  std::string spec;
  for (const auto &sym : o.symbols) {
    const auto add = [&](const std::string &item) { spec += (spec.empty() ? "" : ";") + item; };
    add(sym + ":delay_ns=" + std::to_string(ns) + "@" + path);
    if (path == "dlsym")
      add(sym + ":delay_ns=0@proc");
  }
  return spec;
}

matrix calibration_matrix(const calibrate_options &o, const std::string &shim,
                          const std::vector<delay_cell> &cells, int rounds) {
  matrix m;
  m.name = "calibrate";
  m.variables = {var::driver,     shim_target,          shim_faults, var::use_nvidia_binding,
                 var::numba_ptds, var::cuda_python_ptds};
  for (const auto &d : cells) {
    cell c;
    c.id = c.label = d.id;
    c.env = {{var::driver, shim},     {shim_target, o.target},
             {shim_faults, d.faults}, {var::use_nvidia_binding, "0"},
             {var::numba_ptds, "0"},  {var::cuda_python_ptds, "0"}};
    m.cells.push_back(std::move(c));
  }
  m.latency.enabled = true;
  m.latency.probes = {o.probe};
  m.latency.rounds = m.latency.max_rounds = rounds;
  m.latency.min_time_s = o.min_time_s;
  return m;
}

/// Runs the cells' probes and returns the latency summary of what they recorded.
json run_cells(const calibrate_options &o, const matrix &m, const std::string &name) {
  const std::string results_path = o.out_dir + "/" + name + ".jsonl";
  fs::remove(results_path);
  {
    results_writer results(results_path);
    const std::atomic<bool> stop{false};
    run_latency_phase(m, {o.gpu, o.out_dir + "/logs", 0}, results, stop);
  }
  const auto file = read_results(results_path);
  bool failed = false;
  return latency_summary(m, file.records, nullptr, failed);
}

const json *paired_for(const json &summary, const std::string &cell) {
  if (!summary.is_object())
    return nullptr;
  for (const auto &p : summary["paired"])
    if (p.value("cell", "") == cell)
      return &p;
  return nullptr;
}

/// The probe's cost per call through the internal backend's raw pointer, in ns (0 if unmeasured).
double probe_cost(const json &summary, const std::string &cell) {
  if (!summary.is_object())
    return 0;
  for (const auto &st : summary["stats"])
    if (st.value("series", "") == "direct:" + cell)
      return st.value("median", 0.0);
  return 0;
}

/// What a delay on `path` should read: nvidia over internal is slower when nvidia's path (proc)
/// is slowed, faster when internal's (dlsym) is.
std::string expected(const std::string &path) {
  return path == "proc" ? "slower" : "faster";
}

void print_row(std::ostream &out, const delay_cell &d, const json *p) {
  out << "  " << std::left << std::setw(14) << d.id << std::right << std::setw(7) << d.ns
      << " ns  ";
  if (!p || !p->contains("ratio")) {
    out << (p ? p->value("reason", "not measured") : "no result") << "\n";
    return;
  }
  out << std::fixed << std::setprecision(4) << "x" << (*p)["ratio"].get<double>() << " ("
      << (*p)["ci_low"].get<double>() << ".." << (*p)["ci_high"].get<double>() << ") p "
      << std::setprecision(4) << (*p)["p_value"].get<double>() << "  " << std::setw(9)
      << p->value("verdict", "") << std::defaultfloat << "\n";
}

/// Why the options cannot be used ("" when they can).
std::string check_options(const calibrate_options &o, const std::string &shim) {
  if (o.out_dir.empty())
    return "--out: a directory is needed for calibrate.json and the probe results";
  std::error_code ec;
  if (fs::exists(fs::symlink_status(o.out_dir, ec)) && !fs::is_directory(o.out_dir, ec))
    return "--out " + o.out_dir +
           ": not a directory; calibrate writes calibrate.json and the "
           "probe results into one";
  if (!probe_registry::instance().matches_any(o.probe))
    return "--probe " + o.probe + ": names no probe (see `cuparity probe --list`)";
  if (!fs::is_regular_file(shim))
    return "--shim: " + shim + " is not a file (build the fault shim, or name it with --shim)";
  if (o.delays_pct.empty())
    return "--delays: at least one delay is needed";
  for (double d : o.delays_pct)
    if (!(d > 0 && d <= 100))
      return "--delays: " + std::to_string(d) + " is not a percentage in (0, 100]";
  if (o.symbols.empty())
    return "--symbol: at least one exported symbol is needed";
  return "";
}

std::vector<delay_cell> delay_cells(const calibrate_options &o, double cost_ns) {
  std::vector<delay_cell> cells{{"aa", "", 0, 0, ""}};
  for (const char *path : {"proc", "dlsym"})
    for (double pct : o.delays_pct) {
      delay_cell d;
      d.path = path;
      d.pct = pct;
      d.ns = std::max(1L, std::lround(cost_ns * pct / 100));
      std::ostringstream id;
      id << path << "+" << pct << "%";
      d.id = id.str();
      d.faults = fault_spec(o, path, d.ns);
      cells.push_back(std::move(d));
    }
  return cells;
}

json row_json(const delay_cell &d, const json *p) {
  json row = {{"cell", d.id},
              {"path", d.path.empty() ? "none" : d.path},
              {"delay_pct", d.pct},
              {"delay_ns", d.ns},
              {"faults", d.faults}};
  if (p)
    for (const char *k : {"ratio", "ci_low", "ci_high", "p_value", "mde", "verdict", "pairs",
                          "same_address", "reason"})
      if (p->contains(k))
        row[k] = (*p)[k];
  return row;
}

} // namespace

int calibrate(const calibrate_options &o, std::ostream &out) {
  const std::string shim =
      o.shim.empty() ? companion_library(executable_dir(), "libcuparity_fault_shim.so") : o.shim;
  if (const std::string why = check_options(o, shim); !why.empty()) {
    std::cerr << "cuparity calibrate: " << why << "\n";
    return exit_code::bad_input;
  }
  fs::create_directories(o.out_dir + "/logs");
  // The probe's cost without faults, through the shim: the delays are fractions of it.
  const std::vector<delay_cell> base{{"cost", "", 0, 0, ""}};
  const json first = run_cells(o, calibration_matrix(o, shim, base, 1), "cost");
  const double cost = probe_cost(first, "cost");
  if (cost <= 0) {
    out << "cuparity calibrate: the probe " << o.probe << " gave no measurement through " << shim
        << " in front of " << o.target << " (see " << o.out_dir << "/logs/latency.log)\n";
    return exit_code::environment;
  }
  const auto cells = delay_cells(o, cost);
  const json summary = run_cells(o, calibration_matrix(o, shim, cells, o.rounds), "results");
  out << "calibrate: " << o.probe << " costs " << cost << " ns per call through " << o.target
      << "; delays into " << o.symbols.front() << (o.symbols.size() > 1 ? " and others" : "")
      << "; nvidia / internal, paired:\n";
  json rows = json::array(), smallest = {{"proc", nullptr}, {"dlsym", nullptr}};
  bool aa_clean = false, largest_seen = true;
  for (const auto &d : cells) {
    const json *p = paired_for(summary, d.id);
    print_row(out, d, p);
    rows.push_back(row_json(d, p));
    const std::string verdict = p ? p->value("verdict", "") : "";
    if (d.path.empty()) {
      aa_clean = p && (verdict == "same" || verdict == "ambiguous");
      continue;
    }
    const bool seen = verdict == expected(d.path);
    if (seen && smallest[d.path].is_null())
      smallest[d.path] = {{"delay_pct", d.pct}, {"delay_ns", d.ns}};
    if (d.pct == o.delays_pct.back())
      largest_seen = largest_seen && seen;
  }
  for (const char *path : {"proc", "dlsym"})
    out << "  smallest delay read on the " << path
        << " path: " << (smallest[path].is_null() ? "none" : smallest[path].dump()) << "\n";
  out << "  A/A: " << (aa_clean ? "neither slower nor faster" : "READS A DIFFERENCE") << "\n";
  const json report = {{"schema", "cuparity.calibrate/1"},
                       {"probe", o.probe},
                       {"symbols", o.symbols},
                       {"target", o.target},
                       {"shim", shim},
                       {"cost_ns", cost},
                       {"rounds", o.rounds},
                       {"min_time_s", o.min_time_s},
                       {"rows", rows},
                       {"smallest", smallest},
                       {"aa_clean", aa_clean}};
  write_output_file(o.out_dir + "/calibrate.json", report.dump(2) + "\n");
  return aa_clean && largest_seen ? exit_code::ok : exit_code::failures;
}

} // namespace cuparity
