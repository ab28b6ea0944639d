// `cuparity run MATRIX`: the main job, every cell in its own process, then the verdict.
#include "harness/cli/bounded_options.hpp"
#include "harness/cli/commands.hpp"
#include "harness/cli/step_summary_run.hpp"
#include "harness/matrix/limits.hpp"
#include "harness/protocol/exit_codes.hpp"
#include "harness/run/runner.hpp"
#include "harness/run/shard_env.hpp"
#include "harness/run/shard_timing.hpp"

#include <cstdlib>
#include <iostream>
#include <memory>

namespace cuparity::cli {
namespace {

struct run_cli {
  run_options opt;
  std::string shard, shard_by_time;
  std::string gpus, baseline, write_baseline, latency_baseline;
  std::string summary_md; ///< --summary-md FILE
  bool no_summary_md = false;
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

/// The run's shard from --shard and every CI engine's variables, dealt by time with
/// --shard-by-time; says on stderr what decided it. False (after saying why) for bad input.
bool decide_run_shard(run_cli &r) {
  try {
    const decided_shard d =
        decide_shard(r.shard.empty() ? std::nullopt : std::optional<std::string>(r.shard),
                     process_environment());
    if (!r.shard_by_time.empty() && !d.shard)
      throw std::invalid_argument("--shard-by-time " + r.shard_by_time +
                                  " needs a shard: --shard K/N, or a CI engine's index and count");
    r.opt.shard = d.shard;
    if (!r.shard_by_time.empty())
      r.opt.shard->by_time =
          std::make_shared<const pair_durations>(read_pair_durations(r.shard_by_time));
    if (d.shard)
      std::cerr << "cuparity run: shard " << shard_text(r.opt.shard) << " from " << d.source
                << "\n";
    return true;
  } catch (const std::invalid_argument &e) {
    std::cerr << "cuparity run: " << e.what() << "\n";
    return false;
  }
}

int run(run_cli &r, const std::vector<std::string> &argv) {
  r.opt.argv = argv;
  if (!decide_run_shard(r))
    return exit_code::bad_input;
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
  const auto target =
      step_summary_target(r.summary_md, r.no_summary_md, std::getenv("GITHUB_STEP_SUMMARY"));
  if (!target)
    return run_matrix(r.opt);
  // Checked before anything runs; written once the run's own outputs are (never over them).
  auto pending = prepare_step_summary(*target, r.opt);
  if (!pending)
    return exit_code::bad_input;
  return finish_step_summary(*pending, run_matrix(r.opt));
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
  cmd->add_option(
      "--shard", r->shard,
      "Run shard K of N (K/N, interleaved over (cell, case) pairs; also from GoogleTest's, "
      "GitLab's, Buildkite's, Kubernetes' or Slurm's variables)");
  cmd->add_option("--shard-by-time", r->shard_by_time,
                  "Deal the shards' pairs by their durations in this previous run (a run folder), "
                  "so that every shard takes about as long");
  cmd->add_option("--gpus", r->gpus,
                  "Spread cells over GPUs: 'all', a list like 0,1 (CUDA_VISIBLE_DEVICES), or "
                  "'ctest' (the device CTest's resource allocation gave this test)");
  cmd->add_option("--cell", r->opt.cells,
                  "Only this cell, in every phase (id as `cuparity list MATRIX` shows; "
                  "repeatable)");
  cmd->add_option("--expect-driver", r->opt.expect_driver,
                  "Refuse to run (exit 3) unless the driver is this version (13000, 13.0) or its "
                  "library path contains it (580.159.04)");
  cmd->add_option("--suite-root", r->opt.suite_roots,
                  "NAME=DIR: run suite NAME from this source checkout, over its `root` key "
                  "(repeatable)");
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
  auto *summary_md = cmd->add_option(
      "--summary-md", r->summary_md,
      "Write the verdict as Markdown for a CI job's page to FILE (replaced); by default it is "
      "appended to $GITHUB_STEP_SUMMARY when that is set");
  cmd->add_flag("--no-summary-md", r->no_summary_md,
                "Write no step summary, $GITHUB_STEP_SUMMARY or not")
      ->excludes(summary_md);
  cmd->add_option("--latency-min-time", r->opt.latency_min_time,
                  "Seconds each probe runs per round (default: the matrix's latency.min_time_s)")
      ->check(finite_number(limits::min_time_min_s, true, limits::min_time_max_s));
  cmd->callback([r, &run_action, argv] { run_action = [r, argv] { return run(*r, argv); }; });
}

} // namespace

void add_run_command(CLI::App &app, action &run_action, const std::vector<std::string> &argv) {
  add_run_subcommand(app, run_action, argv);
}

} // namespace cuparity::cli
