// `cuparity calibrate`: what the paired latency verdict can see on this host, by injected delays.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace cuparity {

struct calibrate_options {
  std::string shim;                    ///< the fault shim library ("" = beside the executable)
  std::string target = "libcuda.so.1"; ///< the driver the shim forwards to
  std::vector<std::string> probes{"launch.empty_kernel"}; ///< each calibrated on its own
  /// Exported symbols the delay goes into; empty: each probe's own (the symbols it bound).
  std::vector<std::string> symbols;
  std::vector<double> delays_pct{0.5, 1, 2, 3, 5}; ///< of the probe's cost, per call
  double min_time_s = 0.5;                         ///< per series per round
  int rounds = 2;                 ///< rounds over all delay cells (order reversed each round)
  std::string out_dir;            ///< calibrate.json, results.jsonl, logs/
  std::string gpu;                ///< CUDA_VISIBLE_DEVICES ("" = as is)
  std::string python = "python3"; ///< the Python probe process's interpreter (py.* probes)
  bool force = false;             ///< replace an earlier calibration in out_dir (refused otherwise)
};

/// Puts the fault shim in front of the driver and, per probe, runs it paired in an internal cell
/// (whose other series is the nvidia backend's pointer; for a py.* probe, the Python probe
/// process: ctypes as `direct`, which binds through dlsym, ctypes again as `other`, through the
/// pointer cuGetProcAddress hands out): once without faults to learn its cost
/// and the symbols it binds, then an A/A cell and one cell per delay and resolution path. A py.*
/// probe also calibrates cuda.bindings' call path (`bindings`): both series cuda.bindings, the
/// probe's own spin before direct's calls, an A/A cell `aa-bindings`. Reports
/// per probe the method floor (how far the A/A control's interval reached from 1, in % and ns),
/// each cell's paired verdict, and per path the smallest delay that reads as the slowed backend
/// being slower. Writes calibrate.json and prints a table. Exit 0 when every A/A reads neither
/// slower nor faster and every path's largest delay was seen; 1 otherwise; 2 for bad options
/// (among them delays not strictly ascending, a symbol the driver does not export, an out_dir
/// holding a cuparity run, or an earlier calibrate.json without `force`); 3 when a probe gave no
/// measurement.
[[nodiscard]] int calibrate(const calibrate_options &options, std::ostream &console);

} // namespace cuparity
