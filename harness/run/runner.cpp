// The matrix runner: plans (cell, case) work, runs cells in fresh processes, watches them, and
// turns the recorded results into the verdict.
#include "harness/run/runner.hpp"

#include "harness/config/config.hpp"
#include "harness/latency/latency_phase.hpp"
#include "harness/matrix/matrix.hpp"
#include "harness/platform/gpu_lock.hpp"
#include "harness/platform/subprocess.hpp"
#include "harness/protocol/events.hpp"
#include "harness/protocol/exit_codes.hpp"
#include "harness/protocol/records.hpp"
#include "harness/protocol/results.hpp"
#include "harness/report/summary.hpp"
#include "harness/run/provenance.hpp"
#include "harness/suite/case_registry.hpp"
#include "harness/verdict/baseline.hpp"
#include "harness/verdict/compare.hpp"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <set>
#include <thread>
#include <unistd.h>

namespace cuparity {
namespace fs = std::filesystem;

shard_spec parse_shard(const std::string &text) {
  auto slash = text.find('/');
  try {
    if (slash != std::string::npos) {
      std::size_t a = 0, b = 0;
      int k = std::stoi(text.substr(0, slash), &a);
      int n = std::stoi(text.substr(slash + 1), &b);
      if (a == slash && b == text.size() - slash - 1 && n >= 1 && k >= 0 && k < n)
        return {k, n};
    }
  } catch (const std::exception &) {
  }
  throw std::invalid_argument("shard '" + text + "' is not K/N with 0 <= K < N (e.g. 0/4)");
}

namespace {

std::atomic<bool> g_stop{false};
extern "C" void on_stop_signal(int) {
  g_stop = true;
}

constexpr auto startup_timeout = std::chrono::minutes(5);
constexpr auto between_cases_timeout = std::chrono::seconds(120);

struct work_cell {
  const cell *c = nullptr;
  std::vector<std::string> cases;
};

class progress_line {
public:
  progress_line(std::size_t cells, std::size_t cases)
      : m_tty(isatty(2) != 0), m_cells(cells), m_cases(cases),
        m_start(std::chrono::steady_clock::now()) {}
  void case_done(bool failed) {
    std::lock_guard<std::mutex> g(m_lock);
    ++m_cases_done;
    m_failures += failed;
    print();
  }
  void cell_done() {
    std::lock_guard<std::mutex> g(m_lock);
    ++m_cells_done;
    print();
  }
  void finish() {
    if (m_tty)
      std::cerr << "\n";
  }

private:
  void print() {
    if (!m_tty)
      return; // quiet when not a terminal (CI logs stay readable)
    double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
    double eta = m_cases_done ? elapsed / m_cases_done * (m_cases - m_cases_done) : 0;
    std::fprintf(stderr, "\r[cuparity] cells %zu/%zu  cases %zu/%zu  failures %zu  ETA %.0fs   ",
                 m_cells_done, m_cells, m_cases_done, m_cases, m_failures, eta);
  }
  std::mutex m_lock;
  bool m_tty;
  std::size_t m_cells, m_cases, m_cells_done = 0, m_cases_done = 0, m_failures = 0;
  std::chrono::steady_clock::time_point m_start;
};

std::string exe_path() {
  return fs::read_symlink("/proc/self/exe").string();
}

/// The inherited environment without any matrix-controlled variable, then the cell's values.
std::map<std::string, std::string> cell_environment(const matrix &m, const cell &c,
                                                    const std::string &gpu) {
  auto env = current_environment();
  for (const auto &v : m.variables)
    env.erase(v);
  for (const auto &[k, v] : c.env)
    if (v)
      env[k] = *v;
  if (!gpu.empty())
    env["CUDA_VISIBLE_DEVICES"] = gpu;
  return env;
}

/// The lock directory shared by the cells of a run, per GPU: exclusive cases wait for the cases
/// of other cells on the same device, not for cells on other devices.
std::string lock_directory(const std::string &out_dir, const std::string &gpu) {
  const std::string primary = gpu.substr(0, gpu.find(','));
  std::string dir = out_dir + "/locks/gpu" + (primary.empty() ? "-default" : "-" + primary);
  std::error_code ec;
  fs::create_directories(dir, ec);
  return fs::absolute(dir).string();
}

std::string file_safe(const std::string &s) {
  std::string out;
  for (char ch : s)
    out += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == '.')
               ? ch
               : '_';
  return out;
}

struct cell_runner {
  const matrix &m;
  results_writer &results;
  progress_line &progress;
  std::string log_dir;
  std::string out_root;

  std::chrono::milliseconds timeout_of(const std::string &case_id) const {
    if (m.case_timeout)
      return *m.case_timeout;
    if (const case_def *d = case_registry::instance().find(case_id))
      return d->timeout;
    return std::chrono::seconds(120);
  }

  void record_case(const std::string &cell_id, const std::string &case_id, const std::string &o,
                   const std::string &message, const nlohmann::json &observations,
                   double duration_ms, int pid) {
    results.append(make_record(record_type::case_result, {{"cell", cell_id},
                                                          {"case", case_id},
                                                          {"outcome", o},
                                                          {"message", message},
                                                          {"observations", observations},
                                                          {"duration_ms", duration_ms},
                                                          {"pid", pid}}));
    progress.case_done(o != "pass" && o != "not_supported");
  }

  void run(const work_cell &w, const std::string &gpu) {
    std::vector<std::string> remaining = w.cases;
    const std::string id = w.c->id;
    const std::string log = log_dir + "/" + file_safe(id) + ".log";
    while (!remaining.empty() && !g_stop) {
      process_spec spec;
      spec.argv = {exe_path(), "cell", "--events-fd", "3"};
      for (const auto &c : remaining) {
        spec.argv.push_back("--case");
        spec.argv.push_back(c);
      }
      spec.env = cell_environment(m, *w.c, gpu);
      spec.env[gpu_lock_variable] = lock_directory(out_root, gpu);
      child_process child(spec, log);
      std::string current;
      auto case_started = std::chrono::steady_clock::now();
      auto deadline = case_started + startup_timeout;
      bool started = false, cell_failed = false, progressed = false, watchdog_fired = false;
      std::string line;
      for (;;) {
        if (g_stop) {
          child.kill_group();
          break;
        }
        auto status = child.read_line(line, std::chrono::milliseconds(200));
        if (status == child_process::read_status::timeout) {
          if (std::chrono::steady_clock::now() < deadline)
            continue;
          child.kill_group();
          (void)child.wait();
          if (!current.empty()) {
            double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                                  case_started)
                            .count();
            record_case(id, current, "timeout",
                        "killed by the watchdog after " +
                            std::to_string(timeout_of(current).count() / 1000.0) + " s",
                        nlohmann::json::object(), ms, child.pid());
            std::erase(remaining, current);
            current.clear(); // recorded: the kill that follows is not a crash of this case
            progressed = true;
            watchdog_fired = true;
          } else if (!started) {
            results.append(
                make_record(record_type::cell_error,
                            {{"cell", id},
                             {"kind", "startup"},
                             {"message", "the cell process did not start within 5 minutes"}}));
            cell_failed = true;
          }
          break;
        }
        if (status == child_process::read_status::eof)
          break;
        nlohmann::json ev;
        try {
          ev = nlohmann::json::parse(line);
        } catch (const nlohmann::json::exception &) {
          continue; // not an event (cannot happen on fd 3 unless a driver writes there)
        }
        const auto kind = event_of(ev);
        if (kind == event_kind::cell_start) {
          started = true;
          results.append(
              make_record(record_type::cell,
                          {{"cell", id},
                           {"pid", ev.value("pid", 0)},
                           {"device", gpu},
                           {"config", ev.value("config", nlohmann::json::object())},
                           {"driver", ev.value("driver", nlohmann::json::object())},
                           {"startup_ms", ev.value("startup_ms", nlohmann::json::object())}}));
          deadline = std::chrono::steady_clock::now() + between_cases_timeout;
        } else if (kind == event_kind::cell_error) {
          results.append(
              make_record(record_type::cell_error, {{"cell", id},
                                                    {"kind", ev.value("kind", "")},
                                                    {"message", ev.value("message", "")}}));
          cell_failed = true;
        } else if (kind == event_kind::case_start) {
          current = ev.value("case", "");
          case_started = std::chrono::steady_clock::now();
          deadline = case_started + timeout_of(current);
        } else if (kind == event_kind::case_end) {
          const std::string c = ev.value("case", "");
          record_case(id, c, ev.value("outcome", "error"), ev.value("message", ""),
                      ev.value("observations", nlohmann::json::object()),
                      ev.value("duration_ms", 0.0), child.pid());
          std::erase(remaining, c);
          current.clear();
          progressed = true;
          deadline = std::chrono::steady_clock::now() + between_cases_timeout;
        } else if (kind == event_kind::cell_end) {
          results.append(make_record(
              record_type::binding_map,
              {{"cell", id}, {"map", ev.value("binding_map", nlohmann::json::array())}}));
        }
      }
      if (g_stop)
        return;
      process_result r = child.wait();
      if (!current.empty()) {
        // The process died inside a case: that case crashed; the rest continue in a new one.
        std::string how = r.signal ? "killed by signal " + std::to_string(r.signal) + " (" +
                                         strsignal(r.signal) + ")"
                                   : "exited with code " + std::to_string(r.exit_code);
        double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                              case_started)
                        .count();
        record_case(id, current, "crash",
                    "the cell process " + how + " during this case (log: " + log + ")",
                    nlohmann::json::object(), ms, child.pid());
        std::erase(remaining, current);
        continue;
      }
      if (cell_failed)
        break;
      if (watchdog_fired)
        continue; // the rest of the cell runs in a new process
      if (r.exited && r.exit_code == exit_code::cell_poisoned && progressed)
        continue; // a sticky error: the rest runs in a fresh process
      if (!remaining.empty()) {
        // Ended without running them and without a crash inside a case: record, don't loop.
        for (const auto &c : remaining)
          record_case(id, c, "error",
                      "the cell process ended (exit " + std::to_string(r.exit_code) + ", signal " +
                          std::to_string(r.signal) + ") before running this case (log: " + log +
                          ")",
                      nlohmann::json::object(), 0, child.pid());
        remaining.clear();
      }
    }
    progress.cell_done();
  }
};

nlohmann::json probe_driver(const matrix &m, std::string &error) {
  process_spec spec;
  spec.argv = {exe_path(), "env", "--json"};
  spec.env = current_environment();
  for (const auto &v : m.variables)
    spec.env.erase(v);
  // The driver under test is the first cell's when the matrix chooses it.
  if (!m.cells.empty())
    if (auto it = m.cells.front().env.find(var::driver);
        it != m.cells.front().env.end() && it->second)
      spec.env[var::driver] = *it->second;
  spec.timeout = std::chrono::minutes(2);
  process_result r = run_process(spec);
  if (r.exited && r.exit_code == 0) {
    try {
      return nlohmann::json::parse(r.out);
    } catch (const nlohmann::json::exception &e) {
      error = std::string("the driver probe printed no JSON: ") + e.what();
      return nullptr;
    }
  }
  error = "the driver probe (`cuparity env`) failed (exit " + std::to_string(r.exit_code) +
          "): " + r.err + r.out;
  return nullptr;
}

bool driver_matches(const nlohmann::json &probe, const std::string &expected) {
  const auto driver = probe.value("driver", nlohmann::json::object());
  const auto config = probe.value("config", nlohmann::json::object());
  return expected == std::to_string(driver.value("driver_version", 0)) ||
         expected == driver.value("driver_version_text", "") ||
         config.value("driver_path", "").find(expected) != std::string::npos;
}

std::vector<nlohmann::json> read_all(const std::vector<std::string> &dirs) {
  std::vector<nlohmann::json> records;
  for (const auto &d : dirs) {
    auto f = read_results(d + "/results.jsonl");
    if (f.truncated_tail)
      std::cerr << "cuparity: " << d << "/results.jsonl ends in a cut-off record (a killed run); "
                << "it is ignored\n";
    records.insert(records.end(), f.records.begin(), f.records.end());
  }
  return records;
}

/// Reads a previous summary.json for latency comparison; throws naming the file.
nlohmann::json read_summary(const std::string &path) {
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error(path + ": cannot read the latency baseline (a summary.json)");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception &e) {
    throw std::runtime_error(path + ": not JSON: " + e.what());
  }
  if (j.value("schema", "") != summary_schema)
    throw std::runtime_error(path + ": schema '" + j.value("schema", "") + "' is not " +
                             summary_schema);
  return j;
}

int finish(const matrix &m, const std::vector<nlohmann::json> &records,
           const std::vector<baseline_entry> &baseline, run_facts facts, const std::string &out_dir,
           const std::optional<std::string> &write_baseline_path,
           const nlohmann::json *latency_baseline) {
  comparison c = compare_results(m, records, baseline, [](const std::string &id) {
    return case_registry::instance().find(id) != nullptr;
  });
  facts.finished = utc_now();
  facts.latency = latency_summary(m, records, latency_baseline, facts.latency_failed);
  auto summary = make_summary(m, records, c, facts);
  {
    std::ofstream out(out_dir + "/summary.json");
    out << summary.dump(2) << "\n";
  }
  write_junit(out_dir + "/junit.xml", m, records, c);
  print_console(std::cout, m, records, c, facts);
  std::cout << "cuparity: wrote " << out_dir << "/summary.json, junit.xml, results.jsonl\n";
  if (write_baseline_path) {
    std::vector<nlohmann::json> cases;
    for (const auto &r : records)
      if (is_record(r, record_type::case_result))
        cases.push_back(r);
    write_baseline(*write_baseline_path, cases,
                   "baseline of " + m.name + " written " + facts.finished + " from " + out_dir);
    std::cout << "cuparity: wrote baseline " << *write_baseline_path << "\n";
  }
  return verdict_exit_code(c, facts);
}

bool known_case_glob(const std::string &g) {
  for (const auto &c : case_registry::instance().all())
    if (case_matches(c.id, g))
      return true;
  return false;
}

} // namespace

int run_matrix(const run_options &opt) {
  auto bad = [](const std::string &msg) {
    std::cerr << "cuparity run: " << msg << "\n";
    return exit_code::bad_input;
  };
  std::optional<matrix> loaded;
  try {
    loaded.emplace(load_matrix(opt.matrix_path, known_case_glob));
  } catch (const matrix_error &e) {
    return bad(e.what());
  }
  const matrix &m = *loaded;
  for (const auto &c : opt.cases)
    if (!known_case_glob(c))
      return bad("--case '" + c + "' names no case (see `cuparity list`)");

  std::vector<baseline_entry> baseline;
  std::optional<std::string> baseline_path = opt.baseline ? opt.baseline : m.baseline;
  if (baseline_path) {
    try {
      baseline = read_baseline(*baseline_path);
    } catch (const std::exception &e) {
      return bad(std::string(e.what()) + (opt.baseline ? ""
                                                       : " (named by the matrix's "
                                                         "matrix.baseline; create it with "
                                                         "--write-baseline)"));
    }
  }

  nlohmann::json latency_base;
  if (opt.latency_baseline) {
    try {
      latency_base = read_summary(*opt.latency_baseline);
    } catch (const std::exception &e) {
      return bad(e.what());
    }
  }

  std::optional<shard_spec> shard = opt.shard;
  if (!shard) {
    const char *k = std::getenv("GTEST_SHARD_INDEX");
    const char *n = std::getenv("GTEST_TOTAL_SHARDS");
    if (k || n) {
      if (!k || !n)
        return bad("GTEST_SHARD_INDEX and GTEST_TOTAL_SHARDS must be set together");
      try {
        shard = parse_shard(std::string(k) + "/" + n);
      } catch (const std::invalid_argument &e) {
        return bad(std::string("GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS: ") + e.what());
      }
    }
  }
  const std::string shard_text =
      shard ? std::to_string(shard->index) + "/" + std::to_string(shard->count) : "";

  const std::string out_dir = opt.out_dir.empty() ? "cuparity-results/" + m.name : opt.out_dir;
  std::error_code ec;
  fs::create_directories(out_dir + "/logs", ec);
  if (ec)
    return bad("cannot create the output directory " + out_dir + ": " + ec.message());
  const std::string results_path = out_dir + "/results.jsonl";
  std::vector<nlohmann::json> previous;
  if (fs::exists(results_path) && fs::file_size(results_path) > 0) {
    if (opt.resume) {
      try {
        previous = read_all({out_dir});
      } catch (const std::exception &e) {
        return bad(e.what());
      }
      for (const auto &r : previous)
        if (is_record(r, record_type::run) &&
            (r.value("matrix", "") != m.name || r.value("shard", "") != shard_text))
          return bad(results_path + " belongs to matrix '" + r.value("matrix", "") + "' shard '" +
                     r.value("shard", "") + "'; --resume needs the same matrix and shard");
    } else if (opt.force) {
      const std::string kept = results_path + "." + std::to_string(time(nullptr)) + ".bak";
      fs::rename(results_path, kept, ec);
      std::cerr << "cuparity run: --force: previous results kept as " << kept << "\n";
    } else {
      return bad(out_dir + " already holds results: use --resume to complete them, --force to "
                           "start over (the old file is kept), or another --out");
    }
  } else if (opt.resume) {
    std::cerr << "cuparity run: --resume: nothing recorded in " << out_dir << " yet; starting\n";
  }

  std::string probe_error;
  nlohmann::json probe = probe_driver(m, probe_error);
  if (probe.is_null()) {
    std::cerr << "cuparity run: " << probe_error << "\n";
    return exit_code::environment;
  }
  if (!opt.expect_driver.empty() && !driver_matches(probe, opt.expect_driver)) {
    const auto d = probe.value("driver", nlohmann::json::object());
    std::cerr << "cuparity run: --expect-driver " << opt.expect_driver << ": found driver "
              << d.value("driver_version_text", "?") << " (" << d.value("driver_version", 0)
              << ") at " << probe["config"].value("driver_path", "?") << "\n";
    return exit_code::environment;
  }
  std::vector<std::string> gpus = opt.gpus;
  if (opt.gpus_from_ctest) {
    try {
      gpus = {gpu_from_ctest_environment()};
    } catch (const std::exception &e) {
      return bad(e.what());
    }
  }
  if (opt.all_gpus) {
    gpus.clear();
    const auto devices = probe["driver"].value("devices", nlohmann::json::array());
    for (std::size_t i = 0; i < devices.size(); ++i)
      gpus.push_back(std::to_string(i));
  }

  run_facts facts;
  facts.provenance = make_provenance(probe, opt.argv);
  facts.started = utc_now();
  facts.shard = shard_text;
  for (const auto &r : previous)
    if (is_record(r, record_type::run)) {
      facts.started = r.value("started", facts.started);
      break;
    }
  if (facts.provenance.value("simulated", false))
    std::cout << "*** SIMULATED DRIVER: no GPU driver is under test; results describe cuparity's "
                 "CPU stand-in ***\n";

  // ---- plan: (cell, case) pairs, interleaved over shards, minus what is recorded
  std::set<std::pair<std::string, std::string>> done;
  for (const auto &r : previous)
    if (is_record(r, record_type::case_result))
      done.insert({r.value("cell", ""), r.value("case", "")});
  std::vector<std::string> patterns = m.cases;
  auto selected = case_registry::instance().select(patterns, m.exclude_cases);
  if (!opt.cases.empty()) {
    std::erase_if(selected, [&](const case_def *d) {
      for (const auto &c : opt.cases)
        if (case_matches(d->id, c))
          return false;
      return true;
    });
  }
  for (const auto &id : opt.cells)
    if (std::none_of(m.cells.begin(), m.cells.end(), [&](const cell &c) { return c.id == id; }))
      return bad("--cell '" + id + "' is not a cell of " + m.path + " (see `cuparity list " +
                 m.path + "`)");
  std::vector<work_cell> work;
  std::size_t index = 0, planned = 0;
  for (const auto &c : m.cells) {
    work_cell w{&c, {}};
    const bool wanted =
        opt.cells.empty() || std::find(opt.cells.begin(), opt.cells.end(), c.id) != opt.cells.end();
    for (const case_def *d : selected) {
      const std::size_t i = index++;
      if (!wanted)
        continue;
      if (shard && static_cast<int>(i % shard->count) != shard->index)
        continue;
      if (done.count({c.id, d->id}))
        continue;
      w.cases.push_back(d->id);
    }
    planned += w.cases.size();
    if (!w.cases.empty())
      work.push_back(std::move(w));
  }

  results_writer results(results_path);
  if (previous.empty())
    results.append(make_record(record_type::run, {{"schema", results_schema},
                                                  {"matrix", m.name},
                                                  {"matrix_path", m.path},
                                                  {"shard", shard_text},
                                                  {"started", facts.started},
                                                  {"provenance", facts.provenance}}));
  else
    results.append(
        make_record(record_type::resume, {{"started", utc_now()}, {"pending", planned}}));

  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
  std::signal(SIGPIPE, SIG_IGN);
  progress_line progress(work.size(), planned);
  cell_runner runner{m, results, progress, out_dir + "/logs", out_dir};
  const auto t0 = std::chrono::steady_clock::now();
  std::atomic<std::size_t> next{0};
  const int jobs = std::max(1, opt.jobs);
  std::vector<std::thread> workers;
  for (int j = 0; j < jobs; ++j)
    workers.emplace_back([&, j] {
      // A cell sees every listed device, rotated so that its own comes first (device 0 in the
      // process: where its work lands), e.g. "1,0": cases that need two GPUs still can run.
      std::string gpu;
      for (std::size_t k = 0; k < gpus.size(); ++k)
        gpu += (k ? "," : "") + gpus[(static_cast<std::size_t>(j) + k) % gpus.size()];
      for (std::size_t i = next++; i < work.size() && !g_stop; i = next++)
        runner.run(work[i], gpu);
    });
  for (auto &w : workers)
    w.join();
  progress.finish();
  facts.functional_wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  if (g_stop) {
    std::cerr << "cuparity run: interrupted; every finished case is in " << results_path
              << "; complete the run with --resume\n";
    return 130;
  }
  results.append(make_record(record_type::functional_phase, {{"wall_s", facts.functional_wall_s}}));
  // ---- latency: the GPU to itself, after every functional cell is done
  if (m.latency.enabled && opt.latency) {
    std::cerr << "cuparity run: latency phase: " << m.cells.size() << " cells, " << m.latency.rounds
              << "-" << m.latency.max_rounds << " rounds\n";
    std::signal(SIGINT, on_stop_signal);
    std::signal(SIGTERM, on_stop_signal);
    const auto l0 = std::chrono::steady_clock::now();
    run_latency_phase(m,
                      {gpus.empty() ? "" : gpus.front(), out_dir + "/logs", opt.latency_min_time},
                      results, g_stop);
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    if (g_stop) {
      std::cerr << "cuparity run: interrupted in the latency phase; the functional results are "
                << "in " << results_path << "\n";
      return 130;
    }
    results.append(make_record(
        record_type::latency_phase,
        {{"wall_s",
          std::chrono::duration<double>(std::chrono::steady_clock::now() - l0).count()}}));
  }
  std::vector<nlohmann::json> records;
  try {
    records = read_all({out_dir});
  } catch (const std::exception &e) {
    std::cerr << "cuparity run: " << e.what() << "\n";
    return exit_code::failures;
  }
  return finish(m, records, baseline, facts, out_dir, opt.write_baseline,
                latency_base.is_null() ? nullptr : &latency_base);
}

std::string gpu_from_ctest_environment() {
  const char *count = std::getenv("CTEST_RESOURCE_GROUP_COUNT");
  if (!count)
    throw std::runtime_error("--gpus ctest: CTEST_RESOURCE_GROUP_COUNT is not set (run under "
                             "`ctest --resource-spec-file`)");
  const int n = std::atoi(count);
  for (int i = 0; i < n; ++i) {
    const std::string group = "CTEST_RESOURCE_GROUP_" + std::to_string(i);
    const char *type = std::getenv(group.c_str());
    if (!type || std::string(type) != "gpus")
      continue;
    const std::string var = group + "_GPUS";
    const char *value = std::getenv(var.c_str());
    // "id:<id>,slots:<n>" (several allocations are separated by ';'; a cell needs one).
    std::string v = value ? value : "";
    auto id = v.find("id:");
    auto end = v.find(',', id);
    if (id == std::string::npos || end == std::string::npos)
      throw std::runtime_error(var + "='" + v + "' is not 'id:<id>,slots:<n>'");
    return v.substr(id + 3, end - id - 3);
  }
  throw std::runtime_error("--gpus ctest: no CTEST_RESOURCE_GROUP_<i> of type 'gpus' (give the "
                           "test RESOURCE_GROUPS gpus:1)");
}

int write_ctest_suite(const std::string &matrix_path, const std::string &dir, int gpu_count,
                      const std::vector<std::string> &extra_args) {
  std::optional<matrix> loaded;
  try {
    loaded.emplace(load_matrix(matrix_path, known_case_glob));
  } catch (const matrix_error &e) {
    std::cerr << "cuparity ctest: " << e.what() << "\n";
    return exit_code::bad_input;
  }
  if (gpu_count < 1) {
    std::cerr << "cuparity ctest: --gpu-count must be at least 1\n";
    return exit_code::bad_input;
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  const std::string abs_dir = fs::absolute(dir).string();
  const std::string matrix_abs = fs::absolute(matrix_path).string();
  auto quote = [](const std::string &s) {
    std::string q = "\"";
    for (char c : s)
      q += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
    return q + "\"";
  };
  std::ofstream t(abs_dir + "/CTestTestfile.cmake");
  t << "# Generated by `cuparity ctest`: one test per cell of " << matrix_abs << ".\n"
    << "# Run: ctest --test-dir " << abs_dir << " -j " << gpu_count << " --resource-spec-file "
    << abs_dir << "/resources.json\n";
  std::string merge_args;
  for (const auto &c : loaded->cells) {
    const std::string name = "cell:" + c.id;
    const std::string out = abs_dir + "/cells/" + file_safe(c.id);
    t << "add_test(" << quote(name) << " " << quote(exe_path()) << " run " << quote(matrix_abs)
      << " --cell " << quote(c.id) << " --gpus ctest --force --out " << quote(out);
    for (const auto &a : extra_args)
      t << " " << quote(a);
    t << ")\nset_tests_properties(" << quote(name) << " PROPERTIES RESOURCE_GROUPS \"gpus:1\")\n";
    merge_args += " " + quote(out);
  }
  // The merge runs after every cell, failed or not (DEPENDS orders without skipping, unlike a
  // fixture): cross-cell divergences are only visible there.
  std::string cell_names;
  for (const auto &c : loaded->cells)
    cell_names += (cell_names.empty() ? "" : ";") + std::string("cell:") + c.id;
  t << "add_test(merge " << quote(exe_path()) << " merge " << quote(matrix_abs) << merge_args
    << " --out " << quote(abs_dir + "/merged") << ")\n"
    << "set_tests_properties(merge PROPERTIES DEPENDS " << quote(cell_names) << ")\n";
  std::ofstream r(abs_dir + "/resources.json");
  r << "{\"version\": {\"major\": 1, \"minor\": 0}, \"local\": [{\"gpus\": [";
  for (int i = 0; i < gpu_count; ++i)
    r << (i ? ", " : "") << "{\"id\": \"" << i << "\", \"slots\": 1}";
  r << "]}]}\n";
  std::cout << "cuparity ctest: wrote " << abs_dir << "/CTestTestfile.cmake ("
            << loaded->cells.size() << " cells + merge) and resources.json (" << gpu_count
            << " GPUs)\nrun: ctest --test-dir " << abs_dir << " -j " << gpu_count
            << " --resource-spec-file " << abs_dir << "/resources.json --output-on-failure\n";
  return exit_code::ok;
}

int summarize_results(const std::string &matrix_path, const std::vector<std::string> &result_dirs,
                      const std::string &out_dir, const std::optional<std::string> &baseline_path,
                      const std::vector<std::string> &argv,
                      const std::optional<std::string> &latency_baseline) {
  nlohmann::json latency_base;
  if (latency_baseline) {
    try {
      latency_base = read_summary(*latency_baseline);
    } catch (const std::exception &e) {
      std::cerr << "cuparity: " << e.what() << "\n";
      return exit_code::bad_input;
    }
  }
  std::optional<matrix> loaded;
  try {
    loaded.emplace(load_matrix(matrix_path, known_case_glob));
  } catch (const matrix_error &e) {
    std::cerr << "cuparity: " << e.what() << "\n";
    return exit_code::bad_input;
  }
  std::vector<nlohmann::json> records;
  std::vector<baseline_entry> baseline;
  try {
    records = read_all(result_dirs);
    auto path = baseline_path ? baseline_path : loaded->baseline;
    if (path)
      baseline = read_baseline(*path);
  } catch (const std::exception &e) {
    std::cerr << "cuparity: " << e.what() << "\n";
    return exit_code::bad_input;
  }
  run_facts facts;
  double wall = 0;
  for (const auto &r : records) {
    if (is_record(r, record_type::run)) {
      if (facts.provenance.is_null()) {
        facts.provenance = r.value("provenance", nlohmann::json::object());
        facts.started = r.value("started", "");
      }
      if (r.value("matrix", "") != loaded->name) {
        std::cerr << "cuparity: results of matrix '" << r.value("matrix", "")
                  << "' cannot be summarised with matrix '" << loaded->name << "'\n";
        return exit_code::bad_input;
      }
    }
    if (is_record(r, record_type::functional_phase))
      wall = std::max(wall, r.value("wall_s", 0.0));
  }
  if (facts.provenance.is_null()) {
    std::cerr << "cuparity: no run record in the given result directories\n";
    return exit_code::bad_input;
  }
  facts.provenance["argv"] = argv;
  facts.functional_wall_s = wall;
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  // Merged shards get one results.jsonl too, so the merged directory reads like a single run.
  if (result_dirs.size() != 1 ||
      fs::weakly_canonical(result_dirs[0]) != fs::weakly_canonical(out_dir)) {
    std::ofstream merged(out_dir + "/results.jsonl");
    for (const auto &r : records)
      merged << r.dump() << "\n";
  }
  return finish(*loaded, records, baseline, facts, out_dir, std::nullopt,
                latency_base.is_null() ? nullptr : &latency_base);
}

} // namespace cuparity
