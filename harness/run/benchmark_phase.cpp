// The benchmark phase (docs/configuration.md#benchmarks): processes, their JSON, latency records.
#include "harness/run/benchmark_phase.hpp"

#include "harness/external/suite_process.hpp"
#include "harness/io/input_file.hpp"
#include "harness/platform/self_exe.hpp"
#include "harness/platform/subprocess.hpp"
#include "harness/protocol/records.hpp"
#include "harness/run/benchmark_json.hpp"
#include "harness/run/cell_environment.hpp"
#include "harness/run/run_layout.hpp"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <set>

namespace cuparity {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

/// The configuration cuparity reads from the cell's variables (`cuparity env --json`): the
/// binding they select and the semantic group, which the latency summary compares within. Null
/// when it cannot be read (the cell's driver does not open): the cell's series are then stated,
/// not compared.
json cell_config(const std::map<std::string, std::string> &env) {
  const process_result r =
      run_process({{self_executable(), "env", "--json"}, env, std::chrono::minutes(2)});
  const json doc = json::parse(r.out, nullptr, false);
  return doc.is_object() && doc.contains("config") && doc["config"].is_object() ? doc["config"]
                                                                                : json();
}

/// One cell's part of the phase: its environment, and the benchmarks that failed there.
struct bench_cell {
  const cell *c = nullptr;
  std::map<std::string, std::string> env;
  std::string env_error; ///< why the cell's environment could not be made ("" when it was)
  std::set<std::string> failed;
  std::string binding; ///< the binding the cell's variables select ("" when unread)
};

class benchmark_rounds {
public:
  benchmark_rounds(const matrix &m, const benchmark_run_options &o, results_writer &results,
                   const std::atomic<bool> &stop)
      : m_matrix(m), m_options(o), m_results(results), m_stop(stop),
        m_root(fs::absolute(o.out_root).string() + "/benchmarks") {}

  /// Each cell's environment and latency_cell record, before any round.
  void prepare() {
    std::error_code ec;
    fs::remove_all(m_root, ec); // a resumed run times its benchmarks afresh
    for (const auto &c : m_matrix.cells) {
      const auto &only = m_options.cells;
      if (!only.empty() && std::find(only.begin(), only.end(), c.id) == only.end())
        continue; // not selected (--cell): the functional phase did not run it either
      bench_cell b{&c, {}, {}, {}};
      try {
        b.env = cell_environment(m_matrix, c, m_options.gpu,
                                 lock_directory(m_options.out_root, m_options.gpu));
        if (json config = cell_config(b.env); !config.is_null()) {
          b.binding = config.value("binding", "");
          m_results.append(make_record(record_type::latency_cell,
                                       {{"cell", c.id}, {"config", std::move(config)}}));
        }
      } catch (const results_write_error &) {
        throw;
      } catch (const std::exception &e) {
        b.env_error = e.what();
      }
      m_cells.push_back(std::move(b));
    }
  }

  /// Round `round` of every benchmark that has one; false when stopped part-way.
  bool run_round(int round) {
    std::vector<bench_cell *> order;
    for (auto &b : m_cells)
      order.push_back(&b);
    if (round % 2)
      std::reverse(order.begin(), order.end());
    for (const auto &x : m_matrix.benchmarks) {
      if (round >= x.rounds)
        continue;
      for (bench_cell *b : order)
        if (!run_in_cell(x, *b, round))
          return false;
    }
    return true;
  }

private:
  /// The benchmark once (twice with its control) in one cell; false when stopped.
  bool run_in_cell(const external_benchmark &x, bench_cell &b, int round) {
    if (b.failed.count(x.name))
      return true;
    if (!b.env_error.empty()) {
      fail(x, b, round, "the cell's environment could not be made: " + b.env_error);
      return true;
    }
    std::vector<std::string> series{"facade"};
    if (x.control)
      series = round % 2 ? std::vector<std::string>{"control", "facade"}
                         : std::vector<std::string>{"facade", "control"};
    for (const auto &s : series) {
      if (m_stop)
        return false;
      if (!run_once(x, b, round, s))
        return !m_stop;
    }
    return true;
  }

  /// One process; its benchmarks as samples, or the cell's error. False when it failed.
  bool run_once(const external_benchmark &x, bench_cell &b, int round, const std::string &series) {
    const std::string dir = m_root + "/" + file_safe(b.c->id) + "/" + x.name;
    const std::string out = dir + "/r" + std::to_string(round) + (series == "control" ? "c" : "");
    const std::string json_path = out + "/benchmark.json";
    suite_process_spec spec;
    for (const auto &arg : x.command) {
      std::string a = arg;
      for (auto at = a.find("{json}"); at != std::string::npos; at = a.find("{json}", at))
        a.replace(at, 6, json_path), at += json_path.size();
      spec.command.push_back(std::move(a));
    }
    spec.dir = out, spec.suite_dir = dir, spec.env = b.env, spec.cwd = x.root, spec.program = true;
    spec.extra_env = suite_environment_of(m_matrix, *b.c, x.environment);
    spec.timeout = std::chrono::milliseconds(static_cast<long long>(x.timeout_s * 1000));
    std::vector<benchmark_timing> timings;
    try {
      fs::create_directories(dir);
      const suite_process_result p = run_suite_process(spec, m_stop);
      if (p.stopped)
        return false;
      if (auto why = process_problem(p, json_path)) {
        fail(x, b, round, *why);
        return false;
      }
      timings = read_benchmark_file(json_path, x.format);
      if (const std::string why = benchmark_binding_problem(timings, b.binding); !why.empty()) {
        fail(x, b, round, why, "did not time the cell's binding");
        return false;
      }
    } catch (const results_write_error &) {
      throw;
    } catch (const std::exception &e) {
      fail(x, b, round, e.what());
      return false;
    }
    for (const auto &t : timings)
      m_results.append(
          make_record(record_type::latency_sample, {{"round", round},
                                                    {"cell", b.c->id},
                                                    {"probe", benchmark_probe(x.name, t.test)},
                                                    {"series", series},
                                                    {"kind", "benchmark"},
                                                    {"unit", "ns"},
                                                    {"value", t.median_ns}}));
    return true;
  }

  /// Why a process's result cannot be read: it failed (whatever it wrote), or wrote no JSON.
  static std::optional<std::string> process_problem(const suite_process_result &p,
                                                    const std::string &json_path) {
    std::error_code ec;
    const bool written = fs::is_regular_file(json_path, ec);
    if (p.exit_code == 0 && !p.ended_abnormally() && written)
      return std::nullopt;
    std::string why = "its process " + p.how_it_ended();
    if (!written)
      why += (p.exit_code == 0 ? " but wrote no JSON at " : " and wrote no JSON at ") + json_path;
    return why + "; the end of its log (" + p.log_path + "):\n" + log_tail(p.log_path, 8);
  }

  /// The benchmark's error in this cell: a latency_error record, and no further round there.
  void fail(const external_benchmark &x, bench_cell &b, int round, const std::string &why,
            const std::string &what = "could not run") {
    b.failed.insert(x.name);
    const std::string message = "benchmark '" + x.name + "' " + what + ": " + why;
    std::cerr << "cuparity run: cell " << b.c->id << ", round " << round << ": " << message << "\n";
    m_results.append(make_record(
        record_type::latency_error,
        {{"cell", b.c->id}, {"round", round}, {"benchmark", x.name}, {"message", message}}));
  }

  const matrix &m_matrix;
  const benchmark_run_options &m_options;
  results_writer &m_results;
  const std::atomic<bool> &m_stop;
  const std::string m_root;
  std::vector<bench_cell> m_cells;
};

} // namespace

std::string benchmark_binding_problem(const std::vector<benchmark_timing> &timings,
                                      const std::string &cell_binding) {
  for (const auto &t : timings)
    if (!t.binding.empty() && !cell_binding.empty() && t.binding != cell_binding)
      return "'" + t.test + "' reports it bound " + t.binding + " (" + t.binding_at +
             ") where the cell's variables select " + cell_binding +
             " (a fallback): its figures are left out, never compared as " + cell_binding;
  return "";
}

std::string benchmark_probe(const std::string &benchmark, const std::string &test) {
  return "bench:" + benchmark + ":" + test;
}

void run_benchmark_phase(const matrix &m, const benchmark_run_options &o, results_writer &results,
                         const std::atomic<bool> &stop) {
  benchmark_rounds rounds(m, o, results, stop);
  rounds.prepare();
  int most = 0;
  for (const auto &x : m.benchmarks)
    most = std::max(most, x.rounds);
  for (int round = 0; round < most && !stop; ++round)
    if (!rounds.run_round(round))
      return;
}

} // namespace cuparity
