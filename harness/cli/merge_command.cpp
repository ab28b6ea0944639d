// `cuparity merge MATRIX DIRS... -o OUT`: one verdict from the results of several shards.
#include "harness/cli/bounded_options.hpp"
#include "harness/cli/commands.hpp"
#include "harness/matrix/limits.hpp"
#include "harness/protocol/exit_codes.hpp"
#include "harness/run/runner.hpp"

#include <iostream>
#include <memory>

namespace cuparity::cli {

void add_merge_command(CLI::App &app, action &run_action, const std::vector<std::string> &argv) {
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

} // namespace cuparity::cli
