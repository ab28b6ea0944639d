// LD_AUDIT is inherited through the environment, so every process the command starts is
// captured too, each writing its own file into one folder (docs/capture.md).
#include "harness/capture/process_capture.hpp"

#include "harness/capture/capture_map.hpp"
#include "harness/platform/attached_process.hpp"
#include "harness/platform/environment.hpp"
#include "harness/platform/utc_time.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <system_error>
#include <unistd.h>

namespace cuparity {
namespace {

namespace fs = std::filesystem;

/// A scratch folder removed when this goes out of scope (never throws).
class scratch_dir {
public:
  scratch_dir() {
    const char *tmp = std::getenv("TMPDIR");
    // Absolute: a captured process that changes directory still writes here.
    std::string pattern =
        fs::absolute(tmp && *tmp ? tmp : "/tmp").string() + "/cuparity-capture-XXXXXX";
    if (!mkdtemp(pattern.data()))
      throw capture_error("cannot make a scratch folder " + pattern + ": " +
                          std::generic_category().message(errno));
    m_path = pattern;
  }
  ~scratch_dir() {
    std::error_code ec;
    fs::remove_all(m_path, ec);
  }
  scratch_dir(const scratch_dir &) = delete;
  scratch_dir &operator=(const scratch_dir &) = delete;
  [[nodiscard]] const std::string &path() const noexcept { return m_path; }

private:
  std::string m_path;
};

std::map<std::string, std::string> capture_environment(const capture_request &r,
                                                       const std::string &dir) {
  auto env = current_environment();
  const auto audit = env.find("LD_AUDIT");
  env["LD_AUDIT"] =
      r.audit_library +
      (audit != env.end() && !audit->second.empty() ? ":" + audit->second : std::string());
  env["CUPARITY_CAPTURE_DIR"] = dir;
  if (!r.driver_path.empty())
    env["CUPARITY_CAPTURE_DRIVER"] = r.driver_path;
  else
    env.erase("CUPARITY_CAPTURE_DRIVER");
  if (!r.python_hook.empty()) {
    // First, so its sitecustomize is the one site imports; it takes itself off sys.path again
    // and imports the next one (tools/capture/python_hook/sitecustomize.py).
    const auto pp = env.find("PYTHONPATH");
    env["PYTHONPATH"] =
        r.python_hook + (pp != env.end() && !pp->second.empty() ? ":" + pp->second : std::string());
  }
  return env;
}

/// The first argument a running process was started with, else its comm ("?" when gone).
std::string program_of(long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
  std::string arg;
  if (std::getline(in, arg, '\0') && !arg.empty())
    return arg;
  std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
  return std::getline(comm, arg) ? arg : std::string("?");
}

/// Whether `pid` is a child of `self` that has not exited, from its /proc stat line.
bool running_child_of(long self, long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  std::getline(in, stat);
  const auto comm_end = stat.rfind(')'); // the name in parentheses may hold anything
  if (comm_end == std::string::npos)
    return false;
  std::istringstream rest(stat.substr(comm_end + 1));
  char state = 0;
  long ppid = 0;
  return (rest >> state >> ppid) && ppid == self && state != 'Z' && state != 'X';
}

/// Every pid in /proc: the candidates for a child left running.
std::vector<long> all_pids() {
  std::vector<long> pids;
  std::error_code ec;
  // Advanced with an error code: /proc changes as it is read, and nothing here may throw.
  for (fs::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.empty() && name.find_first_not_of("0123456789") == std::string::npos)
      pids.push_back(std::strtol(name.c_str(), nullptr, 10));
  }
  return pids;
}

/// This process's children still running: after the command has exited, the orphans of its tree,
/// which PR_SET_CHILD_SUBREAPER gave to this process. The ones that finished are reaped first.
/// Only when some child is left is /proc read: it costs a file per process of the host, kernel
/// threads included, and most commands leave nothing behind.
std::vector<lost_process> still_running() {
  pid_t reaped = 0;
  while ((reaped = waitpid(-1, nullptr, WNOHANG)) > 0) {
  }
  if (reaped < 0 && errno == ECHILD) // no child at all: the whole tree has ended
    return {};
  std::vector<lost_process> out;
  const long self = getpid();
  for (const long pid : all_pids())
    if (running_child_of(self, pid))
      out.push_back({pid, program_of(pid),
                     "still running when the command exited: what it binds from then on is not "
                     "in the map"});
  return out;
}

/// The processes whose bindings the map misses, each in words, into the map's facts too.
std::vector<std::string> lost_processes(const std::vector<captured_process> &processes,
                                        std::vector<lost_process> orphans, capture_facts &facts) {
  for (const auto &p : processes)
    orphans.insert(orphans.end(), p.lost.begin(), p.lost.end());
  std::vector<std::string> lost;
  for (const auto &o : orphans) {
    lost.push_back("pid " + std::to_string(o.pid) + " (" + o.exe + "): " + o.why);
    facts.lost.push_back({{"pid", o.pid}, {"exe", o.exe}, {"why", o.why}});
  }
  for (const auto &problem : facts.problems)
    lost.push_back("events of " + problem);
  return lost;
}

/// What posix_spawnp's E2BIG means here, with the sizes the kernel counts.
std::string too_big(const std::vector<std::string> &argv,
                    const std::map<std::string, std::string> &env) {
  std::size_t bytes = 0;
  for (const auto &a : argv)
    bytes += a.size() + 1 + sizeof(char *);
  for (const auto &[k, v] : env)
    bytes += k.size() + v.size() + 2 + sizeof(char *);
  return "cannot start " + argv.front() + ": its arguments and environment are too big for exec " +
         "(E2BIG: " + std::to_string(argv.size()) + " arguments, " + std::to_string(bytes) +
         " bytes with the capture's variables; the limit is a quarter of the stack limit, " +
         std::to_string(sysconf(_SC_ARG_MAX)) + " bytes here)";
}

/// Why no process was captured, as far as the capture folder tells.
std::string nothing_captured(int exit_status, const std::vector<std::string> &problems) {
  std::string why =
      "the command exited " + std::to_string(exit_status) + ", but no process of it was captured: ";
  if (problems.empty())
    return why + "the audit library did not load (a setuid or statically linked program, or "
                 "LD_AUDIT refused it)";
  why += "the audit library loaded, but no process's events could be read (";
  for (std::size_t i = 0; i < problems.size(); ++i)
    why += (i ? "; " : "") + problems[i];
  return why + ")";
}

} // namespace

capture_outcome capture_process_tree(const capture_request &r) {
  std::error_code ec;
  if (!fs::is_regular_file(r.audit_library, ec))
    throw capture_error("the audit library " + r.audit_library +
                        " is missing: build it (scripts/build --target cuparity_audit)");
  std::optional<scratch_dir> scratch;
  std::string dir = r.events_dir;
  if (dir.empty()) {
    scratch.emplace();
    dir = scratch->path();
  } else {
    dir = fs::absolute(dir).string();
  }
  process_result ran;
  const auto env = capture_environment(r, dir);
  // Orphans of the command's tree become this process's children, so the ones still running
  // when the command exits can be named: their bindings from then on cannot be in the map.
  const bool subreaper = prctl(PR_SET_CHILD_SUBREAPER, 1) == 0;
  try {
    ran = run_attached(r.command, env);
  } catch (const std::system_error &e) {
    if (e.code() == std::errc::argument_list_too_long)
      throw capture_error(too_big(r.command, env));
    throw capture_error(e.what());
  }
  const auto orphans = subreaper ? still_running() : std::vector<lost_process>();
  if (subreaper)
    prctl(PR_SET_CHILD_SUBREAPER, 0);
  capture_facts facts;
  facts.command = r.command;
  facts.exit_status = shell_status(ran);
  facts.captured = utc_now();
  facts.python_hook = !r.python_hook.empty();
  const auto processes = read_capture_dir(dir, facts.problems);
  if (processes.empty())
    throw capture_error(nothing_captured(facts.exit_status, facts.problems));
  const auto tables = read_package_tables(dir);
  for (const auto &t : tables)
    if (!is_captured(processes, t.pid)) // the hook ran where the audit library wrote nothing
      facts.problems.push_back(t.file + ": pid " + std::to_string(t.pid) +
                               " wrote a package table, but is no captured process");
  auto lost = lost_processes(processes, orphans, facts);
  return {facts.exit_status, capture_map_json(processes, facts, tables), std::move(lost)};
}

} // namespace cuparity
