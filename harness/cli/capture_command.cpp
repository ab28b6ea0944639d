// `cuparity capture [--out FILE] -- COMMAND [ARGS...]`: what any process tree binds of the driver.
#include "harness/capture/process_capture.hpp"
#include "harness/cli/commands.hpp"
#include "harness/config/config.hpp"
#include "harness/io/output_file.hpp"
#include "harness/protocol/exit_codes.hpp"
#include "harness/report/terminal_text.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <unistd.h>

namespace cuparity::cli {
namespace {

struct capture_options {
  std::string out = "cuparity-capture.json";
  std::string events;
  bool quiet = false;
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

/// The file argv[0] names, looked up in PATH as posix_spawnp does ("" when not found).
std::string command_file(const std::string &name) {
  namespace fs = std::filesystem;
  if (name.find('/') != std::string::npos)
    return name;
  const char *path = std::getenv("PATH");
  for (std::string dirs = path ? path : "/usr/bin:/bin"; !dirs.empty();) {
    const std::size_t colon = std::min(dirs.find(':'), dirs.size());
    const fs::path candidate =
        fs::path(dirs.substr(0, colon).empty() ? "." : dirs.substr(0, colon)) / name;
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec))
      return candidate.string();
    dirs.erase(0, colon + 1);
  }
  return {};
}

/// Everything that can be refused before the command runs (bad input: exit 2).
void check_options(const capture_options &opt) {
  namespace fs = std::filesystem;
  check_output_file(opt.out, "--out");
  std::error_code ec;
  const fs::path out = fs::weakly_canonical(fs::absolute(opt.out), ec);
  const std::string command = command_file(opt.command.front());
  if (!command.empty() && fs::weakly_canonical(fs::absolute(command), ec) == out)
    throw bad_input_error("--out " + opt.out + ": is the command itself");
  // The folder must take a new file now, not only after the command has run.
  const fs::path probe =
      out.parent_path() / (".cuparity-capture-probe-" + std::to_string(getpid()));
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    throw bad_input_error("--out " + opt.out + ": cannot write into " + out.parent_path().string() +
                          ": " + std::strerror(errno));
  ::close(fd);
  fs::remove(probe, ec);
  if (!opt.events.empty()) {
    if (!fs::is_directory(opt.events, ec))
      throw bad_input_error("--events " + opt.events + ": " +
                            (fs::exists(opt.events, ec) ? "not a folder" : "does not exist"));
    if (!fs::is_empty(opt.events, ec))
      throw bad_input_error("--events " + opt.events +
                            ": not empty (it must hold only this "
                            "capture's files)");
  }
}

int run_capture(const capture_options &opt) {
  try {
    check_options(opt); // refused before anything runs
  } catch (const bad_input_error &e) {
    std::cerr << "cuparity capture: " << terminal_text(e.what()) << "\n";
    return exit_code::bad_input;
  }
  settings s;
  try {
    s = read_settings(process_environment(), executable_dir());
  } catch (const config_error &e) { // a variable that cannot be used: as `env` says it
    std::cerr << "cuparity capture: " << terminal_text(e.what()) << "\n";
    return exit_code::bad_input;
  }
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
  if (!opt.quiet)
    print_summary(std::cerr, outcome.map, opt.out);
  if (!outcome.lost.empty()) {
    // The map is written, but it is not the whole command: never the command's status alone.
    std::cerr << "cuparity capture: the command exited " << outcome.exit_status << ", but "
              << outcome.lost.size()
              << (outcome.lost.size() == 1 ? " process of it is" : " processes of it are")
              << " missing from the map:\n";
    for (const auto &l : outcome.lost)
      std::cerr << "  " << terminal_text(l) << "\n";
    return exit_code::environment;
  }
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
  // The runner's external suites read the end of a command's output for its error: the summary
  // would be all they saw (one line per process of a shell wrapper, say).
  cmd->add_flag("--quiet", opt->quiet,
                "No summary on stderr: the command's output is all there is");
  cmd->add_option("command", opt->command, "The command and its arguments, after --")->required();
  cmd->footer("The command's exit status is cuparity's; the map and a summary go to --out and "
              "stderr. Example: cuparity capture --out torch.json -- python3 -c 'import torch; "
              "torch.zeros(1, device=\"cuda\")'");
  cmd->callback([opt, &run] { run = [opt] { return run_capture(*opt); }; });
}

} // namespace cuparity::cli
