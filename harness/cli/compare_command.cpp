// `cuparity compare A B`: run B against run A, from their summaries alone (cuparity.compare/1).
#include "harness/cli/bounded_options.hpp"
#include "harness/cli/commands.hpp"
#include "harness/io/gzip_input.hpp"
#include "harness/io/output_file.hpp"
#include "harness/matrix/known_changes.hpp"
#include "harness/matrix/limits.hpp"
#include "harness/protocol/exit_codes.hpp"
#include "harness/report/run_comparison.hpp"
#include "harness/run/plan.hpp"

#include <filesystem>
#include <iostream>
#include <memory>

namespace cuparity::cli {
namespace {

struct compare_options {
  std::string a, b, json, matrix, known_changes;
  double threshold = 0;
};

/// The latency settings the comparison is judged by: the matrix's (or the defaults), then the
/// command line's overrides, and the known changes (the matrix's, then --known-changes). False
/// when a file cannot be read (already reported).
bool judging_settings(const compare_options &opt, latency_settings &out,
                      std::vector<known_change> &known) {
  if (!opt.matrix.empty()) {
    auto m = load_known_matrix(opt.matrix, "compare");
    if (!m)
      return false;
    out = m->latency;
    known = m->known_changes;
  }
  if (!opt.known_changes.empty()) {
    try {
      const auto more = read_known_changes(opt.known_changes);
      known.insert(known.end(), more.begin(), more.end());
    } catch (const matrix_error &e) {
      std::cerr << "cuparity compare: --known-changes " << e.what() << "\n";
      return false;
    }
  }
  if (opt.threshold > 0)
    out.regression_threshold = opt.threshold;
  return true;
}

/// The files a comparison reads from run `path` (a run directory or its summary.json).
std::vector<std::string> inputs_of(const std::string &path) {
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec))
    return {path};
  return {stored_run_file(path, "summary.json"), stored_run_file(path, "results.jsonl")};
}

/// Writes the JSON to `target` ("-" is stdout). Throws bad_input_error for a target that is not a
/// regular file or is one of the runs' files.
void write_json(const run_comparison &c, const compare_options &opt) {
  const auto text = compare_json(c).dump(2) + "\n";
  if (opt.json == "-") {
    std::cout << text << std::flush;
    return;
  }
  for (const auto &run : {opt.a, opt.b})
    for (const auto &in : inputs_of(run))
      refuse_same_file(opt.json, in, "--json");
  write_output_file(opt.json, text, "--json");
}

int compare(const compare_options &opt) {
  run_comparison c;
  try {
    if (!opt.json.empty() && opt.json != "-")
      check_output_file(opt.json, "--json"); // before the work, and before anything is written
    const auto a = read_recorded_run(opt.a);
    const auto b = read_recorded_run(opt.b);
    // Without --matrix, the thresholds run B recorded (what its own verdicts used), else the
    // defaults; --threshold overrides either.
    latency_settings settings = b.latency_settings_used.value_or(latency_settings{});
    std::vector<known_change> known;
    if (!judging_settings(opt, settings, known))
      return exit_code::bad_input;
    c = compare_runs(a, b, settings, known);
  } catch (const summary_input_error &e) {
    std::cerr << "cuparity compare: " << e.what() << "\n";
    return exit_code::bad_input;
  } catch (const bad_input_error &e) {
    std::cerr << "cuparity compare: " << e.what() << "\n";
    return exit_code::bad_input;
  }
  if (!opt.json.empty()) {
    try {
      write_json(c, opt);
    } catch (const bad_input_error &e) {
      std::cerr << "cuparity compare: " << e.what() << "\n";
      return exit_code::bad_input;
    }
  }
  if (opt.json != "-")
    print_compare(std::cout, c);
  return compare_exit_code(c);
}

} // namespace

void add_compare_command(CLI::App &app, action &run) {
  auto opt = std::make_shared<compare_options>();
  auto *cmd = app.add_subcommand(
      "compare", "Compare run B against run A (their summary.json): outcome changes, new and "
                 "gone divergences, latency per probe series. Exit 0: nothing regressed; 1: B "
                 "regressed; 2: bad input");
  cmd->add_option("a", opt->a, "Run A: a run directory or its summary.json")->required();
  cmd->add_option("b", opt->b, "Run B: a run directory or its summary.json")->required();
  cmd->add_option("--json", opt->json,
                  "Write cuparity.compare/1 JSON to FILE ('-': stdout, "
                  "and no console report)");
  cmd->add_option("--matrix", opt->matrix,
                  "Judge latency with this matrix's [latency] thresholds "
                  "(default: those run B recorded in latency.settings, else the built-in ones)");
  cmd->add_option("--known-changes", opt->known_changes,
                  "A known-changes file (docs/verdicts.md#known-changes): outcome changes it lists "
                  "(key \"outcome\") are reported with their reason and do not fail; binding "
                  "changes it lists (key \"binding.<function>\", e.g. between two versions of "
                  "a package) are marked with their reason (binding changes never fail)");
  cmd->add_option("--threshold", opt->threshold,
                  "Relative latency threshold (overrides regression_threshold; default 0.05)")
      ->check(finite_number(0, false, limits::fraction_max));
  cmd->callback([opt, &run] { run = [opt] { return compare(*opt); }; });
}

} // namespace cuparity::cli
