// The Python probe process of a cell (docs/latency.md#the-python-path).
#include "harness/latency/python_probe_process.hpp"

#include "harness/config/config.hpp"
#include "harness/matrix/python_probes.hpp"
#include "harness/platform/environment.hpp"

#include <filesystem>
#include <sstream>
#include <unistd.h>

namespace cuparity {
namespace fs = std::filesystem;

namespace {

/// `name` found as execvp would: itself when it holds a '/', else the first executable file of
/// that name in the colon-separated `path` ("" when none).
std::string find_program(const std::string &name, const std::string &path) {
  if (name.find('/') != std::string::npos)
    return access(name.c_str(), X_OK) == 0 ? name : "";
  std::istringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / name;
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec) && access(candidate.c_str(), X_OK) == 0)
      return candidate.string();
  }
  return "";
}

/// The cell's environment for the Python process, [latency] python_environment applied.
std::map<std::string, std::string> python_env(const matrix &m, const cell &c,
                                              const latency_run_options &o) {
  auto env = o.python_environment ? o.python_environment(c)
                                  : environment_with(cell_changes(m.variables, c.env, o.gpu));
  for (const auto &[name, value] : m.latency.python_environment) {
    auto it = env.find(name);
    if (name == "PYTHONPATH" && it != env.end() && !it->second.empty())
      it->second += ":" + value;
    else
      env[name] = value;
  }
  return env;
}

} // namespace

bool runs_native_probes(const latency_settings &l) {
  return l.probes.empty() || !l.native_probes.empty();
}

bool runs_python_probes(const latency_settings &l) {
  return !l.python_probes.empty() || (l.python && l.probes.empty());
}

std::vector<std::string> probe_process_args(const latency_settings &l, const latency_run_options &o,
                                            bool python) {
  const double min_time = o.min_time_override > 0 ? o.min_time_override : l.min_time_s;
  std::vector<std::string> args{"--min-time", std::to_string(min_time), "--block-time",
                                std::to_string(l.block_time_s)};
  for (const auto &[probe, seconds] : l.min_times)
    if (is_python_probe(probe) == python)
      args.insert(args.end(), {"--probe-time", probe + "=" + std::to_string(seconds)});
  // No selection means every probe of either process; a selection gives each process its own.
  if (!l.probes.empty())
    for (const auto &p : python ? l.python_probes : l.native_probes)
      args.insert(args.end(), {"--probe", p});
  if (python)
    for (const auto &module : l.python_requires)
      args.insert(args.end(), {"--require", module});
  return args;
}

python_probe_start python_probe_spec(const matrix &m, const cell &c, const latency_run_options &o,
                                     const std::vector<std::string> &args) {
  python_probe_start out;
  const std::string script = companion_library(executable_dir(), "python/cuparity_pyprobe.py");
  std::error_code ec;
  if (!fs::is_regular_file(script, ec)) {
    out.error = "python probe: " + script + " is missing (python/ beside the executable)";
    return out;
  }
  try {
    out.spec.env = python_env(m, c, o);
  } catch (const std::exception &e) {
    out.error = std::string("python probe: the cell's environment: ") + e.what();
    return out;
  }
  const std::string &wanted = m.latency.python_interpreter;
  const auto path = out.spec.env.find("PATH");
  const std::string program =
      find_program(wanted, path == out.spec.env.end() ? "/usr/bin:/bin" : path->second);
  if (program.empty()) {
    out.error = "python probe: [latency] python_interpreter '" + wanted + "' is " +
                (wanted.find('/') == std::string::npos ? "not found on the cell's PATH"
                                                       : "not an executable file");
    return out;
  }
  out.spec.argv = {program, script, "--events-fd", "3"};
  out.spec.argv.insert(out.spec.argv.end(), args.begin(), args.end());
  return out;
}

} // namespace cuparity
