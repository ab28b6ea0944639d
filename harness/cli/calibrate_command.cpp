// `cuparity calibrate`: the smallest injected delay the paired latency verdict sees on this host.
#include "harness/calibrate/calibrate.hpp"
#include "harness/cli/bounded_options.hpp"
#include "harness/cli/commands.hpp"

#include <iostream>
#include <memory>

namespace cuparity::cli {

void add_calibrate_command(CLI::App &app, action &run) {
  auto opt = std::make_shared<calibrate_options>();
  auto *cmd = app.add_subcommand(
      "calibrate", "Inject known delays into one resolution path (fault shim in front of the "
                   "driver) and report the smallest the paired latency verdict reads");
  cmd->add_option("--out", opt->out_dir, "Directory for calibrate.json and the probe results")
      ->required();
  cmd->add_option("--shim", opt->shim,
                  "The fault shim library (default: libcuparity_fault_shim.so beside cuparity)");
  cmd->add_option("--target", opt->target, "The driver the shim forwards to")
      ->capture_default_str();
  cmd->add_option("--probe", opt->probes, "A probe to calibrate (repeatable)")
      ->capture_default_str();
  cmd->add_option("--symbol", opt->symbols,
                  "Exported symbol to delay (repeatable; default: the symbols each probe binds)");
  cmd->add_option("--delays", opt->delays_pct,
                  "Delays in % of the probe's cost, ascending (others are refused)")
      ->delimiter(',')
      ->check(finite_number(1e-3, true, 100.0));
  cmd->add_option("--min-time", opt->min_time_s, "Seconds per series per round")
      ->check(finite_number(1e-3, true, 60.0))
      ->capture_default_str();
  cmd->add_option("--rounds", opt->rounds, "Rounds over the delay cells")
      ->check(whole_number(1, 100))
      ->capture_default_str();
  cmd->add_option("--gpu", opt->gpu, "CUDA_VISIBLE_DEVICES for the probe processes");
  cmd->add_option("--python", opt->python,
                  "The interpreter of the Python probe process (py.* probes)")
      ->capture_default_str();
  cmd->add_flag("--force", opt->force,
                "Replace an earlier calibration in --out (without it, calibrate.json there is "
                "refused)");
  cmd->callback([opt, &run] { run = [opt] { return calibrate(*opt, std::cout); }; });
}

} // namespace cuparity::cli
