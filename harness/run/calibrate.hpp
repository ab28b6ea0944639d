// `cuparity calibrate`: what the paired latency verdict can see on this host, by injected delays.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace cuparity {

struct calibrate_options {
  std::string shim;                    ///< the fault shim library ("" = beside the executable)
  std::string target = "libcuda.so.1"; ///< the driver the shim forwards to
  std::string probe = "launch.empty_kernel";
  std::vector<std::string> symbols{"cuLaunchKernel"}; ///< exported symbols the delay goes into
  std::vector<double> delays_pct{0.5, 1, 2, 3, 5};    ///< of the probe's cost, per call
  double min_time_s = 0.5;                            ///< per series per round
  int rounds = 2;      ///< rounds over all delay cells (order reversed each round)
  std::string out_dir; ///< calibrate.json, results.jsonl, logs/
  std::string gpu;     ///< CUDA_VISIBLE_DEVICES ("" = as is)
};

/// Puts the fault shim in front of the driver and runs the paired probe in an internal cell
/// (whose other series is the nvidia backend's pointer): once without faults to learn the probe's
/// cost, then an A/A cell and one cell per delay and resolution path. Reports for each the
/// paired verdict, and per path the smallest delay that reads as the slowed backend being slower.
/// Writes calibrate.json and prints a table. Exit 0 when the A/A reads neither slower nor faster
/// and every path's largest delay was seen; 1 otherwise; 2 for bad options; 3 when no probe
/// process could start.
[[nodiscard]] int calibrate(const calibrate_options &options, std::ostream &console);

} // namespace cuparity
