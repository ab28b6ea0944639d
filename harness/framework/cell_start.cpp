// The start of a cell or probe process, shared by `cuparity cell` and `cuparity probe`.
#include "harness/framework/cell_start.hpp"

#include "harness/config/config.hpp"
#include "harness/config/config_json.hpp"
#include "harness/driver/device_facts.hpp"
#include "harness/driver/driver_error.hpp"
#include "harness/driver/driver_json.hpp"
#include "harness/framework/device_architecture.hpp"
#include "harness/protocol/events.hpp"
#include "harness/protocol/exit_codes.hpp"

#include <chrono>
#include <iostream>
#include <string>
#include <unistd.h>

namespace cuparity::cli {
namespace {

/// Writes cell_error, says why on stderr and returns `code`.
int fail_start(const event_stream &events, const char *command, const char *kind,
               const std::string &message, int code) {
  events.write(make_event(event_kind::cell_error, {{"kind", kind}, {"message", message}}));
  std::cerr << "cuparity " << command << ": " << message << "\n";
  return code;
}

std::unique_ptr<session> open_session(const event_stream &events, const char *command,
                                      int &failed_with) {
  try {
    return session::open(read_settings(process_environment(), executable_dir()));
  } catch (const config_error &e) {
    failed_with = fail_start(events, command, "config", e.what(), exit_code::bad_input);
  } catch (const std::exception &e) {
    failed_with = fail_start(events, command, "driver", e.what(), exit_code::environment);
  }
  return nullptr;
}

void retain_checked(driver &d, started_process &p) {
  auto t0 = std::chrono::steady_clock::now();
  d.cuInit(0);
  p.init_ms = ms_since(t0);
  d.cuDeviceGet(&p.dev, 0);
  auto t1 = std::chrono::steady_clock::now();
  d.cuDevicePrimaryCtxRetain(&p.primary, p.dev);
  p.retain_ms = ms_since(t1);
}

/// Whether the start-up's cuInit succeeded (checked: it threw otherwise).
bool retain_tolerant(driver &d, started_process &p) {
  auto t0 = std::chrono::steady_clock::now();
  CUresult init = d.cuInit.raw(0);
  p.init_ms = ms_since(t0);
  if (init == CUDA_SUCCESS && d.cuDeviceGet.raw(&p.dev, 0) == CUDA_SUCCESS) {
    auto t1 = std::chrono::steady_clock::now();
    (void)d.cuDevicePrimaryCtxRetain.raw(&p.primary, p.dev);
    p.retain_ms = ms_since(t1);
  }
  return init == CUDA_SUCCESS;
}

nlohmann::json cell_start_event(const started_process &p, const driver_facts &facts) {
  return make_event(event_kind::cell_start,
                    {{"pid", static_cast<long>(getpid())},
                     {"config", to_json(p.sess->config())},
                     {"driver", to_json(facts)},
                     {"startup_ms", {{"cuInit", p.init_ms}, {"primary_ctx_retain", p.retain_ms}}}});
}

} // namespace

started_process start_process(const event_stream &events, const char *command, startup_calls calls,
                              const before_cell_start &before_start) {
  started_process p;
  p.sess = open_session(events, command, p.exit_code);
  if (!p.sess)
    return p;
  driver &d = p.sess->drv();
  try {
    bool initialised = true;
    if (calls == startup_calls::checked)
      retain_checked(d, p);
    else
      initialised = retain_tolerant(d, p);
    // The one reading of the device's compute capability: the kernel images every case and the
    // probes' fixture load are the ones for it (harness/framework/device_architecture.hpp). The
    // driver is started once: a second cuInit cost a simulated 40 s driver start a second 40 s
    // (issue 47, 16); after a failed one the facts ask again, to record why.
    const driver_facts facts =
        query_driver_facts(d, initialised ? driver_init::done : driver_init::call);
    note_device_architecture(facts);
    if (before_start)
      before_start(d, p);
    events.write(cell_start_event(p, facts));
  } catch (const driver_error &e) {
    // A function the process needs to start that the binding under test does not bind (a map
    // without cuInit, cuDeviceGet or cuDevicePrimaryCtxRetain, or with no entries at all): the
    // configuration cannot be used, whichever way the calls are made. One named cell error.
    if (!e.not_bound() && calls == startup_calls::tolerant)
      throw;
    p.exit_code = e.not_bound()
                      ? fail_start(events, command, "config", e.what(), exit_code::bad_input)
                      : fail_start(events, command, "driver", e.what(), exit_code::environment);
    p.sess.reset();
  } catch (const std::exception &e) {
    if (calls == startup_calls::tolerant)
      throw; // nothing here is checked; what throws is no driver refusal
    p.exit_code = fail_start(events, command, "driver", e.what(), exit_code::environment);
    p.sess.reset();
  }
  return p;
}

} // namespace cuparity::cli
