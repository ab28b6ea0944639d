// `cuparity capture [--out FILE] -- COMMAND [ARGS...]`: what any process tree binds of the driver.
#include "harness/capture/api_coverage.hpp"
#include "harness/capture/captured_map.hpp"
#include "harness/capture/process_capture.hpp"
#include "harness/capture/table_check.hpp"
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
#include <utility>

namespace cuparity::cli {
namespace {

struct capture_options {
  std::string out = "cuparity-capture.json";
  std::string events;
  bool quiet = false;
  bool no_python_hook = false;
  std::vector<std::string> command;
};

/// The Python start-up hook's folder: python-hook/ beside the executable (the build tree) or in
/// lib/cuparity (an installation; cmake/install.cmake).
std::string python_hook_folder() {
  const std::string file = companion_library(executable_dir(), "python-hook/sitecustomize.py");
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec))
    throw capture_error("cuparity's Python start-up hook is missing (looked for " + file +
                        "): the build or installation is incomplete (--no-python-hook captures "
                        "without it)");
  return std::filesystem::path(file).parent_path().string();
}

/// `names`, the first `shown` of them, and how many more.
std::string some_of(const std::vector<std::string> &names, std::size_t shown) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < shown; ++i)
    out += (i ? ", " : "") + names[i];
  if (names.size() > shown)
    out += ", +" + std::to_string(names.size() - shown) + " more";
  return out;
}

/// The end of each process image's summary line: how many functions it bound, the names it bound
/// or asked for that the headers cuparity was built from do not declare (the audit cannot judge
/// them), and what its package
/// tables say (checked, and how many functions disagree with the capture; or why not). The map is
/// read back as `audit` reads it, so this judges what was written; {0, 0}: why it could not be.
std::map<std::pair<long, int>, std::string> image_notes(const std::string &out) {
  std::map<std::pair<long, int>, std::string> lines;
  captured_map m;
  try {
    m = read_captured_map(out);
  } catch (const map_error &e) {
    lines[{0, 0}] = std::string("the map cannot be read back: ") + e.what();
    return lines;
  }
  const std::string headers = "the CUDA " + api_headers_name() + " headers";
  for (const auto &[at, c] : api_coverage_of(m))
    if (c.functions || !c.undeclared.empty())
      lines[at] =
          "; " + std::to_string(c.functions) + " functions bound, " +
          (c.undeclared.empty() ? "every name in " + headers
                                : std::to_string(c.undeclared.size()) +
                                      (c.undeclared.size() == 1 ? " name" : " names") + " not in " +
                                      headers + ": " + some_of(c.undeclared, 4));
  std::map<std::pair<long, int>, std::size_t> disagree;
  for (const auto &f : table_findings(m))
    ++disagree[{f.process, f.image}];
  for (const auto &t : m.package_tables) {
    std::string &line = lines[{t.process, t.image}];
    line += "; " + t.package + (t.version ? " " + *t.version : std::string()) + "'s own table ";
    if (t.status != "ok") {
      line += "not checked (" + t.status + ")";
      continue;
    }
    const std::size_t n = disagree[{t.process, t.image}];
    line += "of " + std::to_string(t.functions.size()) + " functions " +
            (n ? "disagrees with the capture on " + std::to_string(n) : "agrees with the capture");
  }
  return lines;
}

/// One line per process on stderr: the program's own stdout stays its own.
void print_summary(std::ostream &o, const nlohmann::json &map, const std::string &out) {
  auto notes = image_notes(out);
  using image = std::pair<long, int>; // pid, image: an exec in one pid is another program
  std::map<image, std::map<std::string, std::size_t>> by_source; // entries by path
  std::map<image, std::size_t> per_thread;
  for (const auto &e : map["entries"]) {
    const image at{e["process"].get<long>(), e["image"].get<int>()};
    by_source[at][e["source"].get<std::string>()] += 1;
    const auto &s = e["symbol"];
    if (s.is_string() &&
        (s.get<std::string>().ends_with("_ptds") || s.get<std::string>().ends_with("_ptsz")))
      ++per_thread[at];
  }
  o << "cuparity capture: " << map["processes"].size() << " process"
    << (map["processes"].size() == 1 ? "" : "es") << ", driver "
    << terminal_text(map["driver"]["path"].is_string() ? map["driver"]["path"].get<std::string>()
                                                       : std::string("never loaded"))
    << "\n";
  for (const auto &p : map["processes"]) {
    const image at{p["pid"].get<long>(), p["image"].get<int>()};
    const auto &argv = p["argv"];
    o << "  pid " << at.first << " "
      << terminal_text(argv.empty() ? std::string("?") : argv[0].get<std::string>()) << ":";
    if (by_source[at].empty())
      o << " bound nothing of the driver";
    for (const auto &[source, n] : by_source[at])
      o << " " << n << " " << source;
    if (per_thread[at])
      o << " (" << per_thread[at] << " per-thread)";
    o << terminal_text(notes[at]) << "\n";
  }
  if (!notes[{0, 0}].empty())
    o << "  " << terminal_text(notes[{0, 0}]) << "\n";
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
    if (!opt.no_python_hook)
      request.python_hook = python_hook_folder();
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
  // It changes the command's PYTHONPATH (the hook's folder first), which a program may look at.
  cmd->add_flag("--no-python-hook", opt->no_python_hook,
                "Leave PYTHONPATH alone: no start-up hook records cuda.bindings' own table");
  cmd->add_option("command", opt->command, "The command and its arguments, after --")->required();
  cmd->footer("The command's exit status is cuparity's; the map and a summary go to --out and "
              "stderr. Example: cuparity capture --out torch.json -- python3 -c 'import torch; "
              "torch.zeros(1, device=\"cuda\")'");
  cmd->callback([opt, &run] { run = [opt] { return run_capture(*opt); }; });
}

} // namespace cuparity::cli
