// The latency phase: probe processes per cell, cells interleaved over rounds (docs/latency.md).
#include "harness/latency/latency_phase.hpp"

#include "harness/config/config.hpp"
#include "harness/latency/latency_stats.hpp"
#include "harness/latency/round_events.hpp"
#include "harness/platform/gpu_environment.hpp"
#include "harness/platform/self_exe.hpp"
#include "harness/platform/subprocess.hpp"
#include "harness/protocol/probe_ids.hpp"
#include "harness/protocol/records.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>

namespace cuparity {
namespace fs = std::filesystem;

namespace {

/// The arguments every probe process of the phase gets: its time per probe and the selection.
std::vector<std::string> process_args(const latency_settings &l, const latency_run_options &o) {
  const double min_time = o.min_time_override > 0 ? o.min_time_override : l.min_time_s;
  std::vector<std::string> args{"--min-time", std::to_string(min_time), "--block-time",
                                std::to_string(l.block_time_s)};
  for (const auto &[probe, seconds] : l.min_times)
    args.insert(args.end(), {"--probe-time", probe + "=" + std::to_string(seconds)});
  for (const auto &p : l.probes)
    args.insert(args.end(), {"--probe", p});
  return args;
}

/// The stopping rule: no comparison is left ambiguous, judged by the summary's own rules on the
/// records so far (so the phase stops on exactly what the verdict will say).
bool all_decided(const matrix &m, const std::vector<nlohmann::json> &kept) {
  bool failed = false;
  const nlohmann::json summary = latency_summary(m, kept, nullptr, failed);
  if (summary.is_null())
    return false;
  for (const char *block : {"comparisons", "paired"})
    for (const auto &c : summary[block])
      if (c.value("verdict", "") == "ambiguous")
        return false;
  return true;
}

/// Matrix order on even rounds, reversed on odd ones (A B, B A: drift cancels).
std::vector<const cell *> round_order(const matrix &m, int round) {
  std::vector<const cell *> order;
  for (const auto &c : m.cells)
    order.push_back(&c);
  if (round % 2)
    std::reverse(order.begin(), order.end());
  return order;
}

/// The GPU's clocks and temperature after a round, so drift can be read against the samples.
void record_environment(int round, results_writer &results) {
  nlohmann::json env = read_gpu_environment(0);
  env["type"] = to_string(record_type::latency_environment);
  env["round"] = round;
  results.append(env);
}

process_spec probe_spec(const matrix &m, const cell &c, const latency_run_options &o,
                        const std::vector<std::string> &args) {
  process_spec spec;
  spec.argv = {self_executable(), "probe", "--events-fd", "3"};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env = environment_with(cell_changes(m.variables, c.env, o.gpu));
  return spec;
}

} // namespace

namespace {

/// The phase's probe processes and the samples seen so far (for the stopping rule).
class latency_rounds {
public:
  latency_rounds(const matrix &m, const latency_run_options &o, results_writer &results,
                 const std::atomic<bool> &stop)
      : m_matrix(m), m_options(o), m_results(results), m_stop(stop),
        m_log(o.log_dir + "/latency.log"), m_args(process_args(m.latency, o)),
        m_want_startup(selects_startup(m.latency.probes)) {}

  /// Persistent mode: one serving process per cell for the whole phase, started up front. A
  /// cell whose process does not start takes no part in the rounds.
  void start_servers() {
    for (const auto &c : m_matrix.cells) {
      auto args = m_args;
      args.push_back("--serve");
      auto child =
          std::make_unique<child_process>(probe_spec(m_matrix, c, m_options, args), m_log, true);
      if (consume_round(*child, c, 0, m_results, m_kept, m_stop, true))
        m_servers[&c] = std::move(child);
    }
  }

  [[nodiscard]] bool decided() const { return all_decided(m_matrix, m_kept); }

  /// Every cell once, in this round's order; false when stopped part-way.
  bool run_round(int round) {
    for (const cell *c : round_order(m_matrix, round)) {
      if (m_stop)
        return false;
      if (m_matrix.latency.persistent)
        run_served(*c, round);
      else
        run_fresh(*c, round);
    }
    return true;
  }

  /// Ends the serving processes: their input closes, they finish and exit.
  void close_servers() {
    for (auto &[c, child] : m_servers) {
      child->close_input();
      (void)child->wait();
    }
  }

private:
  /// A round sent to the cell's serving process (which alternates the series' order itself); a
  /// process that fails is dropped. cell.startup, what a fresh process pays, is measured by one.
  void run_served(const cell &c, int round) {
    auto it = m_servers.find(&c);
    if (it == m_servers.end())
      return;
    if (!it->second->send_line("round " + std::to_string(round) + " " +
                               std::to_string(round % 2)) ||
        !consume_round(*it->second, c, round, m_results, m_kept, m_stop, false))
      m_servers.erase(it);
    if (m_want_startup) {
      child_process fresh(probe_spec(m_matrix, c, m_options, {"--probe", startup_probe}), m_log);
      consume_round(fresh, c, round, m_results, m_kept, m_stop, false);
      (void)fresh.wait();
    }
  }

  /// A round in a fresh probe process; odd rounds start each probe's series reversed.
  void run_fresh(const cell &c, int round) {
    auto args = m_args;
    if (round % 2)
      args.push_back("--flip");
    child_process child(probe_spec(m_matrix, c, m_options, args), m_log);
    consume_round(child, c, round, m_results, m_kept, m_stop, false);
    (void)child.wait();
  }

  const matrix &m_matrix;
  const latency_run_options &m_options;
  results_writer &m_results;
  const std::atomic<bool> &m_stop;
  const std::string m_log;
  const std::vector<std::string> m_args;
  const bool m_want_startup;
  std::vector<nlohmann::json> m_kept; ///< every record of the phase, for the stopping rule
  std::map<const cell *, std::unique_ptr<child_process>> m_servers;
};

} // namespace

void run_latency_phase(const matrix &m, const latency_run_options &o, results_writer &results,
                       const std::atomic<bool> &stop) {
  const auto &l = m.latency;
  latency_rounds rounds(m, o, results, stop);
  if (l.persistent)
    rounds.start_servers();
  const auto start = std::chrono::steady_clock::now();
  const auto spent = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  for (int round = 0; round < l.max_rounds && !stop; ++round) {
    if (round >= l.rounds && (rounds.decided() || (l.budget_s > 0 && spent() >= l.budget_s)))
      break;
    if (!rounds.run_round(round))
      return; // stopped: the serving processes are killed, not waited for
    record_environment(round, results);
  }
  rounds.close_servers();
}

} // namespace cuparity
