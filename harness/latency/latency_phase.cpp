// The latency phase: probe processes per cell, cells interleaved over rounds (docs/latency.md).
#include "harness/latency/latency_phase.hpp"

#include "harness/config/config.hpp"
#include "harness/latency/latency_stats.hpp"
#include "harness/latency/python_probe_process.hpp"
#include "harness/latency/round_events.hpp"
#include "harness/platform/gpu_environment.hpp"
#include "harness/platform/self_exe.hpp"
#include "harness/platform/subprocess.hpp"
#include "harness/protocol/probe_ids.hpp"
#include "harness/protocol/records.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <system_error>

namespace cuparity {
namespace fs = std::filesystem;

namespace {

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

/// The cells the phase times: those selected, or every cell, in matrix order.
std::vector<const cell *> timed_cells(const matrix &m, const std::vector<std::string> &selected) {
  std::vector<const cell *> out;
  for (const auto &c : m.cells)
    if (selected.empty() || std::find(selected.begin(), selected.end(), c.id) != selected.end())
      out.push_back(&c);
  return out;
}

/// Matrix order on even rounds, reversed on odd ones (A B, B A: drift cancels).
std::vector<const cell *> round_order(const matrix &m, const std::vector<std::string> &selected,
                                      int round) {
  std::vector<const cell *> order = timed_cells(m, selected);
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

/// Which probe process of a cell: `cuparity probe` or the Python one.
enum class prober { native, python };

/// The phase's probe processes and the samples seen so far (for the stopping rule).
class latency_rounds {
public:
  latency_rounds(const matrix &m, const latency_run_options &o, results_writer &results,
                 const std::atomic<bool> &stop)
      : m_matrix(m), m_options(o), m_results(results), m_stop(stop),
        m_log(o.log_dir + "/latency.log"), m_args{probe_process_args(m.latency, o, false),
                                                  probe_process_args(m.latency, o, true)},
        m_want_startup(selects_startup(m.latency.probes)) {
    if (runs_native_probes(m.latency))
      m_probers.push_back(prober::native);
    if (runs_python_probes(m.latency))
      m_probers.push_back(prober::python);
  }

  /// Persistent mode: one serving process per cell and prober for the whole phase, started up
  /// front. A process that does not start takes no part in the rounds.
  void start_servers() {
    for (const cell *c : timed_cells(m_matrix, m_options.cells))
      for (const prober p : m_probers) {
        auto child = start(*c, p, {"--serve"});
        if (child && read(*child, *c, p, 0, true))
          m_servers[{c, p}] = std::move(child);
      }
  }

  [[nodiscard]] bool decided() const { return all_decided(m_matrix, m_kept); }

  /// Every cell once, in this round's order; false when stopped part-way.
  bool run_round(int round) {
    for (const cell *c : round_order(m_matrix, m_options.cells, round)) {
      if (m_stop)
        return false;
      for (const prober p : m_probers)
        m_matrix.latency.persistent ? run_served(*c, p, round) : run_fresh(*c, p, round);
      if (m_want_startup && m_matrix.latency.persistent && runs_native_probes(m_matrix.latency))
        run_startup(*c, round);
    }
    return true;
  }

  /// Ends the serving processes: their input closes, they finish and exit.
  void close_servers() {
    for (auto &[key, child] : m_servers) {
      child->close_input();
      (void)child->wait();
    }
  }

private:
  using server_key = std::pair<const cell *, prober>;

  /// A probe process of the cell, or null when it cannot start (a Python process's reason is
  /// the cell's latency error, once: it would fail the same way every round).
  std::unique_ptr<child_process> start(const cell &c, prober p,
                                       const std::vector<std::string> &extra) {
    auto args = m_args[static_cast<int>(p)];
    args.insert(args.end(), extra.begin(), extra.end());
    if (p == prober::native)
      return std::make_unique<child_process>(probe_spec(m_matrix, c, m_options, args), m_log,
                                             m_matrix.latency.persistent);
    if (m_python_failed.count(&c))
      return nullptr;
    python_probe_start s = python_probe_spec(m_matrix, c, m_options, args);
    if (s.error.empty()) {
      try {
        return std::make_unique<child_process>(s.spec, m_log, m_matrix.latency.persistent);
      } catch (const std::system_error &e) {
        s.error = std::string("python probe: ") + e.what();
      }
    }
    python_failed(c, 0, s.error);
    return nullptr;
  }

  /// One round's events (or the start's) of a process. A Python process that ended before it
  /// started, or failed in a round, without saying why is named as the cell's error.
  bool read(child_process &child, const cell &c, prober p, int round, bool expect_start) {
    const round_reading r = consume_round(child, c, round, m_results, m_kept, m_stop, expect_start);
    const bool persistent = m_matrix.latency.persistent;
    if (p != prober::python || m_stop || (persistent && r.ended))
      return r.ended;
    if (persistent)
      child.kill_group();
    const process_result end = child.wait(); // a fresh process ends after its round
    if (!persistent && r.started && end.exited && end.exit_code == 0)
      return true; // its round_done says round 0, whichever round this is
    const std::string how = (end.exited ? "exit code " + std::to_string(end.exit_code)
                                        : "signal " + std::to_string(end.signal)) +
                            "; its output is in " + m_log;
    if (r.refused) {
      m_python_failed.insert(&c); // its cell_error said why
    } else if (!r.started) {
      python_failed(c, round, "python probe: the process ended before it started (" + how + ")");
    } else {
      record_error(c, round,
                   "python probe: the process failed in round " + std::to_string(round) + " (" +
                       how + ")");
    }
    return false;
  }

  void python_failed(const cell &c, int round, const std::string &message) {
    m_python_failed.insert(&c);
    record_error(c, round, message);
  }

  void record_error(const cell &c, int round, const std::string &message) {
    auto rec = make_record(record_type::latency_error,
                           {{"cell", c.id}, {"round", round}, {"message", message}});
    m_results.append(rec);
    m_kept.push_back(std::move(rec));
  }

  /// A round sent to the cell's serving process (which alternates the series' order itself); a
  /// process that fails is dropped.
  void run_served(const cell &c, prober p, int round) {
    auto it = m_servers.find({&c, p});
    if (it == m_servers.end())
      return;
    if (!it->second->send_line("round " + std::to_string(round) + " " +
                               std::to_string(round % 2)) ||
        !read(*it->second, c, p, round, false))
      m_servers.erase(it);
  }

  /// cell.startup, what a fresh process pays, measured by one in every round.
  void run_startup(const cell &c, int round) {
    child_process fresh(probe_spec(m_matrix, c, m_options, {"--probe", startup_probe}), m_log);
    (void)consume_round(fresh, c, round, m_results, m_kept, m_stop, false);
    (void)fresh.wait();
  }

  /// A round in a fresh probe process; odd rounds start each probe's series reversed.
  void run_fresh(const cell &c, prober p, int round) {
    auto child =
        start(c, p, round % 2 ? std::vector<std::string>{"--flip"} : std::vector<std::string>{});
    if (!child)
      return;
    // A fresh process's round_done always says round 0: its samples carry this round.
    (void)read(*child, c, p, round, false);
    (void)child->wait();
  }

  const matrix &m_matrix;
  const latency_run_options &m_options;
  results_writer &m_results;
  const std::atomic<bool> &m_stop;
  const std::string m_log;
  const std::array<std::vector<std::string>, 2> m_args; ///< by prober
  const bool m_want_startup;
  std::vector<prober> m_probers;
  std::vector<nlohmann::json> m_kept; ///< every record of the phase, for the stopping rule
  std::map<server_key, std::unique_ptr<child_process>> m_servers;
  std::set<const cell *> m_python_failed; ///< cells whose Python process cannot run
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
