// Probe rounds: the timed loop per probe, its retry without the other backend, the events.
#include "harness/probes/probe_runner.hpp"

#include "harness/protocol/events.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

namespace cuparity {
namespace {

using json = nlohmann::json;

/// A value to six significant digits: the events carry thousands of block times per round, and
/// the host's noise is far above the seventh digit.
double significant(double x) {
  if (x == 0 || !std::isfinite(x))
    return x;
  const double scale = std::pow(10.0, 5 - static_cast<int>(std::floor(std::log10(std::fabs(x)))));
  return std::round(x * scale) / scale;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// One probe's round: the state after its loop, or the error that ended it.
struct probe_run {
  probe_state state;
  std::string error;       ///< the probe failed in every series
  std::string other_error; ///< the other backend's calls failed; the round ran without them
};

/// Runs the probe; when a call through the other backend's pointer throws, runs it again without
/// that series, so one backend's failure does not cost the cell its own measurement.
probe_run run_probe(const probe_def &p, probe_env &env, probe_plan plan) {
  probe_run run{probe_state(plan, env.other), "", ""};
  try {
    p.body(run.state, env);
    return run;
  } catch (const std::exception &e) {
    if (run.state.active() != probe_series::other || !plan.wanted[2]) {
      run.error = e.what();
      return run;
    }
    run.other_error = e.what();
  }
  plan.wanted[2] = false;
  probe_run again = run_probe(p, env, plan);
  again.other_error = run.other_error;
  return again;
}

/// Each series' per-call times, block by block (the blocks of one triple at the same index).
std::vector<std::vector<double>> per_call_ns(const probe_def &p, const probe_state &s) {
  std::vector<std::vector<double>> out(probe_series_count);
  for (const auto &b : s.blocks())
    out[static_cast<int>(b.series)].push_back(
        significant(b.ns / static_cast<double>(b.iterations * p.calls_per_iteration)));
  return out;
}

json series_event(const probe_def &p, probe_series series, const std::vector<double> &ns,
                  std::int64_t iterations, int round) {
  json ev = make_event(event_kind::probe, {{"probe", p.name},
                                           {"series", to_string(series)},
                                           {"kind", to_string(p.kind)},
                                           {"unit", unit_of(p.kind)},
                                           {"iterations", iterations},
                                           {"blocks", ns.size()},
                                           {"round", round}});
  if (ns.empty()) {
    ev["error"] = "no measurement";
    return ev;
  }
  const double value = median_of(ns);
  ev["value"] = p.kind == probe_kind::bandwidth
                    ? p.bytes_per_iteration / p.calls_per_iteration / value
                    : value;
  return ev;
}

json pairs_event(const probe_def &p, const probe_run &run, probe_env &env,
                 const std::vector<std::vector<double>> &ns, int round) {
  // The exported symbols this backend bound for the probe: what a delay must slow (calibrate).
  json symbols = json::array();
  for (entry_id id : run.state.entries())
    symbols.push_back(env.drv.resolved(id).symbol);
  json times = json::object();
  for (int s = 0; s < probe_series_count; ++s)
    if (run.state.ran()[s])
      times[to_string(static_cast<probe_series>(s))] = ns[s];
  json ev = make_event(event_kind::probe_pairs,
                       {{"probe", p.name},
                        {"round", round},
                        {"own", std::string(env.drv.backend_name())},
                        {"other", env.other ? std::string(env.other->backend_name()) : ""},
                        {"same_address", run.state.ran()[2] && run.state.same_address()},
                        {"block_iterations", run.state.block_iterations()},
                        {"symbols", symbols},
                        {"per_call_ns", times}});
  std::string missing = run.other_error.empty() ? run.state.other_missing() : run.other_error;
  if (!missing.empty())
    ev["other_missing"] = missing;
  return ev;
}

void write_probe(const probe_def &p, probe_env &env, const probe_plan &plan, int round,
                 const event_stream &events) {
  const probe_run run = run_probe(p, env, plan);
  if (!run.error.empty()) {
    json ev = series_event(p, probe_series::facade, {}, 0, round);
    ev["error"] = run.error;
    events.write(ev);
    return;
  }
  const auto ns = per_call_ns(p, run.state);
  for (int s = 0; s < probe_series_count; ++s)
    if (run.state.ran()[s])
      events.write(series_event(
          p, static_cast<probe_series>(s), ns[s],
          static_cast<std::int64_t>(ns[s].size()) * run.state.block_iterations(), round));
  if (run.state.ran()[1])
    events.write(pairs_event(p, run, env, ns, round));
}

} // namespace

probe_runner::probe_runner(std::vector<const probe_def *> selected, probe_env &env,
                           const probe_timing &timing)
    : m_selected(std::move(selected)), m_env(env), m_timing(timing) {}

void probe_runner::run_round(int round, bool flip, const event_stream &events) const {
  for (const probe_def *p : m_selected) {
    const auto own = m_timing.budget_by_probe.find(p->name);
    const double budget = own != m_timing.budget_by_probe.end() ? own->second : m_timing.budget_s;
    write_probe(*p, m_env, {m_timing.block_s, budget, flip, {true, true, true}}, round, events);
  }
  events.write(make_event(event_kind::round_done, {{"round", round}}));
}

} // namespace cuparity
