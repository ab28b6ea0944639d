// `cuparity cell`: runs cases in this process under its environment, one JSON event per line.
//
// The runner starts one such process per cell (the binding is fixed at process start, as in
// Numba, and CUDA state does not survive a crash). Events go to --events-fd so nothing a driver
// prints on stdout can corrupt them; each line is flushed before the next case starts, so a crash
// loses nothing that finished.
#include "harness/cli/cell_start.hpp"
#include "harness/cli/commands.hpp"
#include "harness/driver/driver_json.hpp"
#include "harness/platform/gpu_lock.hpp"
#include "harness/protocol/event_stream.hpp"
#include "harness/protocol/events.hpp"
#include "harness/protocol/exit_codes.hpp"
#include "harness/suite/case_registry.hpp"
#include "harness/suite/case_runner.hpp"
#include "harness/suite/helper_client.hpp"
#include "harness/suite/running_order.hpp"

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

/// Runs one case under the lock and writes its case_end; true when it poisoned the process. The
/// lock stays held when the schedule says so (the next case is exclusive too).
bool run_one(const scheduled_case &sc, driver &d, const session &sess, cell_facts &facts,
             gpu_lock &lock, const event_stream &events) {
  const case_def &c = *sc.def;
  const auto asked = std::chrono::steady_clock::now();
  // The wait can last as long as another cell's start or case (a driver stuck in cuInit): the
  // runner then stops this cell's between-cases clock, so only the stuck one times out.
  events.write(make_event(event_kind::lock_wait, {{"case", c.id}}));
  lock.acquire(c.exclusive);
  const double waited = ms_since(asked);
  events.write(make_event(event_kind::case_start, {{"case", c.id}}));
  case_result r = run_case(c, d, sess.config(), facts);
  if (!sc.keep_lock)
    lock.release();
  const helper_costs helper = helper_client::instance().take_costs();
  events.write(make_event(event_kind::case_end, {{"case", r.id},
                                                 {"outcome", to_string(r.result)},
                                                 {"message", r.message},
                                                 {"requirement", r.requirement},
                                                 {"observations", r.observations},
                                                 {"duration_ms", r.duration_ms},
                                                 {"lock_wait_ms", waited},
                                                 {"helper_start_ms", helper.startup_ms},
                                                 {"helper_ms", helper.requests_ms},
                                                 {"poisoned", r.poisoned}}));
  return r.poisoned;
}

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
  lock.acquire(false);
  // cell.startup: cuInit plus the primary context, the driver's own start-up cost. The context
  // stays retained for the whole process so cases retain/release cheaply instead of recreating it.
  // The calls are raw: a cell whose driver refuses them still runs, and its cases say what fails.
  started_process start = start_process(events, "cell", startup_calls::tolerant);
  lock.release();
  if (!start.started())
    return start.exit_code;
  driver &d = start.sess->drv();
  const auto selected = running_order(case_registry::instance().select(opt.cases, opt.excludes));
  helper_client &helpers = helper_client::instance();
  // The helper server starts (a process, cuInit, a context) while the first cases run.
  if (std::any_of(selected.begin(), selected.end(),
                  [](const scheduled_case &c) { return c.def->helper; }))
    helpers.prestart();
  int rc = exit_code::ok;
  cell_facts facts(d); // what the cases' requirements are checked against, asked once
  for (const scheduled_case &c : selected)
    if (run_one(c, d, *start.sess, facts, lock, events)) {
      rc = exit_code::cell_poisoned;
      break;
    }
  const gpu_lock_hold teardown(lock, false);
  helpers.shutdown();
  // The map covers every entry, not only those the cases happened to call: a resumed cell runs
  // only the cases left, and its map must still compare equal to an uninterrupted one (on the
  // H200, a kill-and-resume run differed from its reference in 341 entries of the resumed cells).
  if (rc != exit_code::cell_poisoned)
    (void)d.resolve_all();
  events.write(make_event(event_kind::cell_end, {{"binding_map", to_json(d.binding_map())}}));
  if (start.primary && rc != exit_code::cell_poisoned)
    (void)d.cuDevicePrimaryCtxRelease.raw(start.dev);
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
