// `cuparity helper`: the second process of a case (IPC), same binary, same environment.
//
// With --serve it is the cell's helper server: one process per cell, started with the cell's
// first cases, that runs every request sent on its stdin and answers each with a helper_result
// event on --events-fd. A helper process costs a process start, cuInit and a primary context; on an
// H200 under a full matrix that was 2-6 s per IPC case, paid four times per cell.
#include "harness/cli/commands.hpp"
#include "harness/framework/cell_start.hpp"
#include "harness/framework/helper_registry.hpp"
#include "harness/platform/gpu_lock.hpp"
#include "harness/protocol/event_stream.hpp"
#include "harness/protocol/exit_codes.hpp"
#include "harness/protocol/helper_protocol.hpp"
#include "harness/session/session.hpp"

#include <iostream>
#include <memory>

namespace cuparity::cli {
namespace {

struct helper_options {
  std::string name;
  std::vector<std::string> args;
  bool serve = false;
  int events_fd = 3;
};

/// Runs one request; a helper that throws is a failure with its message, never the end of the
/// process.
helper_reply run_request(driver &d, const helper_request &req) {
  helper_reply reply;
  if (req.name == helper_ping) {
    reply.out = "pong";
    return reply;
  }
  const helper_fn *fn = helper_registry::instance().find(req.name);
  if (!fn) {
    reply.exit_code = exit_code::bad_input;
    reply.err = "no helper named '" + req.name + "'";
    return reply;
  }
  try {
    reply.exit_code = (*fn)(d, req.args, reply.out);
  } catch (const std::exception &e) {
    reply.exit_code = exit_code::failures;
    reply.err = e.what();
  }
  return reply;
}

int serve(const helper_options &opt) {
  const event_stream events(opt.events_fd);
  // The server keeps its own retain of device 0's primary context for its whole life (as a cell
  // does), so the helpers' retains and releases are cheap and the context is made once per cell.
  // It may start while its cell runs other cases, so its start holds the GPU lock shared as a
  // cell's does; its requests and its exit run while the cell holds the lock.
  gpu_lock lock(gpu_lock::directory_from_environment());
  lock.acquire_beside_writers();
  started_process start = start_process(events, "helper", startup_calls::tolerant);
  lock.release();
  if (!start.started())
    return start.exit_code;
  driver &d = start.sess->drv();
  std::string line;
  while (std::getline(std::cin, line)) {
    std::string error;
    const auto req = parse_helper_request(line, error);
    helper_reply reply;
    if (req) {
      reply = run_request(d, *req);
    } else {
      reply.exit_code = exit_code::bad_input;
      reply.err = "bad request (" + error + "): " + line;
    }
    events.write(to_event(reply));
  }
  if (start.primary)
    (void)d.cuDevicePrimaryCtxRelease.raw(start.dev);
  return exit_code::ok;
}

int run_once(const helper_options &opt) {
  try {
    auto sess = session::open(read_settings(process_environment(), executable_dir()));
    const helper_reply reply = run_request(sess->drv(), {opt.name, opt.args});
    std::cout << reply.out;
    if (!reply.err.empty())
      std::cerr << "cuparity helper " << opt.name << ": " << reply.err << "\n";
    return reply.exit_code;
  } catch (const std::exception &e) {
    std::cerr << "cuparity helper " << opt.name << ": " << e.what() << "\n";
    return exit_code::failures;
  }
}

} // namespace

void add_helper_command(CLI::App &app, action &run) {
  auto opt = std::make_shared<helper_options>();
  auto *cmd = app.add_subcommand("helper", "Run a case's helper process (internal use)");
  cmd->group(""); // hidden from --help: only cases start it
  cmd->add_option("name", opt->name, "Helper name (without --serve)");
  cmd->add_option("args", opt->args, "Helper arguments");
  cmd->add_flag("--serve", opt->serve, "Serve requests from stdin (the cell's helper server)");
  cmd->add_option("--events-fd", opt->events_fd, "File descriptor for the replies (default 3)")
      ->check(CLI::NonNegativeNumber);
  cmd->callback([opt, &run] {
    if (!opt->serve && opt->name.empty())
      throw CLI::RequiredError("name");
    run = [opt] { return opt->serve ? serve(*opt) : run_once(*opt); };
  });
}

} // namespace cuparity::cli
