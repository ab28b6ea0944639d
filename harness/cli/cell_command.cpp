// `cuparity cell`: runs cases in this process under its environment, one JSON event per line.
//
// The runner starts one such process per cell (the binding is fixed at process start, as in
// Numba, and CUDA state does not survive a crash). Events go to --events-fd so nothing a driver
// prints on stdout can corrupt them; each line is flushed before the next case starts, so a crash
// loses nothing that finished.
#include "harness/cli/commands.hpp"
#include "harness/framework/cell_loop.hpp"
#include "harness/framework/cell_start.hpp"
#include "harness/platform/gpu_lock.hpp"
#include "harness/protocol/event_stream.hpp"
#include "harness/protocol/events.hpp"
#include "harness/protocol/exit_codes.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fcntl.h>
#include <iostream>
#include <memory>

namespace cuparity::cli {

namespace {

struct cell_options {
  std::vector<std::string> cases;
  std::vector<std::string> excludes;
  int events_fd = 1;
};

int run_cell(const cell_options &opt) {
  if (fcntl(opt.events_fd, F_GETFD) < 0) { // events written nowhere would be a silent run
    std::cerr << "cuparity cell: --events-fd " << opt.events_fd
              << ": not an open file descriptor\n";
    return exit_code::bad_input;
  }
  const event_stream events(opt.events_fd);
  // A process's driver start (cuInit, the primary context: hundreds of MiB) and its teardown
  // change the device's free memory, so both hold the GPU lock shared: an exclusive case never
  // meets another cell's start or exit. Exclusive cases at the start of a cell, with starts
  // outside the lock, failed alloc.info.drop at -j 16 on the H200 (30aa151).
  gpu_lock lock(gpu_lock::directory_from_environment());
  lock.acquire_for_start();
  // cell.startup: cuInit plus the primary context, the driver's own start-up cost. The context
  // stays retained for the whole process so cases retain/release cheaply instead of recreating it.
  // The calls are raw: a cell whose driver refuses them still runs, and its cases say what fails.
  started_process start = start_process(events, "cell", startup_calls::tolerant);
  lock.release();
  if (!start.started())
    return start.exit_code;
  driver &d = start.sess->drv();
  const int rc = run_cell_cases(d, start.sess->config(), lock, events, opt.cases, opt.excludes);
  finish_cell(d, lock, events, rc == exit_code::cell_poisoned,
              start.primary ? std::optional<CUdevice>(start.dev) : std::nullopt);
  return rc;
}

} // namespace

void add_cell_command(CLI::App &app, action &run) {
  auto opt = std::make_shared<cell_options>();
  auto *cmd = app.add_subcommand("cell", "Run cases in this process under its environment and "
                                         "write one JSON event per line (used by `run`)");
  cmd->add_option("--case", opt->cases, "Case id, glob or suite to run (repeatable; default all)");
  cmd->add_option("--exclude", opt->excludes, "Case id, glob or suite to skip (repeatable)");
  cmd->add_option("--events-fd", opt->events_fd, "File descriptor for the events (default 1)")
      ->check(CLI::NonNegativeNumber);
  cmd->callback([opt, &run] { run = [opt] { return run_cell(*opt); }; });
}

} // namespace cuparity::cli
