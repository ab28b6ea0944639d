// The loop `cuparity cell` runs after its start: moved out of the CLI so it runs in-process too.
#include "harness/framework/cell_loop.hpp"

#include "harness/driver/driver_json.hpp"
#include "harness/framework/case_registry.hpp"
#include "harness/framework/case_runner.hpp"
#include "harness/framework/helper_client.hpp"
#include "harness/framework/requirements.hpp"
#include "harness/framework/running_order.hpp"
#include "harness/protocol/events.hpp"
#include "harness/protocol/exit_codes.hpp"

#include <algorithm>
#include <chrono>

namespace cuparity {
namespace {

double wait_ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

/// Runs one case under the lock and writes its case_end; true when it poisoned the process. The
/// lock stays held when the schedule says so (the next case is exclusive too).
bool run_one(const scheduled_case &sc, driver &d, const effective_config &config, cell_facts &facts,
             gpu_lock &lock, const event_stream &events) {
  const case_def &c = *sc.def;
  const auto asked = std::chrono::steady_clock::now();
  // The wait can last as long as another cell's start or case (a driver stuck in cuInit): the
  // runner then stops this cell's between-cases clock, so only the stuck one times out.
  events.write(make_event(event_kind::lock_wait, {{"case", c.id}}));
  lock.acquire(c.exclusive);
  const double waited = wait_ms_since(asked);
  events.write(make_event(event_kind::case_start, {{"case", c.id}}));
  case_result r = run_case(c, d, config, facts);
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

} // namespace

int run_cell_cases(driver &d, const effective_config &config, gpu_lock &lock,
                   const event_stream &events, const std::vector<std::string> &cases,
                   const std::vector<std::string> &excludes) {
  const auto selected = running_order(case_registry::instance().select(cases, excludes));
  // The helper server starts (a process, cuInit, a context) while the first cases run.
  if (std::any_of(selected.begin(), selected.end(),
                  [](const scheduled_case &c) { return c.def->helper; }))
    helper_client::instance().prestart();
  cell_facts facts(d); // what the cases' requirements are checked against, asked once
  for (const scheduled_case &c : selected)
    if (run_one(c, d, config, facts, lock, events))
      return exit_code::cell_poisoned;
  return exit_code::ok;
}

void finish_cell(driver &d, gpu_lock &lock, const event_stream &events, bool poisoned,
                 std::optional<CUdevice> primary) {
  const gpu_lock_hold teardown(lock, gpu_lock_hold::for_start_t{});
  helper_client::instance().shutdown();
  // The map covers every entry, not only those the cases happened to call: a resumed cell runs
  // only the cases left, and its map must still compare equal to an uninterrupted one (on the
  // H200, a kill-and-resume run differed from its reference in 341 entries of the resumed cells).
  if (!poisoned)
    (void)d.resolve_all();
  events.write(make_event(event_kind::cell_end, {{"binding_map", to_json(d.binding_map())}}));
  if (primary && !poisoned)
    (void)d.cuDevicePrimaryCtxRelease.raw(*primary);
}

} // namespace cuparity
