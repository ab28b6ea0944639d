// `cuparity faults`: which driver faults the suites see, one (exported symbol, fault) at a time.
#include "harness/cli/bounded_options.hpp"
#include "harness/cli/commands.hpp"
#include "harness/config/config.hpp"
#include "harness/config/env_vars.hpp"
#include "harness/fault_coverage/fault_coverage.hpp"
#include "harness/framework/case_registry.hpp"
#include "harness/io/output_file.hpp"
#include "harness/protocol/exit_codes.hpp"
#include "harness/report/terminal_text.hpp"

#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>

namespace cuparity::cli {
namespace {

struct faults_options {
  fault_coverage_options coverage;
  bool shim = false;
};

/// The cases that declare `entry` (a trial of its symbols runs only those); none: every case.
std::vector<std::string> cases_declaring(const std::string &entry) {
  std::vector<std::string> out;
  const auto id = find_entry(entry);
  if (!id)
    return out;
  for (const auto &c : case_registry::instance().all())
    if (c.needs.declared().test(static_cast<std::size_t>(*id)))
      out.push_back(c.id);
  return out;
}

/// The driver library the trials fault: the fault shim (--shim), else NUMBA_CUDA_DRIVER as the
/// global --driver set it, else the simulated driver beside this executable.
std::string driver_under_test(bool shim) {
  if (shim)
    return companion_library(executable_dir(), "libcuparity_fault_shim.so");
  if (const char *d = std::getenv(var::driver); d && *d)
    return d;
  return companion_library(executable_dir(), "libcuparity_simdriver.so");
}

namespace fs = std::filesystem;

/// Refuses an --out that is not the fault run's own: a file, a cuparity run's folder (the trials
/// would be written among its files), or an earlier fault run without --resume.
void check_out(const fault_coverage_options &c) {
  std::error_code ec;
  if (c.out.empty())
    throw bad_input_error("--out (an empty path): name a folder for the fault run");
  if (fs::exists(fs::symlink_status(c.out, ec)) && !fs::is_directory(c.out, ec))
    throw bad_input_error("--out " + c.out + ": not a folder");
  for (const char *f : {"results.jsonl", "summary.json", "junit.xml"})
    if (fs::exists(fs::symlink_status(c.out + "/" + f, ec)))
      throw bad_input_error("--out " + c.out + ": holds a cuparity run (" + f +
                            "); the fault run would write among its files: choose another folder");
  if (!c.resume && fs::exists(c.out + "/faults.json", ec))
    throw bad_input_error("--out " + c.out +
                          " holds an earlier fault run: add --resume to finish it, or choose "
                          "another");
}

/// Refuses a target the trials could not reach: --target without --shim (the simulated driver
/// has none), a path that is not there, a library that does not open. The shim's default,
/// libcuda.so.1, not opening is this host's (no driver installed): faults_environment_error.
void check_target(const faults_options &opt) {
  const std::string &t = opt.coverage.target;
  if (!opt.shim) {
    if (!t.empty())
      throw bad_input_error("--target " + t +
                            ": only the fault shim forwards to a target; add --shim, or drop "
                            "--target to fault the simulated driver");
    return;
  }
  std::error_code ec;
  if (t.find('/') != std::string::npos && !fs::exists(t, ec))
    throw bad_input_error("--target " + t + ": no such file");
  const std::string name = t.empty() ? "libcuda.so.1" : t;
  dlerror();
  // Left open: the shim opens the same library next, and a driver is not unloaded midway.
  if (dlopen(name.c_str(), RTLD_LAZY | RTLD_LOCAL) != nullptr)
    return;
  const char *why = dlerror();
  const std::string said = why ? why : "dlopen failed";
  if (t.empty())
    throw faults_environment_error("the fault shim's default target libcuda.so.1 cannot be "
                                   "opened (" +
                                   said + "): name the driver with --target");
  throw bad_input_error("--target " + t + ": cannot be opened as a library: " + said);
}

/// A report of the run: a path that cannot take it is bad input; a write that fails there (a
/// full disk) is the environment's.
void write_report(const std::string &path, const std::string &text) {
  check_output_file(path);
  try {
    write_output_file(path, text);
  } catch (const bad_input_error &e) {
    throw faults_environment_error(e.what());
  }
}

void make_out_folder(const std::string &out) {
  std::error_code ec;
  if (fs::create_directories(out, ec); !ec)
    return;
  const std::string why = "--out " + out + ": " + ec.message();
  if (ec == std::errc::not_a_directory || ec == std::errc::file_exists)
    throw bad_input_error(why);
  throw faults_environment_error(why);
}

/// The whole run: checks, control, trials, reports. Throws bad_input_error,
/// faults_environment_error or std::runtime_error (the driver cannot be opened).
int faults(faults_options &opt) {
  fault_coverage_options &c = opt.coverage;
  std::error_code ec;
  if (!fs::is_regular_file(c.matrix, ec))
    throw bad_input_error(c.matrix + ": no such matrix file");
  check_out(c);
  check_target(opt);
  c.driver = driver_under_test(opt.shim);
  make_out_folder(c.out);
  const fault_coverage result = run_fault_coverage(c, cases_declaring, [](const std::string &line) {
    std::cout << line << "\n" << std::flush;
  });
  std::ostringstream md;
  print_fault_table(md, result);
  write_report(c.out + "/faults.json", fault_coverage_json(result).dump(2) + "\n");
  write_report(c.out + "/faults.md", md.str());
  std::size_t missed = 0;
  for (const auto &t : result.trials)
    missed += t.caught ? 0 : 1;
  std::cout << "cuparity faults: " << result.trials.size() - missed << " of "
            << result.trials.size() << " trials caught over " << result.bound.size()
            << " bound symbols (" << result.unbound.size() << " exported symbols no cell binds); "
            << "wrote " << c.out << "/faults.json and faults.md\n";
  return missed ? exit_code::failures : exit_code::ok;
}

int run_faults(faults_options opt) {
  try {
    return faults(opt);
  } catch (const bad_input_error &e) {
    std::cerr << "cuparity faults: " << terminal_text(e.what()) << "\n";
    return exit_code::bad_input;
  } catch (const std::exception &e) {
    // faults_environment_error, a driver that cannot be opened: not the user's input.
    std::cerr << "cuparity faults: " << terminal_text(e.what()) << "\n";
    return exit_code::environment;
  }
}

} // namespace

void add_faults_command(CLI::App &app, action &run) {
  auto opt = std::make_shared<faults_options>();
  opt->coverage.matrix = "matrices/faults.toml";
  auto *cmd = app.add_subcommand(
      "faults", "Fault coverage: run the matrix once per (exported symbol, fault) on the "
                "simulated driver (or the fault shim in front of a driver) and report which "
                "cases catch each fault. Exit 0: every trial caught; 1: some were not");
  cmd->add_option("matrix", opt->coverage.matrix, "The cells of every trial")
      ->capture_default_str();
  cmd->add_option("--out", opt->coverage.out, "Directory for the trials, faults.json, faults.md")
      ->required();
  cmd->add_flag("--shim", opt->shim,
                "Fault the fault shim (beside cuparity) in front of --target, not the simulator");
  cmd->add_option("--target", opt->coverage.target,
                  "The driver the shim forwards to (default: the shim's, libcuda.so.1)");
  cmd->add_option("--symbol", opt->coverage.symbols, "Exported symbols to fault (fnmatch globs)");
  cmd->add_option("--kind", opt->coverage.kinds, "Faults: error, not_supported, corrupt, legacy")
      ->check(CLI::IsMember({"error", "not_supported", "corrupt", "legacy"}));
  cmd->add_option("--path", opt->coverage.paths, "Paths: any (both), dlsym, proc")
      ->check(CLI::IsMember({"any", "dlsym", "proc"}));
  cmd->add_option("-j,--jobs", opt->coverage.jobs, "Trials at once")
      ->check(whole_number(1, 64))
      ->capture_default_str();
  cmd->add_option("--cell-jobs", opt->coverage.cell_jobs, "-j of each trial's run")
      ->check(whole_number(1, 64))
      ->capture_default_str();
  cmd->add_option(
         "--devices", opt->coverage.devices,
         "Devices the simulated driver models (CUPARITY_SIM_DEVICES; 2 runs the peer cases)")
      ->check(CLI::IsMember({"1", "2", "3", "4"}));
  cmd->add_flag("--resume", opt->coverage.resume, "Keep the trials an earlier run finished");
  cmd->callback([opt, &run] { run = [opt] { return run_faults(*opt); }; });
}

} // namespace cuparity::cli
