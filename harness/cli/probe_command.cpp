// `cuparity probe`: a probe process. It runs the latency probes in this process (one round of one
// cell, or with --serve a round per command) and writes one JSON event per probe and series.
#include "harness/cli/bounded_options.hpp"
#include "harness/cli/commands.hpp"
#include "harness/framework/cell_start.hpp"
#include "harness/matrix/limits.hpp"
#include "harness/probes/probe_fixture.hpp"
#include "harness/probes/probe_registry.hpp"
#include "harness/probes/probe_runner.hpp"
#include "harness/protocol/event_stream.hpp"
#include "harness/protocol/events.hpp"
#include "harness/protocol/exit_codes.hpp"
#include "harness/protocol/probe_ids.hpp"

#include <algorithm>
#include <cmath>
#include <fcntl.h>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sched.h>
#include <sstream>

namespace cuparity::cli {
namespace {

struct probe_process_options {
  std::vector<std::string> probes;
  double min_time = 0.05;
  std::vector<std::string> probe_times; ///< "<probe>=<seconds>", min_time's override
  double block_time = 2.5e-4;
  int cpu = -2; ///< -2: the last CPU this process may use; -1: do not pin
  bool flip = false;
  bool serve = false;
  int events_fd = 1;
};

/// Pins this process to one CPU. Host-side latencies depend on the core a process lands on (its
/// cache, its clock, its interrupts): on the H200 machine, unpinned rounds of launch.empty_kernel
/// spread from 3.1 to 4.3 us between processes. Every round of every cell uses the same core.
void pin_cpu(int wanted) {
  if (wanted == -1)
    return;
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
    return;
  int cpu = wanted;
  if (cpu < 0)
    for (int c = CPU_SETSIZE - 1; c >= 0; --c)
      if (CPU_ISSET(c, &allowed)) {
        cpu = c;
        break;
      }
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  if (sched_setaffinity(0, sizeof one, &one) != 0)
    std::cerr << "cuparity probe: cannot pin to CPU " << cpu << "; running unpinned\n";
}

/// cell.startup: what a fresh process pays before its first useful call (a probe like the others
/// for selection, measured by the process's start rather than by a timed loop).
void write_startup_sample(const probe_process_options &opt, const started_process &p,
                          const event_stream &events) {
  if (selects_startup(opt.probes) && !opt.serve) // served rounds get startup from fresh processes
    events.write(make_event(event_kind::probe, {{"probe", startup_probe},
                                                {"series", "facade"},
                                                {"kind", "startup"},
                                                {"unit", "ns"},
                                                {"value", (p.init_ms + p.retain_ms) * 1e6}}));
}

/// Rounds on command ("round <n> <flip 0|1>"), one process for the whole phase: the
/// binding stays fixed and the process-to-process spread stays out of the comparison.
void serve_rounds(const probe_runner &runner, const event_stream &events) {
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    std::string word;
    int round = 0, flip = 0;
    if (!(in >> word >> round >> flip) || word != "round") {
      events.write(
          make_event(event_kind::probe_error, {{"message", "bad command '" + line + "'"}}));
      continue;
    }
    runner.run_round(round, flip != 0, events);
  }
}

/// --probe-time's "<probe>=<seconds>" items as a map, or why one cannot be used.
std::map<std::string, double> probe_times(const std::vector<std::string> &items, std::string &why) {
  std::map<std::string, double> out;
  for (const auto &item : items) {
    const auto eq = item.find('=');
    const std::string name = item.substr(0, eq);
    const std::string text = eq == std::string::npos ? "" : item.substr(eq + 1);
    const auto named = [&](const probe_def &p) { return p.name == name; };
    const auto &all = probe_registry::instance().all();
    if (eq == std::string::npos || std::find_if(all.begin(), all.end(), named) == all.end()) {
      why = "--probe-time " + item + ": want <probe>=<seconds> with a probe of `cuparity probe " +
            "--list`";
      return {};
    }
    std::size_t used = 0;
    double seconds = 0;
    try {
      seconds = std::stod(text, &used);
    } catch (const std::exception &) {
      used = 0;
    }
    if (used == 0 || used != text.size() || !std::isfinite(seconds) ||
        seconds < limits::min_time_min_s || seconds > limits::min_time_max_s) {
      std::ostringstream bounds;
      bounds << limits::min_time_min_s << " to " << limits::min_time_max_s;
      why = "--probe-time " + item + ": the seconds must be a number from " + bounds.str();
      return {};
    }
    out[name] = seconds;
  }
  return out;
}

/// Why the options cannot be used ("" when they can), before the driver is opened.
std::string probe_options_problem(const probe_process_options &opt) {
  for (const auto &g : opt.probes)
    if (!probe_registry::instance().matches_any(g))
      return "--probe " + g + ": names no probe (see `cuparity probe --list`)";
  std::string why;
  (void)probe_times(opt.probe_times, why);
  if (!why.empty())
    return why;
  if (fcntl(opt.events_fd, F_GETFD) < 0)
    return "--events-fd " + std::to_string(opt.events_fd) + ": not an open file descriptor";
  return {};
}

int run_probe_process(const probe_process_options &opt) {
  if (const std::string why = probe_options_problem(opt); !why.empty()) {
    std::cerr << "cuparity probe: " << why << "\n";
    return exit_code::bad_input;
  }
  pin_cpu(opt.cpu);
  const event_stream events(opt.events_fd);
  std::optional<probe_env> env;
  const started_process start = start_process(events, "probe", startup_calls::checked,
                                              [&](driver &d, const started_process &p) {
                                                env.emplace(open_probe_env(d, p.dev, p.primary));
                                              });
  if (!start.started())
    return start.exit_code;
  write_startup_sample(opt, start, events);
  // The other backend, for the paired series: its pointers are called in this process's context.
  std::string other_reason;
  env->other = start.sess->counterpart(other_reason);
  if (!env->other)
    std::cerr << "cuparity probe: no other backend for the paired series: " << other_reason << "\n";
  std::string unused;
  const probe_runner runner(probe_registry::instance().select(opt.probes), *env,
                            {opt.min_time, opt.block_time, probe_times(opt.probe_times, unused)});
  if (opt.serve)
    serve_rounds(runner, events);
  else
    runner.run_round(0, opt.flip, events);
  close_probe_env(*env);
  return exit_code::ok;
}

} // namespace

void add_probe_command(CLI::App &app, action &run) {
  auto opt = std::make_shared<probe_process_options>();
  auto *cmd = app.add_subcommand("probe", "Run the latency probes once in this process (one "
                                          "round of one cell; used by `run`)");
  cmd->add_option("--probe", opt->probes, "Probe name or glob (repeatable; default all)");
  cmd->add_option("--min-time", opt->min_time, "Seconds each series of each probe runs per round")
      ->check(finite_number(limits::min_time_min_s, true, limits::min_time_max_s));
  cmd->add_option("--probe-time", opt->probe_times,
                  "<probe>=<seconds>: that probe's --min-time (repeatable)");
  cmd->add_option("--block-time", opt->block_time,
                  "Seconds per block; a probe's series alternate block by block")
      ->check(finite_number(limits::block_time_min_s, true, limits::block_time_max_s));
  cmd->add_option("--cpu", opt->cpu,
                  "CPU to pin this process to (-1: none; default: the last allowed CPU)");
  cmd->add_flag("--flip", opt->flip,
                "Start each probe's series in the reversed order (rounds alternate)");
  cmd->add_option("--events-fd", opt->events_fd, "File descriptor for the events (default 1)");
  cmd->add_flag("--serve", opt->serve,
                "Stay alive and run a round per 'round <n> <flip>' line on stdin");
  auto list = std::make_shared<bool>(false);
  cmd->add_flag("--list", *list, "List the probes and exit");
  // The list is printed by the command, not by the flag's callback: main checks that it reached
  // stdout (an exit() there would skip the check).
  cmd->callback([opt, list, &run] {
    run = [opt, list] {
      if (!*list)
        return run_probe_process(*opt);
      for (const auto &p : probe_registry::instance().all())
        std::cout << p.name << "  " << to_string(p.kind) << " (" << unit_of(p.kind) << ")\n";
      return exit_code::ok;
    };
  });
}

} // namespace cuparity::cli
