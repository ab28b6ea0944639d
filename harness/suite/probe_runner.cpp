// Probe rounds under Google Benchmark: registration, one filtered run per series, the event.
#include "harness/suite/probe_runner.hpp"

#include "harness/protocol/events.hpp"

#include <algorithm>
#include <benchmark/benchmark.h>
#include <cstdint>
#include <string>
#include <string_view>

namespace cuparity {
namespace {

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

/// Google Benchmark parses (and keeps a pointer into) an argv; this process gives it none of its
/// own, so its flags cannot change what the probes measure.
void initialize_benchmark() {
  static char arg0[] = "cuparity";
  static char *argv[] = {arg0, nullptr};
  int argc = 1;
  benchmark::Initialize(&argc, argv);
}

void register_series(const probe_def &p, const char *series, probe_env &env,
                     const probe_timing &timing) {
  const std::string name = p.name + "/" + series;
  auto body = std::string(series) == "direct" ? p.direct : p.facade;
  // Google Benchmark does not catch exceptions: a driver error would end the process, so it
  // becomes SkipWithError and the other probes still run.
  auto *b = benchmark::RegisterBenchmark(name.c_str(), [body, &env](benchmark::State &s) {
    try {
      body(s, env);
    } catch (const std::exception &e) {
      s.SkipWithError(e.what());
    }
  });
  // Several repetitions per round; the round's value is their median (below), so one
  // interrupted repetition does not move it.
  b->Unit(benchmark::kNanosecond)->MinTime(timing.min_time)->Repetitions(timing.repetitions);
  if (p.kind == probe_kind::device || p.kind == probe_kind::bandwidth || p.calls_per_iteration > 1)
    b->UseManualTime();
  else
    b->UseRealTime();
}

/// What one series' repetitions measured: per-iteration times in ns, or the error.
struct repetitions {
  std::vector<double> values;
  std::int64_t iterations = 0;
  std::string error;
};

repetitions run_series(const probe_def &p, const std::string &series) {
  collecting_reporter reporter;
  // Matched against the decorated name ("…/facade/min_time:0.050/repeats:3/real_time").
  benchmark::RunSpecifiedBenchmarks(&reporter, "^" + regex_escape(p.name + "/" + series) + "(/|$)");
  repetitions out;
  for (const auto &r : reporter.runs()) {
    if (r.run_type != benchmark::BenchmarkReporter::Run::RT_Iteration)
      continue; // aggregates (mean, median, stddev) are computed here instead
    if (r.error_occurred)
      out.error = r.error_message;
    else
      out.values.push_back(r.GetAdjustedRealTime()); // per iteration, in ns
    out.iterations += r.iterations;
  }
  return out;
}

/// The round's value: the median repetition, per driver call (ns) or as bandwidth (GB/s).
double round_value(const probe_def &p, std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  const double ns =
      (n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2) / p.calls_per_iteration;
  return p.kind == probe_kind::bandwidth ? p.bytes_per_iteration / ns : ns;
}

nlohmann::json probe_event(const probe_def &p, const std::string &series, int round) {
  const repetitions r = run_series(p, series);
  nlohmann::json ev = make_event(event_kind::probe, {{"probe", p.name},
                                                     {"series", series},
                                                     {"kind", to_string(p.kind)},
                                                     {"unit", unit_of(p.kind)},
                                                     {"iterations", r.iterations},
                                                     {"repetitions", r.values.size()},
                                                     {"round", round}});
  if (!r.error.empty() || r.values.empty())
    ev["error"] = r.error.empty() ? "no measurement" : r.error;
  else
    ev["value"] = round_value(p, r.values);
  return ev;
}

} // namespace

probe_runner::probe_runner(std::vector<const probe_def *> selected, probe_env &env,
                           const probe_timing &timing)
    : m_selected(std::move(selected)) {
  initialize_benchmark();
  for (const probe_def *p : m_selected) {
    register_series(*p, "facade", env, timing);
    if (p->has_direct)
      register_series(*p, "direct", env, timing);
  }
}

void probe_runner::run_round(int round, bool direct_first, const event_stream &events) const {
  for (const probe_def *p : m_selected) {
    std::vector<std::string> order{"facade"};
    if (p->has_direct)
      order = direct_first ? std::vector<std::string>{"direct", "facade"}
                           : std::vector<std::string>{"facade", "direct"};
    for (const auto &series : order)
      events.write(probe_event(*p, series, round));
  }
  events.write(make_event(event_kind::round_done, {{"round", round}}));
}

} // namespace cuparity
