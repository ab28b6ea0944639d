// `cuparity probe`: runs the latency probes once in this process (one round of one cell) and
// writes one JSON event per probe and series.
#include "cases/kernels/kernel_images.hpp"
#include "harness/cli/commands.hpp"
#include "harness/config/config.hpp"
#include "harness/config/config_json.hpp"
#include "harness/driver/device_facts.hpp"
#include "harness/driver/driver_json.hpp"
#include "harness/protocol/event_stream.hpp"
#include "harness/protocol/events.hpp"
#include "harness/protocol/exit_codes.hpp"
#include "harness/selection/session.hpp"
#include "harness/suite/probe_registry.hpp"

#include <algorithm>
#include <benchmark/benchmark.h>
#include <chrono>
#include <fnmatch.h>
#include <iostream>
#include <map>
#include <memory>
#include <sched.h>
#include <sstream>
#include <string_view>
#include <unistd.h>

namespace cuparity::cli {
namespace {

struct probe_options {
  std::vector<std::string> probes;
  double min_time = 0.05;
  int repetitions = 3;
  int cpu = -2; ///< -2: the last CPU this process may use; -1: do not pin
  bool direct_first = false;
  bool serve = false;
  int events_fd = 1;
};

/// A regular expression matching `text` literally (benchmark filters are regexes; probe names
/// contain dots).
std::string regex_escape(const std::string &text) {
  std::string out;
  for (char c : text) {
    if (std::string_view(".^$|()[]{}*+?\\").find(c) != std::string_view::npos)
      out += '\\';
    out += c;
  }
  return out;
}

/// Collects Google Benchmark's runs in memory instead of printing them.
class collecting_reporter : public benchmark::BenchmarkReporter {
public:
  bool ReportContext(const Context &) override { return true; }
  void ReportRuns(const std::vector<Run> &runs) override {
    for (const auto &r : runs)
      m_runs.push_back(r);
  }
  const std::vector<Run> &runs() const { return m_runs; }

private:
  std::vector<Run> m_runs;
};

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

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

int run_probes(const probe_options &opt) {
  pin_cpu(opt.cpu);
  const event_stream events(opt.events_fd);
  auto fail = [&](const std::string &kind, const std::string &msg, int code) {
    events.write(make_event(event_kind::cell_error, {{"kind", kind}, {"message", msg}}));
    std::cerr << "cuparity probe: " << msg << "\n";
    return code;
  };
  std::unique_ptr<session> sess;
  try {
    sess = session::open(read_settings(process_environment(), executable_dir()));
  } catch (const config_error &e) {
    return fail("config", e.what(), exit_code::bad_input);
  } catch (const std::exception &e) {
    return fail("driver", e.what(), exit_code::environment);
  }
  driver &d = sess->drv();
  probe_env env{d};
  try {
    auto t0 = std::chrono::steady_clock::now();
    d.cuInit(0);
    double init_ms = ms_since(t0);
    d.cuDeviceGet(&env.dev, 0);
    auto t1 = std::chrono::steady_clock::now();
    d.cuDevicePrimaryCtxRetain(&env.ctx, env.dev);
    double retain_ms = ms_since(t1);
    d.cuCtxSetCurrent(env.ctx);
    d.cuModuleLoadData(&env.module, find_kernel_image("basic.cubin").data.data());
    d.cuStreamCreate(&env.stream, CU_STREAM_NON_BLOCKING);
    events.write(
        make_event(event_kind::cell_start,
                   {{"pid", static_cast<long>(getpid())},
                    {"config", to_json(sess->config())},
                    {"driver", to_json(query_driver_facts(d))},
                    {"startup_ms", {{"cuInit", init_ms}, {"primary_ctx_retain", retain_ms}}}}));
    // cell.startup: what a fresh process pays before its first useful call (a probe like the
    // others for selection, measured here rather than by Google Benchmark).
    bool want_startup = opt.probes.empty();
    for (const auto &g : opt.probes)
      want_startup = want_startup || fnmatch(g.c_str(), "cell.startup", 0) == 0;
    if (want_startup && !opt.serve) // served rounds get startup from fresh processes
      events.write(make_event(event_kind::probe, {{"probe", "cell.startup"},
                                                  {"series", "facade"},
                                                  {"kind", "startup"},
                                                  {"unit", "ns"},
                                                  {"value", (init_ms + retain_ms) * 1e6}}));
  } catch (const std::exception &e) {
    return fail("driver", e.what(), exit_code::environment);
  }

  int argc = 1;
  char arg0[] = "cuparity";
  char *argv[] = {arg0, nullptr};
  benchmark::Initialize(&argc, argv);
  // Each probe is registered once per series; a round runs them one at a time (a filter per
  // benchmark), so the order of facade and direct can alternate between rounds.
  std::vector<const probe_def *> selected = probe_registry::instance().select(opt.probes);
  for (const probe_def *p : selected) {
    for (const char *series : {"facade", "direct"}) {
      if (std::string(series) == "direct" && !p->has_direct)
        continue;
      const std::string name = p->name + "/" + series;
      auto body = std::string(series) == "direct" ? p->direct : p->facade;
      // google/benchmark does not catch exceptions (aesthetics.md 4): a driver error would end
      // the process, so it becomes SkipWithError and the other probes still run.
      auto *b = benchmark::RegisterBenchmark(name.c_str(), [body, &env](benchmark::State &s) {
        try {
          body(s, env);
        } catch (const std::exception &e) {
          s.SkipWithError(e.what());
        }
      });
      // Several repetitions per round; the round's value is their median (below), so one
      // interrupted repetition does not move it.
      b->Unit(benchmark::kNanosecond)->MinTime(opt.min_time)->Repetitions(opt.repetitions);
      if (p->kind == probe_kind::device || p->kind == probe_kind::bandwidth ||
          p->calls_per_iteration > 1)
        b->UseManualTime();
      else
        b->UseRealTime();
    }
  }
  auto run_round = [&](int round, bool direct_first) {
    for (const probe_def *p : selected) {
      std::vector<std::string> order{"facade"};
      if (p->has_direct)
        order = direct_first ? std::vector<std::string>{"direct", "facade"}
                             : std::vector<std::string>{"facade", "direct"};
      for (const auto &series : order) {
        collecting_reporter reporter;
        // Matched against the decorated name ("…/facade/min_time:0.050/repeats:3/real_time").
        benchmark::RunSpecifiedBenchmarks(&reporter,
                                          "^" + regex_escape(p->name + "/" + series) + "(/|$)");
        std::vector<double> values;
        std::int64_t iterations = 0;
        std::string error;
        for (const auto &r : reporter.runs()) {
          if (r.run_type != benchmark::BenchmarkReporter::Run::RT_Iteration)
            continue; // aggregates (mean, median, stddev) are computed here instead
          if (r.error_occurred)
            error = r.error_message;
          else
            values.push_back(r.GetAdjustedRealTime()); // per iteration, in ns
          iterations += r.iterations;
        }
        nlohmann::json ev = make_event(event_kind::probe, {{"probe", p->name},
                                                           {"series", series},
                                                           {"kind", to_string(p->kind)},
                                                           {"unit", unit_of(p->kind)},
                                                           {"iterations", iterations},
                                                           {"repetitions", values.size()},
                                                           {"round", round}});
        if (!error.empty() || values.empty()) {
          ev["error"] = error.empty() ? "no measurement" : error;
        } else {
          std::sort(values.begin(), values.end());
          const std::size_t n = values.size();
          const double ns = (n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2) /
                            p->calls_per_iteration;
          ev["value"] = p->kind == probe_kind::bandwidth ? p->bytes_per_iteration / ns : ns;
        }
        events.write(ev);
      }
    }
    events.write(make_event(event_kind::round_done, {{"round", round}}));
  };
  if (!opt.serve) {
    run_round(0, opt.direct_first);
  } else {
    // Rounds on command ("round <n> <direct_first 0|1>"), one process for the whole phase:
    // the binding stays fixed and the process-to-process spread stays out of the comparison.
    std::string line;
    while (std::getline(std::cin, line)) {
      std::istringstream in(line);
      std::string word;
      int round = 0, direct_first = 0;
      if (!(in >> word >> round >> direct_first) || word != "round") {
        events.write(
            make_event(event_kind::probe_error, {{"message", "bad command '" + line + "'"}}));
        continue;
      }
      run_round(round, direct_first != 0);
    }
  }
  (void)d.cuStreamDestroy.raw(env.stream);
  (void)d.cuModuleUnload.raw(env.module);
  (void)d.cuDevicePrimaryCtxRelease.raw(env.dev);
  return exit_code::ok;
}

} // namespace

void add_probe_command(CLI::App &app, action &run) {
  auto opt = std::make_shared<probe_options>();
  auto *cmd = app.add_subcommand("probe", "Run the latency probes once in this process (one "
                                          "round of one cell; used by `run`)");
  cmd->add_option("--probe", opt->probes, "Probe name or glob (repeatable; default all)");
  cmd->add_option("--min-time", opt->min_time, "Seconds each probe runs (Google Benchmark)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--repetitions", opt->repetitions,
                  "Repetitions per probe; the round's value is their median")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--cpu", opt->cpu,
                  "CPU to pin this process to (-1: none; default: the last allowed CPU)");
  cmd->add_flag("--direct-first", opt->direct_first,
                "Run each probe's direct series before the facade's (rounds alternate)");
  cmd->add_option("--events-fd", opt->events_fd, "File descriptor for the events (default 1)");
  cmd->add_flag("--serve", opt->serve,
                "Stay alive and run a round per 'round <n> <direct_first>' line on stdin");
  cmd->add_flag_callback(
      "--list",
      [] {
        for (const auto &p : probe_registry::instance().all())
          std::cout << p.name << "  " << to_string(p.kind) << " (" << unit_of(p.kind) << ")"
                    << (p.has_direct ? "" : ", no direct series") << "\n";
        std::exit(0);
      },
      "List the probes and exit");
  cmd->callback([opt, &run] { run = [opt] { return run_probes(*opt); }; });
}

} // namespace cuparity::cli
