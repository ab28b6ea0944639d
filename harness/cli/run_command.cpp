// `cuparity run MATRIX`: the main job; and `cuparity merge`: one verdict from several shards.
#include "harness/cli/bounded_options.hpp"
#include "harness/cli/commands.hpp"
#include "harness/matrix/limits.hpp"
#include "harness/protocol/exit_codes.hpp"
#include "harness/run/runner.hpp"

#include <iostream>
#include <memory>

namespace cuparity::cli {
namespace {

struct run_cli {
  run_options opt;
  std::string shard, gpus, baseline, write_baseline, latency_baseline;
};

std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      if (!cur.empty())
        out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty())
    out.push_back(cur);
  return out;
}

int run(run_cli &r, const std::vector<std::string> &argv) {
  r.opt.argv = argv;
  if (!r.shard.empty()) {
    try {
      r.opt.shard = parse_shard(r.shard);
    } catch (const std::invalid_argument &e) {
      std::cerr << "cuparity run: --shard: " << e.what() << "\n";
      return exit_code::bad_input;
    }
  }
  if (r.gpus == "all")
    r.opt.all_gpus = true;
  else if (r.gpus == "ctest")
    r.opt.gpus_from_ctest = true;
  else if (!r.gpus.empty())
    r.opt.gpus = split(r.gpus, ',');
  if (!r.baseline.empty())
    r.opt.baseline = r.baseline;
  if (!r.write_baseline.empty())
    r.opt.write_baseline = r.write_baseline;
  if (!r.latency_baseline.empty())
    r.opt.latency_baseline = r.latency_baseline;
  return run_matrix(r.opt);
}

void add_run_subcommand(CLI::App &app, action &run_action, const std::vector<std::string> &argv) {
  auto r = std::make_shared<run_cli>();
  auto *cmd = app.add_subcommand("run", "Run a matrix: every cell in its own process, then "
                                        "equivalence, expectations and outputs");
  cmd->add_option("matrix", r->opt.matrix_path, "Matrix file (TOML)")->required();
  // The last value wins for -j and --out, so wrappers (scripts/run) can give defaults that a
  // user's own arguments override.
  cmd->add_option("-o,--out", r->opt.out_dir, "Output directory (default cuparity-results/NAME)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  cmd->add_option("-j,--jobs", r->opt.jobs, "Cells run in parallel in the functional phase")
      ->check(whole_number(1, limits::jobs_max))
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  cmd->add_flag("--resume", r->opt.resume, "Complete an interrupted run in --out");
  cmd->add_flag("--force", r->opt.force, "Start over in an --out holding results (kept as .bak)");
  cmd->add_option("--shard", r->shard,
                  "Run shard K of N (K/N, interleaved over (cell, case) pairs; also from "
                  "GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS)");
  cmd->add_option("--gpus", r->gpus,
                  "Spread cells over GPUs: 'all', a list like 0,1 (CUDA_VISIBLE_DEVICES), or "
                  "'ctest' (the device CTest's resource allocation gave this test)");
  cmd->add_option("--cell", r->opt.cells,
                  "Only this cell (id as `cuparity list MATRIX` shows; "
                  "repeatable)");
  cmd->add_option("--expect-driver", r->opt.expect_driver,
                  "Refuse to run (exit 3) unless the driver is this version (13000, 13.0) or its "
                  "library path contains it (580.159.04)");
  cmd->add_option("--case", r->opt.cases, "Only these cases (id, glob or suite; repeatable)");
  cmd->add_option("--baseline", r->baseline,
                  "Expected non-passes (case,cell,outcome lines); overrides matrix.baseline");
  cmd->add_option("--write-baseline", r->write_baseline,
                  "Write this run's non-passes as a baseline file");
  // A callback, not a negated flag: CLI11 printed the negated flag's default as
  // "--no-latency{false}" in --help.
  cmd->add_flag_callback(
      "--no-latency", [r] { r->opt.latency = false; }, "Skip the latency phase");
  cmd->add_option("--latency-baseline", r->latency_baseline,
                  "A previous summary.json: compare every probe against it");
  cmd->add_option("--latency-min-time", r->opt.latency_min_time,
                  "Seconds each probe runs per round (default: the matrix's latency.min_time_s)")
      ->check(finite_number(limits::min_time_min_s, true, limits::min_time_max_s));
  cmd->callback([r, &run_action, argv] { run_action = [r, argv] { return run(*r, argv); }; });
}

void add_ctest_subcommand(CLI::App &app, action &run_action) {
  struct ctest_cli {
    std::string matrix, dir;
    int gpu_count = 1;
    std::vector<std::string> extra;
  };
  auto ct = std::make_shared<ctest_cli>();
  auto *ctest = app.add_subcommand("ctest", "Write a CTest suite with one test per cell "
                                            "(RESOURCE_GROUPS gpus:1) and a merge, for "
                                            "`ctest -j --resource-spec-file`");
  ctest->add_option("matrix", ct->matrix, "Matrix file")->required();
  ctest->add_option("-o,--out", ct->dir, "Directory for the suite and its results")->required();
  ctest->add_option("--gpu-count", ct->gpu_count, "Devices in the generated resource spec")
      ->check(whole_number(1, limits::gpu_count_max));
  ctest->add_option("--run-arg", ct->extra,
                    "Extra argument for each cell's `cuparity run` "
                    "(repeatable)");
  ctest->callback([ct, &run_action] {
    run_action = [ct] { return write_ctest_suite(ct->matrix, ct->dir, ct->gpu_count, ct->extra); };
  });
}

void add_merge_subcommand(CLI::App &app, action &run_action, const std::vector<std::string> &argv) {
  struct merge_cli {
    std::string matrix, out, baseline, latency_baseline;
    std::vector<std::string> dirs;
    merge_scope scope;
  };
  auto mg = std::make_shared<merge_cli>();
  auto *merge = app.add_subcommand("merge", "Join the results of shards (or re-summarise one run) "
                                            "into one summary, as if run on one machine");
  merge->add_option("matrix", mg->matrix, "The matrix the shards ran")->required();
  merge->add_option("dirs", mg->dirs, "Result directories of the shards")->required();
  merge->add_option("-o,--out", mg->out, "Output directory")->required();
  merge->add_option("--baseline", mg->baseline, "Baseline file (overrides matrix.baseline)");
  merge->add_option("--latency-baseline", mg->latency_baseline,
                    "A previous summary.json for the latency comparison");
  merge->add_option("--case", mg->scope.cases,
                    "Judge only these cases (as `run --case`; default: the matrix's selection)");
  merge->add_option("--cell", mg->scope.cells,
                    "Judge only these cells (as `run --cell`; default: every cell)");
  merge->add_flag("--force", mg->scope.force,
                  "An --out holding another run: move its results.jsonl, summary.json and "
                  "junit.xml aside (*.bak) instead of refusing");
  merge->callback([mg, &run_action, argv] {
    run_action = [mg, argv] {
      std::optional<std::string> b, lb;
      if (!mg->baseline.empty())
        b = mg->baseline;
      if (!mg->latency_baseline.empty())
        lb = mg->latency_baseline;
      for (const auto &c : mg->scope.cases)
        if (!known_case_glob(c)) {
          std::cerr << "cuparity merge: --case '" << c << "' names no case (see `cuparity list`)\n";
          return exit_code::bad_input;
        }
      return summarize_results(mg->matrix, mg->dirs, mg->out, b, argv, lb, mg->scope);
    };
  });
}

} // namespace

void add_run_command(CLI::App &app, action &run_action, const std::vector<std::string> &argv) {
  add_run_subcommand(app, run_action, argv);
  add_ctest_subcommand(app, run_action);
  add_merge_subcommand(app, run_action, argv);
}

} // namespace cuparity::cli
