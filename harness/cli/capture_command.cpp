// `cuparity capture [--out FILE] -- COMMAND [ARGS...]`: what any process tree binds of the driver.
#include "harness/cli/commands.hpp"
#include "harness/config/config.hpp"
#include "harness/protocol/exit_codes.hpp"
#include "harness/protocol/output_file.hpp"
#include "harness/report/terminal_text.hpp"
#include "harness/selection/process_capture.hpp"

#include <iostream>
#include <map>
#include <memory>

namespace cuparity::cli {
namespace {

struct capture_options {
  std::string out = "cuparity-capture.json";
  std::string events;
  std::vector<std::string> command;
};

/// One line per process on stderr: the program's own stdout stays its own.
void print_summary(std::ostream &o, const nlohmann::json &map, const std::string &out) {
  std::map<long, std::map<std::string, std::size_t>> by_source; // pid -> source -> entries
  std::map<long, std::size_t> per_thread;
  for (const auto &e : map["entries"]) {
    const long pid = e["process"].get<long>();
    by_source[pid][e["source"].get<std::string>()] += 1;
    const auto &s = e["symbol"];
    if (s.is_string() &&
        (s.get<std::string>().ends_with("_ptds") || s.get<std::string>().ends_with("_ptsz")))
      ++per_thread[pid];
  }
  o << "cuparity capture: " << map["processes"].size() << " process"
    << (map["processes"].size() == 1 ? "" : "es") << ", driver "
    << terminal_text(map["driver"]["path"].is_string() ? map["driver"]["path"].get<std::string>()
                                                       : std::string("never loaded"))
    << "\n";
  for (const auto &p : map["processes"]) {
    const long pid = p["pid"].get<long>();
    const auto &argv = p["argv"];
    o << "  pid " << pid << " "
      << terminal_text(argv.empty() ? std::string("?") : argv[0].get<std::string>()) << ":";
    if (by_source[pid].empty())
      o << " bound nothing of the driver";
    for (const auto &[source, n] : by_source[pid])
      o << " " << n << " " << source;
    if (per_thread[pid])
      o << " (" << per_thread[pid] << " per-thread)";
    o << "\n";
  }
  o << "  map: " << terminal_text(out) << " (check it: cuparity audit --map " << terminal_text(out)
    << ")\n";
}

int run_capture(const capture_options &opt) {
  try {
    check_output_file(opt.out, "--out"); // refused before anything runs
  } catch (const bad_input_error &e) {
    std::cerr << "cuparity capture: " << terminal_text(e.what()) << "\n";
    return exit_code::bad_input;
  }
  const settings s = read_settings(process_environment(), executable_dir());
  capture_request request{opt.command, companion_library(executable_dir(), "libcuparity_audit.so"),
                          s.driver_path, opt.events};
  capture_outcome outcome;
  try {
    outcome = capture_process_tree(request);
  } catch (const capture_error &e) {
    std::cerr << "cuparity capture: " << terminal_text(e.what()) << "\n";
    return exit_code::environment;
  }
  try {
    write_output_file(
        opt.out, outcome.map.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n",
        "--out");
  } catch (const bad_input_error &e) {
    std::cerr << "cuparity capture: the command exited " << outcome.exit_status
              << ", but its map was not written: " << terminal_text(e.what()) << "\n";
    return exit_code::bad_input;
  }
  print_summary(std::cerr, outcome.map, opt.out);
  return outcome.exit_status;
}

} // namespace

void add_capture_command(CLI::App &app, action &run) {
  auto opt = std::make_shared<capture_options>();
  auto *cmd = app.add_subcommand(
      "capture", "Run a command and record what every process of it binds of the driver");
  cmd->add_option("--out", opt->out, "The binding map to write (cuparity.binding_map/2)")
      ->capture_default_str();
  cmd->add_option("--events", opt->events,
                  "Keep the audit library's raw event files in this empty folder");
  cmd->add_option("command", opt->command, "The command and its arguments, after --")->required();
  cmd->footer("The command's exit status is cuparity's; the map and a summary go to --out and "
              "stderr. Example: cuparity capture --out torch.json -- python3 -c 'import torch; "
              "torch.zeros(1, device=\"cuda\")'");
  cmd->callback([opt, &run] { run = [opt] { return run_capture(*opt); }; });
}

} // namespace cuparity::cli
