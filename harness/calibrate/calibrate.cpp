// Calibration: cells with delays injected by the fault shim, the latency phase, the paired
// verdicts.
#include "harness/calibrate/calibrate.hpp"

#include "harness/config/config.hpp"
#include "harness/config/env_vars.hpp"
#include "harness/io/output_file.hpp"
#include "harness/latency/latency_phase.hpp"
#include "harness/matrix/python_probes.hpp"
#include "harness/platform/self_exe.hpp"
#include "harness/probes/probe_registry.hpp"
#include "harness/protocol/exit_codes.hpp"
#include "harness/protocol/records.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <link.h>
#include <ostream>
#include <sstream>

namespace cuparity {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr const char *shim_target = "CUPARITY_SHIM_TARGET";
constexpr const char *shim_faults = "CUPARITY_SHIM_FAULTS";
constexpr const char *python_other_variable = "CUPARITY_PYPROBE_OTHER";
constexpr const char *python_delay_variable = "CUPARITY_PYPROBE_DELAY_NS";
/// The py.* probes' third path: cuda.bindings' own call path, slowed by the Python probe's spin
/// wrapper (no driver symbol can slow it alone: its pointers are cuGetProcAddress's, as the
/// ctypes `proc` series' are). Its cells are `bindings+<pct>%` and the A/A `aa-bindings`.
constexpr const char *bindings_path = "bindings";

/// One calibration cell: its delay and the path it slows ("" for the A/A cell).
struct delay_cell {
  std::string id, path;
  double pct = 0;
  long ns = 0;
  std::string faults;
  double actual_pct = 0; ///< what `ns` is of the probe's cost (delays are whole ns)
  cell_env env;
  double actual_ns = -1; ///< the bindings path's spin as the probe measured it (-1: none) ///< over
                         ///< the calibration's own variables (the bindings path's)
};

/// The Python probe process's variables for a cell of the bindings path: cuda.bindings twice,
/// `ns` of spin before each of direct's calls.
cell_env bindings_env(long ns) {
  return {{python_other_variable, bindings_path},
          {python_delay_variable, std::to_string(ns)},
          {var::use_nvidia_binding, "1"}};
}

/// A delay as the user wrote it (5, 0.5), not std::to_string's 5.000000.
std::string number_text(double d) {
  std::ostringstream s;
  s << d;
  return s.str();
}

/// One probe's calibration: its name and the exported symbols its delays go into.
struct probe_target {
  std::string probe;
  std::vector<std::string> symbols;
};

/// The fault spec that slows `path` by `ns` for every symbol. The dlsym path keeps the proc path
/// clean explicitly, so it reads the same under the shim and the simulated driver.
std::string fault_spec(const probe_target &t, const std::string &path, long ns) {
  std::string spec;
  for (const auto &sym : t.symbols) {
    const auto add = [&](const std::string &item) { spec += (spec.empty() ? "" : ";") + item; };
    add(sym + ":delay_ns=" + std::to_string(ns) + "@" + path);
    if (path == "dlsym")
      add(sym + ":delay_ns=0@proc");
  }
  return spec;
}

matrix calibration_matrix(const calibrate_options &o, const std::string &probe,
                          const std::string &shim, const std::vector<delay_cell> &cells,
                          int rounds) {
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
    // A py.* probe's other series is ctypes again, through the pointer cuGetProcAddress hands
    // out: one call path, two resolutions, as the C++ probe's backends (docs/latency.md).
    if (is_python_probe(probe)) {
      c.env[python_other_variable] = "proc";
      c.env[python_delay_variable] = std::nullopt;
    }
    for (const auto &[name, value] : d.env)
      c.env[name] = value;
    m.cells.push_back(std::move(c));
  }
  if (is_python_probe(probe)) {
    m.variables.push_back(python_other_variable);
    m.variables.push_back(python_delay_variable);
  }
  m.latency.enabled = true;
  m.latency.probes = {probe};
  if (is_python_probe(probe)) { // the Python probe process alone
    m.latency.python_probes = {probe};
    m.latency.python_interpreter = o.python;
  } else {
    m.latency.native_probes = {probe};
  }
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

/// The exported symbols the probe bound in the cost run (empty when it bound none).
std::vector<std::string> bound_symbols(const std::string &results_path, const std::string &probe) {
  std::vector<std::string> out;
  for (const auto &r : read_results(results_path).records)
    if (is_record(r, record_type::latency_pairs) && r.value("probe", "") == probe &&
        r.contains("symbols") && r["symbols"].is_array()) {
      for (const auto &s : r["symbols"])
        if (s.is_string() && std::find(out.begin(), out.end(), s) == out.end())
          out.push_back(s);
    }
  return out;
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
/// is slowed, faster when internal's (dlsym) is. On the bindings path both series are nvidia and
/// the ratio is direct over other: the delayed direct reads slower.
std::string expected(const std::string &path) {
  return path == "dlsym" ? "faster" : "slower";
}

/// What the Python probe measured its spin to cost per call in `cell` (its cell_start config's
/// delay_actual_ns), or a negative number where it did not say.
double spin_actual_ns(const std::string &results_path, const std::string &cell) {
  for (const auto &r : read_results(results_path).records)
    if (is_record(r, record_type::latency_cell) && r.value("cell", "") == cell &&
        r.contains("config") && r["config"].is_object()) {
      const json &v = r["config"].value("delay_actual_ns", json(nullptr));
      if (v.is_number())
        return v.get<double>();
    }
  return -1;
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

/// Why --out cannot take this calibration ("" when it can): not a folder, a cuparity run's folder
/// (the probe results and logs/ would mix with its files), an earlier calibration unless --force.
std::string check_out_dir(const calibrate_options &o) {
  if (o.out_dir.empty())
    return "--out: a directory is needed for calibrate.json and the probe results";
  std::error_code ec;
  if (fs::exists(fs::symlink_status(o.out_dir, ec)) && !fs::is_directory(o.out_dir, ec))
    return "--out " + o.out_dir +
           ": not a directory; calibrate writes calibrate.json and the "
           "probe results into one";
  for (const char *f : {"results.jsonl", "summary.json", "junit.xml"})
    if (fs::exists(fs::symlink_status(o.out_dir + "/" + f, ec)))
      return "--out " + o.out_dir + ": holds a cuparity run (" + f +
             "); calibrate would write among its files: choose another folder";
  const std::string earlier = o.out_dir + "/calibrate.json";
  if (!o.force && fs::exists(fs::symlink_status(earlier, ec)))
    return earlier + ": an earlier calibration; add --force to replace it, or choose another --out";
  return "";
}

/// Why a --symbol cannot take a delay ("" when it can): the shim delays only the symbols it
/// exports, and a symbol the target lacks is never called through it.
std::string check_symbol(const std::string &sym, const std::string &target) {
  static const std::vector<std::string> exported{
#define CUPARITY_EXPORTED_SYMBOL(name) #name,
#include "harness/driver/exported_symbols.inl"
#undef CUPARITY_EXPORTED_SYMBOL
  };
  if (std::find(exported.begin(), exported.end(), sym) == exported.end())
    return "--symbol '" + sym +
           "': not a symbol the driver exports (exported names such as cuLaunchKernel)";
  // A target that does not open is reported by the cost run (no measurement, exit 3). Left
  // open: the probes open the same library, and a driver is not unloaded midway.
  if (void *h = dlopen(target.c_str(), RTLD_LAZY | RTLD_LOCAL); h && !dlsym(h, sym.c_str()))
    return "--symbol '" + sym + "': not exported by the driver " + target;
  return "";
}

/// Why the options cannot be used ("" when they can).
std::string check_options(const calibrate_options &o, const std::string &shim) {
  if (std::string why = check_out_dir(o); !why.empty())
    return why;
  if (o.probes.empty())
    return "--probe: at least one probe is needed";
  for (const auto &probe : o.probes)
    if (!is_python_probe(probe) && probe_registry::instance().select({probe}).size() != 1)
      return "--probe " + probe + ": names no single probe (see `cuparity probe --list`, and " +
             "the py.* probes of docs/latency.md#the-python-path)";
  if (!fs::is_regular_file(shim))
    return "--shim: " + shim + " is not a file (build the fault shim, or name it with --shim)";
  if (o.delays_pct.empty())
    return "--delays: at least one delay is needed";
  for (std::size_t i = 0; i < o.delays_pct.size(); ++i) {
    const double d = o.delays_pct[i];
    if (!(d > 0 && d <= 100))
      return "--delays: " + std::to_string(d) + " is not a percentage in (0, 100]";
    // The largest delay is the last: it decides the exit, and each cell is named by its delay.
    if (i > 0 && !(d > o.delays_pct[i - 1]))
      return "--delays: " + number_text(d) + " after " + number_text(o.delays_pct[i - 1]) +
             ": give the delays ascending, each once";
  }
  for (const auto &sym : o.symbols) {
    if (sym.empty() || sym.find_first_of(":;@= ") != std::string::npos)
      return "--symbol '" + sym + "': not an exported symbol name";
    if (std::string why = check_symbol(sym, o.target); !why.empty())
      return why;
  }
  return "";
}

/// The A/A and delay cells. `bindings_ns` > 0 (a py.* probe whose cuda.bindings path was
/// measured, at that cost per call) adds that path's A/A and delays, each a share of its own cost.
std::vector<delay_cell> delay_cells(const calibrate_options &o, const probe_target &t,
                                    double cost_ns, double bindings_ns) {
  std::vector<delay_cell> cells{{"aa", "", 0, 0, "", 0, {}}};
  if (bindings_ns > 0)
    cells.push_back({"aa-bindings", "", 0, 0, "", 0, bindings_env(0)});
  for (const char *path : {"proc", "dlsym", bindings_path}) {
    const bool bindings = std::string(path) == bindings_path;
    const double cost = bindings ? bindings_ns : cost_ns;
    if (cost <= 0)
      continue;
    for (double pct : o.delays_pct) {
      delay_cell d;
      d.path = path;
      d.pct = pct;
      d.ns = std::max(1L, std::lround(cost * pct / 100));
      d.actual_pct = 100.0 * static_cast<double>(d.ns) / cost; // whole ns: 1 ns of 11 is 9 %
      std::ostringstream id;
      id << path << "+" << pct << "%";
      d.id = id.str();
      if (bindings)
        d.env = bindings_env(d.ns);
      else
        d.faults = fault_spec(t, path, d.ns);
      cells.push_back(std::move(d));
    }
  }
  return cells;
}

json row_json(const delay_cell &d, const json *p) {
  json row = {{"cell", d.id},
              {"path", d.path.empty() ? "none" : d.path},
              {"delay_pct", d.pct},
              {"delay_ns", d.ns},
              {"actual_pct", d.actual_pct},
              {"actual_ns", d.actual_ns < 0 ? json(nullptr) : json(d.actual_ns)},
              {"faults", d.faults}};
  if (p)
    for (const char *k : {"ratio", "ci_low", "ci_high", "p_value", "mde", "verdict", "pairs",
                          "same_address", "reason"})
      if (p->contains(k))
        row[k] = (*p)[k];
  return row;
}

/// The run's method floor for the probe (its A/A cell's reach), or null when unmeasured.
json floor_of(const json &summary, const std::string &probe) {
  if (summary.is_object() && summary.contains("floors"))
    for (const auto &f : summary["floors"])
      if (f.value("probe", "") == probe)
        return f;
  return nullptr;
}

/// What one probe's calibration found.
struct probe_result {
  json report;
  bool ok = false;
  bool measured = false;
};

/// Reads each cell's paired verdict: the rows, the smallest delay seen per path, the A/As (each
/// must read neither slower nor faster).
probe_result read_delays(const calibrate_options &o, const std::vector<delay_cell> &cells,
                         const json &summary, std::ostream &out) {
  probe_result r;
  json rows = json::array(), smallest = {{"proc", nullptr}, {"dlsym", nullptr}};
  bool aa_clean = true, largest_seen = true;
  for (const auto &d : cells)
    if (d.path == bindings_path)
      smallest[bindings_path] = nullptr;
  for (const auto &d : cells) {
    const json *p = paired_for(summary, d.id);
    print_row(out, d, p);
    rows.push_back(row_json(d, p));
    const std::string verdict = p ? p->value("verdict", "") : "";
    if (d.path.empty()) {
      aa_clean = aa_clean && p && (verdict == "same" || verdict == "ambiguous");
      continue;
    }
    const bool seen = verdict == expected(d.path);
    if (seen && smallest[d.path].is_null())
      smallest[d.path] = {{"delay_pct", d.pct}, {"delay_ns", d.ns}, {"actual_pct", d.actual_pct}};
    if (d.pct == o.delays_pct.back())
      largest_seen = largest_seen && seen;
  }
  for (const char *path : {"proc", "dlsym", bindings_path})
    if (smallest.contains(path))
      out << "  smallest delay read on the " << path
          << " path: " << (smallest[path].is_null() ? "none" : smallest[path].dump()) << "\n";
  out << "  A/A: " << (aa_clean ? "neither slower nor faster" : "READS A DIFFERENCE") << "\n";
  r.report = {{"rows", rows}, {"smallest", smallest}, {"aa_clean", aa_clean}};
  r.ok = aa_clean && largest_seen;
  return r;
}

/// The cuda.bindings path's cost per call from the cost run's `cost-bindings` cell; 0 when it
/// gave none, `why` then naming the probe process's error where it wrote one.
double bindings_cost(const json &first, std::string &why) {
  if (const double c = probe_cost(first, "cost-bindings"); c > 0)
    return c;
  why = "no measurement";
  if (first.is_object() && first.contains("errors") && first["errors"].is_array())
    for (const auto &e : first["errors"])
      if (e.is_object() && e.value("cell", "") == "cost-bindings")
        return why = e.value("message", why), 0;
  return 0;
}

/// The bindings path's rows with the spin each probe process measured (its actual delay).
void read_spins(std::vector<delay_cell> &cells, const std::string &results_path, double cost) {
  for (auto &d : cells)
    if (d.path == bindings_path && (d.actual_ns = spin_actual_ns(results_path, d.id)) >= 0)
      d.actual_pct = 100 * d.actual_ns / cost;
}

/// One probe: its cost and symbols without faults, then the A/A and delay cells.
probe_result calibrate_probe(const calibrate_options &o, const std::string &probe,
                             const std::string &shim, std::ostream &out) {
  probe_result r;
  const std::string stem =
      is_python_probe(probe) ? probe : probe_registry::instance().select({probe}).front()->name;
  std::vector<delay_cell> base{{"cost", "", 0, 0, "", 0, {}}};
  if (is_python_probe(stem))
    base.push_back({"cost-bindings", "", 0, 0, "", 0, bindings_env(0)});
  const json first = run_cells(o, calibration_matrix(o, stem, shim, base, 1), stem + ".cost");
  const double cost = probe_cost(first, "cost");
  std::string bindings_why;
  const double bindings_ns = is_python_probe(stem) ? bindings_cost(first, bindings_why) : 0;
  probe_target t{stem, o.symbols.empty()
                           ? bound_symbols(o.out_dir + "/" + stem + ".cost.jsonl", stem)
                           : o.symbols};
  if (cost <= 0 || t.symbols.empty()) {
    out << "cuparity calibrate: the probe " << stem
        << (cost <= 0 ? " gave no measurement" : " bound no driver symbol to delay") << " through "
        << shim << " in front of " << o.target << " (see " << o.out_dir << "/logs/latency.log)\n";
    r.report = {{"probe", stem}, {"error", cost <= 0 ? "no measurement" : "no symbol"}};
    return r;
  }
  r.measured = true;
  auto cells = delay_cells(o, t, cost, bindings_ns);
  const json summary =
      run_cells(o, calibration_matrix(o, stem, shim, cells, o.rounds), stem + ".results");
  read_spins(cells, o.out_dir + "/" + stem + ".results.jsonl", bindings_ns);
  std::string syms;
  for (const auto &sym : t.symbols)
    syms += (syms.empty() ? "" : ", ") + sym;
  out << "calibrate: " << stem << " costs " << cost << " ns per call through " << o.target
      << "; delays into " << syms << "; nvidia / internal, paired:\n";
  if (is_python_probe(stem))
    out << "  bindings path: "
        << (bindings_ns > 0 ? "cuda.bindings costs " + number_text(bindings_ns) +
                                  " ns per call; its delays are the probe's spin before each of "
                                  "direct's calls (bindings+N%, aa-bindings: direct / other)"
                            : "not calibrated: " + bindings_why)
        << "\n";
  const json floor = floor_of(summary, stem);
  if (floor.is_object())
    out << "  method floor: " << std::setprecision(3) << 100 * floor.value("floor", 0.0) << "% ("
        << floor.value("floor_ns", 0.0) << " ns) from the A/A cell\n"
        << std::defaultfloat;
  r = read_delays(o, cells, summary, out);
  r.measured = true;
  r.report.update({{"probe", stem},
                   {"symbols", t.symbols},
                   {"cost_ns", cost},
                   {"bindings_cost_ns", bindings_ns > 0 ? json(bindings_ns) : json(nullptr)},
                   {"floor", floor.is_object() ? floor["floor"] : json(nullptr)},
                   {"floor_ns", floor.is_object() ? floor["floor_ns"] : json(nullptr)}});
  if (!bindings_why.empty())
    r.report["bindings_error"] = bindings_why;
  return r;
}

/// The driver file `target` names, as the dynamic linker finds it: the Python probe puts the
/// shim first on LD_LIBRARY_PATH as libcuda.so.1 (for cuda.bindings, which opens that name), so
/// the shim's own target must be a path, or it would find itself. Unchanged when it does not open
/// (the cost run then says so).
std::string driver_file(const std::string &target) {
  if (target.find('/') != std::string::npos)
    return target;
  void *h = dlopen(target.c_str(), RTLD_LAZY | RTLD_LOCAL);
  link_map *map = nullptr;
  if (h && dlinfo(h, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name)
    return map->l_name; // left open: a driver is not unloaded midway
  return target;
}

} // namespace

int calibrate(const calibrate_options &options, std::ostream &out) {
  calibrate_options o = options;
  if (std::any_of(o.probes.begin(), o.probes.end(), is_python_probe))
    o.target = driver_file(o.target);
  const std::string shim =
      o.shim.empty() ? companion_library(executable_dir(), "libcuparity_fault_shim.so") : o.shim;
  if (const std::string why = check_options(o, shim); !why.empty()) {
    std::cerr << "cuparity calibrate: " << why << "\n";
    return exit_code::bad_input;
  }
  fs::create_directories(o.out_dir + "/logs");
  json probes = json::array();
  bool ok = true, measured = true;
  for (const auto &probe : o.probes) {
    probe_result r = calibrate_probe(o, probe, shim, out);
    ok = ok && r.ok;
    measured = measured && r.measured;
    probes.push_back(std::move(r.report));
  }
  const json report = {{"schema", "cuparity.calibrate/2"},
                       {"target", o.target},
                       {"shim", shim},
                       {"rounds", o.rounds},
                       {"min_time_s", o.min_time_s},
                       {"probes", probes}};
  write_output_file(o.out_dir + "/calibrate.json", report.dump(2) + "\n");
  if (!measured)
    return exit_code::environment;
  return ok ? exit_code::ok : exit_code::failures;
}

} // namespace cuparity
