// cuparity's command line: subcommands, the global --driver option, exit codes.
#include "harness/cli/commands.hpp"
#include "harness/config/config.hpp"
#include "harness/config/env_vars.hpp"
#include "harness/io/input_file.hpp"
#include "harness/io/standard_output.hpp"
#include "harness/platform/parent_death.hpp"
#include "harness/protocol/exit_codes.hpp"
#include "harness/report/terminal_text.hpp"
#include "harness/run/provenance.hpp"

#include <cstdlib>
#include <filesystem>
#include <iostream>

namespace {

/// --driver sim|PATH becomes NUMBA_CUDA_DRIVER for this process and every process it starts, so
/// a cell sees exactly what a user exporting the variable would.
int apply_driver_option(const std::string &value) {
  namespace fs = std::filesystem;
  std::string path = value;
  if (value == "sim") {
    path = cuparity::companion_library(cuparity::executable_dir(), "libcuparity_simdriver.so");
    if (!fs::is_regular_file(path)) {
      std::cerr << "cuparity: --driver sim: the simulated driver " << path
                << " is missing (is this a test build?)\n";
      return cuparity::exit_code::bad_input;
    }
  }
  setenv(cuparity::var::driver, path.c_str(), 1);
  return cuparity::exit_code::ok;
}

} // namespace

namespace {

/// The exit code once stdout is checked: output that never arrived is an environment problem
/// (exit 3), unless the command already failed for a reason of its own.
int with_stdout_checked(int rc) {
  if (const auto failed = cuparity::finish_standard_output()) {
    std::cerr << "cuparity: " << *failed << "\n";
    if (rc == cuparity::exit_code::ok)
      return cuparity::exit_code::environment;
  }
  return rc;
}

int run_command(int argc, char **argv);

} // namespace

int main(int argc, char **argv) {
  cuparity::check_standard_output();
  return with_stdout_checked(run_command(argc, argv));
}

namespace {

int run_command(int argc, char **argv) {
  // Before anything else: a cell, helper or probe whose parent is killed (SIGKILL of the runner,
  // of a cell by its watchdog) must not live on holding the GPU or blocked on an IPC event.
  cuparity::die_with_parent();
  CLI::App app{"cuparity: proves two CUDA driver bindings behave the same, and measures them"};
  app.require_subcommand(1);
  app.set_version_flag("--version", cuparity::version_text());
  std::string driver;
  app.add_option("--driver", driver,
                 "Driver under test: 'sim' for the simulated driver, or a library path "
                 "(sets NUMBA_CUDA_DRIVER)");
  cuparity::cli::action run;
  cuparity::cli::add_env_command(app, run);
  cuparity::cli::add_list_command(app, run);
  cuparity::cli::add_cell_command(app, run);
  cuparity::cli::add_helper_command(app, run);
  cuparity::cli::add_probe_command(app, run);
  cuparity::cli::add_calibrate_command(app, run);
  cuparity::cli::add_faults_command(app, run);
  const std::vector<std::string> args(argv, argv + argc);
  cuparity::cli::add_run_command(app, run, args);
  cuparity::cli::add_ctest_command(app, run);
  cuparity::cli::add_merge_command(app, run, args);
  cuparity::cli::add_compare_command(app, run);
  cuparity::cli::add_export_command(app, run);
  cuparity::cli::add_markdown_command(app, run);
  cuparity::cli::add_audit_command(app, run);
  cuparity::cli::add_capture_command(app, run);
  cuparity::cli::add_api_command(app, run);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : cuparity::exit_code::bad_input;
  }
  if (!driver.empty())
    if (int rc = apply_driver_option(driver); rc != 0)
      return rc;
  if (!run)
    return cuparity::exit_code::bad_input;
  // Every exception reaches a message and an exit code: an abort would lose the summary a cell,
  // a run or a merge still owes (a driver that throws at start is what validation must survive).
  try {
    return run();
  } catch (const cuparity::bad_input_error &e) {
    // A file or path the user named (it is in the message): bad input, not the environment.
    std::cerr << "cuparity: " << cuparity::terminal_text(e.what()) << "\n";
    return cuparity::exit_code::bad_input;
  } catch (const std::exception &e) {
    std::cerr << "cuparity: cannot go on: " << cuparity::terminal_text(e.what()) << "\n";
  } catch (...) {
    std::cerr << "cuparity: cannot go on: an unknown exception\n";
  }
  return cuparity::exit_code::environment;
}

} // namespace
