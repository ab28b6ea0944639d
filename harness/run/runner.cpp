// `cuparity run`, step by step: check inputs, plan, run cells and latency, write the verdict.
#include "harness/run/runner.hpp"

#include "harness/config/env_vars.hpp"
#include "harness/io/input_file.hpp"
#include "harness/latency/latency_phase.hpp"
#include "harness/matrix/external_suites.hpp"
#include "harness/protocol/exit_codes.hpp"
#include "harness/protocol/records.hpp"
#include "harness/protocol/results.hpp"
#include "harness/run/benchmark_phase.hpp"
#include "harness/run/cell_environment.hpp"
#include "harness/run/cell_watch.hpp"
#include "harness/run/driver_check.hpp"
#include "harness/run/out_dir.hpp"
#include "harness/run/outputs.hpp"
#include "harness/run/package_env.hpp"
#include "harness/run/placement.hpp"
#include "harness/run/plan_identity.hpp"
#include "harness/run/provenance.hpp"
#include "harness/run/run_layout.hpp"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <thread>

namespace cuparity {
namespace fs = std::filesystem;

namespace {

std::atomic<bool> g_stop{false};
std::atomic<int> g_stop_signal{0}; ///< the signal that set g_stop (lock-free: safe in a handler)
extern "C" void on_stop_signal(int sig) {
  g_stop_signal = sig;
  g_stop = true;
}

/// While a phase runs, SIGINT, SIGTERM and SIGHUP (a closed terminal or SSH session) only set
/// g_stop: the cell watches and the latency phase then kill the process group of every child they
/// started (a child's helpers die with it, by PR_SET_PDEATHSIG), record nothing for what was cut
/// short, and every finished case stays recorded, so that --resume can complete the run.
void catch_stop_signals(bool on) {
  std::signal(SIGINT, on ? on_stop_signal : SIG_DFL);
  std::signal(SIGTERM, on ? on_stop_signal : SIG_DFL);
  std::signal(SIGHUP, on ? on_stop_signal : SIG_DFL);
}

/// The exit code of a run the signal stopped: 128 + the signal's number.
int stopped_code() {
  switch (g_stop_signal) {
  case SIGTERM:
    return exit_code::terminated;
  case SIGHUP:
    return exit_code::hung_up;
  default:
    return exit_code::interrupted;
  }
}

/// The end of a run before its verdict: the exit code, and what "cuparity run: " reports.
struct run_stop {
  int code;
  std::string message;
};

[[noreturn]] void bad(const std::string &message) {
  throw run_stop{exit_code::bad_input, message};
}

/// What a run reads and checks before it starts anything.
struct run_inputs {
  std::vector<baseline_entry> baseline;
  nlohmann::json latency_base; ///< null without a latency baseline
  std::optional<shard_spec> shard;
  std::string out_dir, results_path;
};

std::vector<baseline_entry> read_run_baseline(const run_options &opt, const matrix &m) {
  const std::optional<std::string> path = opt.baseline ? opt.baseline : m.baseline;
  if (!path)
    return {};
  try {
    return read_baseline(*path);
  } catch (const std::exception &e) {
    bad(std::string(e.what()) + (opt.baseline ? ""
                                              : " (named by the matrix's matrix.baseline; create "
                                                "it with --write-baseline)"));
  }
}

std::optional<shard_spec> resolve_shard(const run_options &opt) {
  if (opt.shard)
    return opt.shard;
  try {
    return shard_from_environment();
  } catch (const std::invalid_argument &e) {
    bad(e.what());
  }
}

run_inputs read_inputs(const run_options &opt, const matrix &m) {
  run_inputs in;
  in.baseline = read_run_baseline(opt, m);
  if (opt.latency_baseline) {
    try {
      in.latency_base = read_summary(*opt.latency_baseline);
    } catch (const std::exception &e) {
      bad(e.what());
    }
  }
  in.shard = resolve_shard(opt);
  // file_safe: a matrix name can never lead the default --out out of cuparity-results/.
  in.out_dir = opt.out_dir.empty() ? "cuparity-results/" + file_safe(m.name) : opt.out_dir;
  in.results_path = in.out_dir + "/results.jsonl";
  return in;
}

/// The selection must name what exists, before the driver check runs or --out is made.
/// Every binding map a cell names must be a file to read: a directory, FIFO or device there is
/// bad input of the matrix (exit 2, naming cell and file), caught before any cell starts rather
/// than as one cell error per cell.
void check_map_files(const matrix &m) {
  for (const auto &c : m.cells) {
    const auto it = c.env.find(var::binding_map);
    if (it == c.env.end() || !it->second || it->second->empty())
      continue;
    try {
      (void)read_input_file(*it->second, std::string(var::binding_map));
    } catch (const bad_input_error &e) {
      bad("cell " + c.id + ": " + e.what());
    }
  }
}

void check_selection(const run_options &opt, const matrix &m) {
  check_map_files(m);
  if (!m.suites.empty() && !opt.cases.empty())
    bad("--case cannot narrow " + m.path +
        ": its [[suite]] tables choose their own tests (narrow "
        "them in the suite's command)");
  for (const auto &c : opt.cases)
    if (!known_case_glob(c))
      bad("--case '" + c + "' names no case (see `cuparity list`)");
  if (auto id = unknown_cell(m, opt.cells))
    bad("--cell '" + *id + "' is not a cell of " + m.path + " (see `cuparity list " + m.path +
        "`)");
}

/// The `cuparity env --json` document of the driver under test; it must be the expected one.
nlohmann::json check_expected_driver(const run_options &opt, const matrix &m) {
  std::string error;
  nlohmann::json identity = check_driver(m, error);
  if (identity.is_null())
    throw run_stop{exit_code::environment, error};
  if (!opt.expect_driver.empty() && !driver_matches(identity, opt.expect_driver))
    throw run_stop{exit_code::environment, driver_mismatch(identity, opt.expect_driver)};
  return identity;
}

/// Every ordinal in `gpus` must be a device the driver check saw. Under an inherited
/// CUDA_VISIBLE_DEVICES the check saw a subset numbered otherwise, so ordinals are not checked;
/// UUIDs (GPU-..., MIG-...) are left to the driver.
void check_gpus(const std::vector<std::string> &gpus, const nlohmann::json &devices) {
  if (std::getenv("CUDA_VISIBLE_DEVICES"))
    return;
  for (const auto &g : gpus) {
    if (g.empty() || g.find_first_not_of("0123456789") != std::string::npos)
      continue;
    if (g.size() > 6 || std::stoul(g) >= devices.size())
      bad("--gpus: device " + g + " does not exist: the driver check saw " +
          std::to_string(devices.size()) + " device(s) (0.." +
          std::to_string(devices.empty() ? 0 : devices.size() - 1) + ")");
  }
}

/// The devices to spread cells over: --gpus, CTest's allocation, or every device the driver check
/// saw.
std::vector<std::string> choose_gpus(const run_options &opt, const nlohmann::json &identity) {
  std::vector<std::string> gpus = opt.gpus;
  if (opt.gpus_from_ctest) {
    try {
      gpus = {gpu_from_ctest_environment()};
    } catch (const std::exception &e) {
      bad(e.what());
    }
  }
  const auto devices = identity["driver"].value("devices", nlohmann::json::array());
  if (opt.all_gpus) {
    gpus.clear();
    for (std::size_t i = 0; i < devices.size(); ++i)
      gpus.push_back(std::to_string(i));
  }
  check_gpus(gpus, devices);
  return gpus;
}

/// The run's facts so far; a resumed run keeps the start of the run it completes.
run_facts start_facts(const run_options &opt, const run_inputs &in, const nlohmann::json &identity,
                      const prepared_out_dir &out) {
  run_facts facts;
  facts.provenance = make_provenance(identity, opt.argv);
  facts.started = utc_now();
  facts.shard = shard_text(in.shard);
  for (const auto &r : out.previous)
    if (is_record(r, record_type::run)) {
      facts.started = r.value("started", facts.started);
      break;
    }
  if (facts.provenance.value("simulated", false))
    std::cout << "*** SIMULATED DRIVER: no GPU driver is under test; results describe cuparity's "
                 "CPU stand-in ***\n";
  return facts;
}

/// A new run's first record, or a resumed run's note of what is still pending.
void record_start(results_writer &results, const matrix &m, const run_facts &facts,
                  const prepared_out_dir &out, const nlohmann::json &plan, std::size_t planned) {
  if (out.previous.empty())
    results.append(make_record(record_type::run, {{"schema", results_schema},
                                                  {"matrix", m.name},
                                                  {"matrix_path", m.path},
                                                  {"shard", facts.shard},
                                                  {"started", facts.started},
                                                  {"provenance", facts.provenance},
                                                  {"plan", plan}}));
  else
    results.append(
        make_record(record_type::resume, {{"started", utc_now()}, {"pending", planned}}));
}

/// The devices of GPU `j`'s workers: every listed one, rotated so that its own comes first (device
/// 0 in the process: where its work lands), e.g. "1,0": cases that need two GPUs still can run.
std::string worker_gpus(const std::vector<std::string> &gpus, std::size_t j) {
  std::string gpu;
  for (std::size_t k = 0; k < gpus.size(); ++k)
    gpu += (k ? "," : "") + gpus[(j + k) % gpus.size()];
  return gpu;
}

/// One cell; what the runner itself cannot do for it (its log cannot be opened, a process cannot be
/// started) becomes that cell's cell_error, and the other cells go on. An exception leaving a
/// worker thread would end the whole run with SIGABRT and lose its summary.
/// Nothing leaves a worker thread (an exception there would end the process): a cell the runner
/// could not run is a cell_error record, and when even that cannot be written (the results file's
/// disk is full) the writer keeps the failure and the phase stops taking cells
/// (run_functional_phase); run_cells then ends the run naming it.
void run_guarded(const cell_runner &runner, const work_cell &w, const std::string &gpu) noexcept {
  std::string why, kind = "runner";
  try {
    runner.run(w, gpu);
    return;
  } catch (const results_write_error &) {
    return; // the writer keeps it; no record can follow
  } catch (const package_error &e) {
    // Its packages value could not be installed: the same error in every cell of that value.
    why = e.what();
    kind = "packages";
  } catch (const std::exception &e) {
    why = "the runner could not run this cell: " + std::string(e.what());
  } catch (...) {
    why = "the runner could not run this cell: an unknown exception";
  }
  try {
    runner.results.append(make_record(record_type::cell_error,
                                      {{"cell", w.c->id}, {"kind", kind}, {"message", why}}));
  } catch (...) {
    // The writer keeps a write failure; anything else (no memory for the record) loses this
    // cell's error only, and the cell stays unrecorded for --resume.
  }
}

/// Runs the cells, `jobs` at a time; returns the phase's wall time in seconds. Over several GPUs
/// each cell is placed on one GPU beforehand (place_work) and each GPU's workers empty its own
/// queue. One shared queue left a GPU's share to timing: a GPU whose workers happened to be quicker
/// took more cells (on the two-H200 host of reports/runs/2026-11-29-h200x2-46096a6 the split was
/// 9 and 9, but nothing made it so), and the slower GPU's share decided the phase's time.
double run_functional_phase(const std::vector<work_cell> &work,
                            const std::vector<std::string> &gpus, const cell_runner &runner,
                            int jobs) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<gpu_share> shares = place_work(work, gpus.size(), jobs);
  std::vector<std::atomic<std::size_t>> next(shares.size());
  std::vector<std::thread> workers;
  for (std::size_t g = 0; g < shares.size(); ++g)
    for (int k = 0; k < shares[g].workers; ++k)
      workers.emplace_back([&, g] {
        const std::string gpu = worker_gpus(gpus, g);
        const std::vector<std::size_t> &queue = shares[g].cells;
        for (std::size_t i = next[g]++; i < queue.size() && !g_stop && !runner.results.failure();
             i = next[g]++)
          run_guarded(runner, work[queue[i]], gpu);
      });
  for (auto &w : workers)
    w.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// A suite that runs its own processes (pytest -n, `jobs` in [[suite]]) takes that share of -j.
int cells_at_once(int jobs, const matrix &m) {
  int per_cell = 1;
  for (const auto &x : m.suites)
    per_cell = std::max(per_cell, x.jobs);
  return std::max(1, jobs / per_cell);
}

void run_cells(const run_options &opt, const matrix &m, const run_inputs &in,
               const std::vector<work_cell> &work, const std::vector<std::string> &gpus,
               results_writer &results, run_facts &facts) {
  catch_stop_signals(true);
  std::signal(SIGPIPE, SIG_IGN);
  progress_line progress(work.size(), planned_cases(work));
  const cell_runner runner{m, results, progress, in.out_dir + "/logs", in.out_dir, g_stop};
  facts.functional_wall_s = run_functional_phase(work, gpus, runner, cells_at_once(opt.jobs, m));
  progress.finish();
  catch_stop_signals(false);
  if (const auto failed = results.failure())
    throw run_stop{exit_code::environment,
                   *failed + "; every case recorded before it is kept: make room and complete the "
                             "run with --resume"};
  if (g_stop) {
    // The interrupted phase's time counts too: a resumed run reports the whole functional time.
    results.append(make_record(record_type::functional_phase,
                               {{"wall_s", facts.functional_wall_s}, {"interrupted", true}}));
    throw run_stop{stopped_code(), "interrupted; every finished case is in " + in.results_path +
                                       "; complete the run with --resume"};
  }
  results.append(make_record(record_type::functional_phase, {{"wall_s", facts.functional_wall_s}}));
}

/// The latency phase: the GPU to itself, after every functional cell is done.
void run_latency(const run_options &opt, const matrix &m, const run_inputs &in,
                 const std::vector<std::string> &gpus, results_writer &results) {
  const std::size_t cells = opt.cells.empty() ? m.cells.size() : opt.cells.size();
  std::cerr << "cuparity run: latency phase: " << cells << " cells, " << m.latency.rounds << "-"
            << m.latency.max_rounds << " rounds\n";
  catch_stop_signals(true);
  const auto l0 = std::chrono::steady_clock::now();
  const std::string gpu = gpus.empty() ? "" : gpus.front();
  latency_run_options lo{gpu, in.out_dir + "/logs", opt.latency_min_time, nullptr, opt.cells};
  // The Python probe process sees the cell's Python: its packages folder first on PYTHONPATH.
  lo.python_environment = [&m, gpu, lock = lock_directory(in.out_dir, gpu)](const cell &c) {
    return cell_environment(m, c, gpu, lock);
  };
  run_latency_phase(m, lo, results, g_stop);
  catch_stop_signals(false);
  if (g_stop)
    throw run_stop{stopped_code(),
                   "interrupted in the latency phase; the functional results are in " +
                       in.results_path};
  results.append(make_record(
      record_type::latency_phase,
      {{"wall_s", std::chrono::duration<double>(std::chrono::steady_clock::now() - l0).count()}}));
}

/// The benchmark phase ([[benchmark]]): after the latency phase, the GPU still to itself.
void run_benchmarks(const matrix &m, const run_inputs &in, const std::vector<std::string> &gpus,
                    const std::vector<std::string> &cells, results_writer &results) {
  std::cerr << "cuparity run: benchmark phase: " << m.benchmarks.size() << " benchmarks, "
            << m.cells.size() << " cells\n";
  catch_stop_signals(true);
  run_benchmark_phase(m, {gpus.empty() ? "" : gpus.front(), in.out_dir, cells}, results, g_stop);
  catch_stop_signals(false);
  if (g_stop)
    throw run_stop{stopped_code(),
                   "interrupted in the benchmark phase; the functional results are in " +
                       in.results_path};
}

/// The verdict of everything recorded in the output directory, against the whole plan.
int judge(const run_options &opt, const matrix &m, const run_inputs &in, run_facts facts,
          const std::vector<planned_pair> &planned) {
  recorded_results recorded;
  try {
    recorded = read_all({in.out_dir});
  } catch (const std::exception &e) {
    throw run_stop{exit_code::failures, e.what()};
  }
  facts.functional_wall_s = recorded.functional_wall_s;
  return write_verdict(m, recorded.records, facts, in.out_dir,
                       {planned, in.baseline, opt.write_baseline,
                        in.latency_base.is_null() ? nullptr : &in.latency_base});
}

int run_loaded(const run_options &opt, const matrix &m) {
  check_selection(opt, m);
  const run_inputs in = read_inputs(opt, m);
  const nlohmann::json identity = check_expected_driver(opt, m);
  const std::vector<std::string> gpus = choose_gpus(opt, identity);
  plan_filter filter{opt.cases, opt.cells, in.shard, {}};
  const nlohmann::json plan = plan_description(m, filter, identity);
  prepared_out_dir out;
  try {
    out = prepare_out_dir({in.out_dir, opt.resume, opt.force, plan});
  } catch (const out_dir_error &e) {
    bad(e.what());
  }
  run_facts facts = start_facts(opt, in, identity, out);
  const std::vector<planned_pair> planned = planned_pairs(m, filter);
  filter.done = recorded_cases(out.previous);
  std::vector<work_cell> work = plan_work(m, filter);
  order_by_cost(work);
  if (m.packages) { // each value installed once, before any cell needs it
    std::vector<const cell *> cells;
    for (const auto &w : work)
      cells.push_back(w.c);
    facts.provenance["packages"] = prepare_package_environments(m, cells, std::cerr);
  }

  results_writer results(in.results_path);
  record_start(results, m, facts, out, plan, planned_cases(work));
  run_cells(opt, m, in, work, gpus, results, facts);
  if (m.latency.enabled && opt.latency)
    run_latency(opt, m, in, gpus, results);
  if (!m.benchmarks.empty() && opt.latency)
    run_benchmarks(m, in, gpus, opt.cells, results);
  return judge(opt, m, in, facts, planned);
}

} // namespace

int run_matrix(const run_options &opt) {
  auto loaded = load_known_matrix(opt.matrix_path, "run");
  if (!loaded)
    return exit_code::bad_input;
  if (auto why = apply_suite_roots(*loaded, opt.suite_roots)) {
    std::cerr << "cuparity run: " << *why << "\n";
    return exit_code::bad_input;
  }
  try {
    return run_loaded(opt, *loaded);
  } catch (const run_stop &stop) {
    std::cerr << "cuparity run: " << stop.message << "\n";
    return stop.code;
  } catch (const std::exception &e) {
    // What the runner could not do for itself (write results, start a thread): a message and an
    // exit code, never an abort; what is recorded stays recorded.
    std::cerr << "cuparity run: cannot go on: " << e.what() << "\n";
    return exit_code::environment;
  }
}

} // namespace cuparity
