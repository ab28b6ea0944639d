// `cuparity markdown RUN`: a finished run's step summary again, from its summary.json alone.
#include "harness/cli/commands.hpp"
#include "harness/cli/step_summary.hpp"
#include "harness/io/output_file.hpp"
#include "harness/protocol/exit_codes.hpp"
#include "harness/report/summary_document.hpp"
#include "harness/report/summary_markdown.hpp"
#include "harness/report/summary_reader.hpp"

#include <filesystem>
#include <iostream>
#include <memory>

namespace cuparity::cli {
namespace {

struct markdown_options_cli {
  std::string run, out = "-";
  bool append = false;
};

/// The folder the notes name: the run directory given, else the summary file's.
std::string run_dir_of(const std::string &run) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(run, ec))
    return run;
  const auto parent = fs::path(run).parent_path();
  return parent.empty() ? "." : parent.string();
}

int render_markdown(const markdown_options_cli &opt) {
  try {
    const markdown_target target{opt.out, opt.append, "-o"};
    if (opt.out != "-")
      check_output_file(opt.out, "-o"); // before the work, and before anything is written
    const summary_document doc = read_summary_document(opt.run);
    if (opt.out == "-") {
      std::cout << summary_markdown(doc.summary, {step_summary_budget, run_dir_of(opt.run)})
                << std::flush;
      return exit_code::ok;
    }
    refuse_same_file(opt.out, doc.source, "-o");
    write_markdown(target, doc.summary, run_dir_of(opt.run));
  } catch (const summary_input_error &e) {
    std::cerr << "cuparity markdown: " << e.what() << "\n";
    return exit_code::bad_input;
  } catch (const bad_input_error &e) {
    std::cerr << "cuparity markdown: " << e.what() << "\n";
    return exit_code::bad_input;
  } catch (const output_write_error &e) {
    std::cerr << "cuparity markdown: " << e.what() << "\n";
    return exit_code::environment;
  }
  return exit_code::ok;
}

} // namespace

void add_markdown_command(CLI::App &app, action &run) {
  auto opt = std::make_shared<markdown_options_cli>();
  auto *cmd = app.add_subcommand(
      "markdown", "Write a finished run's verdict as Markdown for a CI job's page, as `run "
                  "--summary-md` does, from its summary.json (docs/formats.md#the-step-summary). "
                  "Exit 0: written; 2: bad input; 3: the file could not be written");
  cmd->add_option("run", opt->run,
                  "The run: its directory (summary.json or summary.json.gz), or a summary file")
      ->required();
  auto *out = cmd->add_option("-o,--out", opt->out, "Write to FILE (default '-': stdout)");
  cmd->add_flag("--append", opt->append,
                "Append to FILE, as GitHub asks of $GITHUB_STEP_SUMMARY (the page's budget less "
                "what FILE holds)")
      ->needs(out);
  cmd->callback([opt, &run] { run = [opt] { return render_markdown(*opt); }; });
}

} // namespace cuparity::cli
