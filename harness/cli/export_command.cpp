// `cuparity export RUN --format bencher|pyperf`: a run's figures in a dashboard's own format.
#include "harness/cli/commands.hpp"
#include "harness/io/output_file.hpp"
#include "harness/protocol/exit_codes.hpp"
#include "harness/report/export_bencher.hpp"
#include "harness/report/export_pyperf.hpp"
#include "harness/report/summary_reader.hpp"

#include <iostream>
#include <memory>

namespace cuparity::cli {
namespace {

struct export_options {
  std::string run, format, out = "-";
  bool context_in_names = false;
};

std::string export_text(const export_run &run, const export_options &opt) {
  const auto j = opt.format == "bencher" ? bencher_json(run, opt.context_in_names)
                                         : pyperf_json(run, opt.context_in_names);
  return j.dump(2) + "\n";
}

int export_run_figures(const export_options &opt) {
  try {
    if (opt.out != "-")
      check_output_file(opt.out, "-o"); // before the work, and before anything is written
    const auto run = read_export_run(opt.run);
    if (run.figures.empty()) {
      std::cerr << "cuparity export: " << run.context.source
                << ": nothing to export (no functional_wall_s, no latency samples, no measured "
                   "paired verdict)\n";
      return exit_code::bad_input;
    }
    const auto text = export_text(run, opt);
    if (opt.out == "-") {
      std::cout << text << std::flush;
      return exit_code::ok;
    }
    for (const auto &in : {run.context.source, run.context.results_path})
      refuse_same_file(opt.out, in, "-o");
    write_output_file(opt.out, text, "-o");
  } catch (const summary_input_error &e) {
    std::cerr << "cuparity export: " << e.what() << "\n";
    return exit_code::bad_input;
  } catch (const bad_input_error &e) {
    std::cerr << "cuparity export: " << e.what() << "\n";
    return exit_code::bad_input;
  } catch (const output_write_error &e) {
    std::cerr << "cuparity export: " << e.what() << "\n";
    return exit_code::environment;
  }
  return exit_code::ok;
}

} // namespace

void add_export_command(CLI::App &app, action &run) {
  auto opt = std::make_shared<export_options>();
  auto *cmd = app.add_subcommand(
      "export", "Write a run's figures (functional phase, latency series, paired ratios with "
                "their bounds) for a dashboard: Bencher Metric Format or pyperf JSON "
                "(docs/export.md). Exit 0: written; 2: bad input");
  cmd->add_option("run", opt->run,
                  "The run: its directory (summary.json or summary.json.gz), or a summary file")
      ->required();
  cmd->add_option("--format", opt->format, "bencher (BMF JSON) or pyperf (a pyperf 2.x suite)")
      ->required()
      ->check(CLI::IsMember({"bencher", "pyperf"}));
  cmd->add_option("-o,--out", opt->out, "Write to FILE (default '-': stdout)");
  cmd->add_flag("--context-in-names", opt->context_in_names,
                "End every benchmark name in [GPU, driver release, revision] (for a dashboard "
                "that keys by name alone)");
  cmd->callback([opt, &run] { run = [opt] { return export_run_figures(*opt); }; });
}

} // namespace cuparity::cli
