// Starting one suite process under capture, watching its deadline, and reading what it left.
#include "harness/external/suite_process.hpp"

#include "harness/config/config.hpp"
#include "harness/external/suite_leftovers.hpp"
#include "harness/platform/self_exe.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <poll.h>
#include <sstream>
#include <stdexcept>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <system_error>
#include <thread>
#include <unistd.h>

namespace cuparity {
namespace fs = std::filesystem;

namespace {

using steady = std::chrono::steady_clock;

/// The kernel's count of OOM kills since boot (/proc/vmstat oom_kill, Linux 4.13+); -1 when it
/// cannot be read. Its rise while a suite process ran is the evidence that the SIGKILL it got was
/// the OOM killer's: seen on the H200, where Numba's managed-memory test sizes host memory from
/// the GPU's 140 GiB on a 128 GiB host (reports/runs/2026-12-03-h200-9e2b2e1-numba-junit).
long oom_kill_count() {
  std::ifstream in("/proc/vmstat");
  std::string key;
  long value = 0;
  while (in >> key >> value)
    if (key == "oom_kill")
      return value;
  return -1;
}

std::string replace_all(std::string s, const std::string &from, const std::string &to) {
  for (auto at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

/// The plugin ships beside the executable (build tree: bin/python) or in lib/cuparity/python.
std::string plugin_folder() {
  const std::string file = companion_library(executable_dir(), "python/cuparity_pytest.py");
  std::error_code ec;
  if (!fs::is_regular_file(file, ec))
    throw std::runtime_error("cuparity's pytest plugin is missing (looked for " + file +
                             "): the build or installation is incomplete");
  return fs::path(file).parent_path().string();
}

void write_node_ids(const std::string &path, const std::vector<std::string> &ids) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  for (const auto &id : ids)
    out << id << '\n';
  if (!out.flush())
    throw std::system_error(errno, std::generic_category(), "cannot write " + path);
}

/// Where the plugin writes its lines. Also what marks this suite process's descendants: the
/// variable holds a path no other suite process is given (suite_leftovers finds them by it).
std::string progress_path(const suite_process_spec &s) {
  return s.dir + "/progress.jsonl";
}

/// The cell's environment plus what lets cuparity follow the tests: the plugin on PYTHONPATH and
/// in PYTEST_ADDOPTS (pytest's own way to add options from outside), and its files.
std::map<std::string, std::string> suite_environment(const suite_process_spec &s) {
  auto env = s.env;
  for (const auto &[k, v] : s.extra_env)
    env[k] = v;
  // The marker by which what it leaves running is found (suite_leftovers); a program is no pytest
  // run, and its own PYTHONPATH and PYTEST_ADDOPTS stay as they are.
  env["CUPARITY_SUITE_PROGRESS"] = progress_path(s);
  if (s.program)
    return env;
  const std::string plugin = plugin_folder();
  const auto pp = env.find("PYTHONPATH");
  env["PYTHONPATH"] = pp == env.end() || pp->second.empty() ? plugin : plugin + ":" + pp->second;
  const auto addopts = env.find("PYTEST_ADDOPTS");
  env["PYTEST_ADDOPTS"] =
      (addopts == env.end() ? "" : addopts->second + " ") + "-p cuparity_pytest";
  env["CUPARITY_SUITE_DIR"] = s.suite_dir;
  if (!s.deselect.empty()) {
    write_node_ids(s.dir + "/deselect.txt", s.deselect);
    env["CUPARITY_SUITE_DESELECT"] = s.dir + "/deselect.txt";
  }
  if (!s.only.empty()) {
    write_node_ids(s.dir + "/only.txt", s.only);
    env["CUPARITY_SUITE_ONLY"] = s.dir + "/only.txt";
  }
  // A module that cannot import is that module's error (issue 49: numba-cuda's cffi), not the
  // end of the session.
  env["CUPARITY_SUITE_CONTINUE_COLLECTION"] = "1";
  if (s.same_failures > 0)
    env["CUPARITY_SUITE_SAME_FAILURES"] = std::to_string(s.same_failures);
  if (s.max_fails > 0)
    env["CUPARITY_SUITE_MAX_FAILS"] = std::to_string(s.max_fails);
  return env;
}

/// Whether the child `pid` has ended, leaving it unreaped (child_process::wait reaps it). A
/// failed waitid (no such child) counts as ended: waiting on would never end.
bool child_ended(int pid) {
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0)
    return errno != EINTR;
  return info.si_pid == pid;
}

/// A pidfd of a child (Linux 5.3), closed when it goes; -1 where the kernel has none.
class owned_pidfd {
public:
  explicit owned_pidfd(int pid) {
#ifdef SYS_pidfd_open
    m_fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
    (void)pid;
#endif
  }
  owned_pidfd(const owned_pidfd &) = delete;
  owned_pidfd &operator=(const owned_pidfd &) = delete;
  ~owned_pidfd() {
    if (m_fd >= 0)
      ::close(m_fd);
  }
  /// Until the process ends or `most` passed; without a pidfd, `most`.
  void wait(std::chrono::milliseconds most) const {
    if (m_fd < 0) {
      std::this_thread::sleep_for(most);
      return;
    }
    pollfd p{m_fd, POLLIN, 0};
    (void)::poll(&p, 1, static_cast<int>(most.count()));
  }

private:
  int m_fd = -1;
};

/// Waits for the suite's process to end, its deadline, or the run's stop; then for it to be
/// gone (a zombie still, so that its pid and process group stay its own for the sweep). The end
/// of the process, not of its events pipe: a process it left running holds the pipe open
/// (a test's background sleeper), and must not turn a pass into a timeout.
void wait_for_suite(child_process &child, suite_process_result &r, steady::time_point deadline,
                    const std::atomic<bool> &stop) {
  constexpr std::chrono::milliseconds slice_most(20);
  bool events_open = true;
  std::string line;
  // Once the events pipe is closed, the wait is on the process itself: a pidfd turns readable
  // when it ends (Linux 5.3), where sleeping in slices noticed it up to 20 ms late, on every
  // process of a suite. Without one (an older kernel, ENOSYS), the slices stay.
  const owned_pidfd pidfd(child.pid());
  for (;;) {
    if (child_ended(child.pid()))
      return;
    if (stop) {
      r.stopped = true;
      break;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady::now());
    if (left.count() <= 0) {
      r.timed_out = true;
      break;
    }
    const auto slice = std::min(left, slice_most);
    // Lines on the pipe are drained (a writer must not block on it) and otherwise unused.
    if (!events_open || child.read_line(line, slice) == child_process::read_status::eof) {
      events_open = false;
      pidfd.wait(slice);
    }
  }
  child.kill_group();
  siginfo_t info{};
  while (::waitid(P_PID, static_cast<id_t>(child.pid()), &info, WEXITED | WNOWAIT) != 0 &&
         errno == EINTR) {
  }
}

/// Ends what the suite's process left running and names it: in the result and, last, in its log.
void end_leftovers(suite_process_result &r, int leader, const std::string &marker) {
  const std::vector<leftover_process> left =
      end_leftover_processes(leader, marker, r.timed_out || r.stopped);
  for (const auto &p : left)
    r.left.push_back(std::to_string(p.pid) + " (" + p.comm + ")");
  if (left.empty())
    return;
  const std::string line = "\ncuparity: killed what the suite's process left running, " +
                           describe_leftovers(left) + "\n";
  const int fd = ::open(r.log_path.c_str(), O_WRONLY | O_APPEND | O_NONBLOCK | O_CLOEXEC);
  if (fd >= 0) {
    (void)!::write(fd, line.data(), line.size());
    ::close(fd);
  }
}

void read_junit(suite_process_result &r) {
  std::error_code ec;
  if (!fs::exists(r.junit_path, ec)) {
    r.junit_problem = "wrote no JUnit file at " + r.junit_path;
    return;
  }
  try {
    r.junit = read_junit_report(r.junit_path);
  } catch (const std::exception &e) {
    r.junit_problem = std::string("left a JUnit file that cannot be read: ") + e.what();
  }
}

/// "5", "0.5": a number of seconds as the matrix would write it.
std::string seconds_text(double s) {
  std::ostringstream out;
  out << s;
  return out.str();
}

} // namespace

std::string suite_process_result::how_it_ended() const {
  std::string how;
  if (timed_out)
    how = "timed out: killed at the suite's timeout_s, " + seconds_text(timeout_s) + " s";
  else if (signal)
    how = "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  else
    how = "exited with code " + std::to_string(exit_code);
  if (oom_kills > 0)
    how += "; the kernel's OOM killer ended " + std::to_string(oom_kills) + " process" +
           (oom_kills > 1 ? "es" : "") + " meanwhile (/proc/vmstat oom_kill)";
  return how;
}

double suite_process_result::in_flight_s() const {
  const suite_test_progress *t = progress.in_flight();
  if (t && t->started_unix > 0 && ended_unix >= t->started_unix)
    return ended_unix - t->started_unix;
  return wall_ms / 1000;
}

suite_process_result run_suite_process(const suite_process_spec &spec,
                                       const std::atomic<bool> &stop) {
  suite_process_result r;
  r.dir = spec.dir;
  r.timeout_s = static_cast<double>(spec.timeout.count()) / 1000;
  fs::create_directories(spec.dir);
  r.junit_path = replace_all(spec.junit, "{out}", spec.dir);
  if (fs::path(r.junit_path).is_relative())
    r.junit_path = (fs::path(spec.dir) / r.junit_path).string();
  r.map_path = spec.dir + "/capture.json";
  r.log_path = spec.dir + "/output.log";
  process_spec p;
  p.argv = {self_executable(), "capture", "--quiet", "--out", r.map_path, "--"};
  for (const auto &arg : spec.command)
    p.argv.push_back(replace_all(replace_all(arg, "{junit}", r.junit_path), "{out}", spec.dir));
  p.env = suite_environment(spec);
  p.cwd = spec.cwd;
  (void)adopt_orphans(); // a double-forked daemon of the suite's becomes ours to reap
  const long oom_before = oom_kill_count();
  const auto t0 = steady::now();
  {
    child_process child(p, r.log_path);
    r.pid = child.pid();
    wait_for_suite(child, r, t0 + spec.timeout, stop);
    end_leftovers(r, child.pid(), "CUPARITY_SUITE_PROGRESS=" + progress_path(spec));
    const process_result ended = child.wait();
    // capture exits with the command's status as a shell reports it: 128 + a signal's number.
    r.exit_code = ended.exited ? ended.exit_code : 128 + ended.signal;
    r.signal = !ended.exited ? ended.signal : ended.exit_code > 128 ? ended.exit_code - 128 : 0;
  }
  r.wall_ms = std::chrono::duration<double, std::milli>(steady::now() - t0).count();
  r.ended_unix =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const long oom_after = oom_kill_count();
  r.oom_kills = oom_before >= 0 && oom_after > oom_before ? oom_after - oom_before : 0;
  r.progress = read_suite_progress(progress_path(spec));
  if (!spec.program)
    read_junit(r);
  std::error_code ec;
  r.map_written = fs::is_regular_file(r.map_path, ec);
  return r;
}

std::string log_tail(const std::string &path, std::size_t lines) {
  // The suite's process may have put anything at the log's path (a FIFO): read a regular file only.
  const int fd = open_regular_file(path);
  if (fd < 0)
    return "";
  const off_t size = ::lseek(fd, 0, SEEK_END);
  const off_t from = size > 2048 ? size - 2048 : 0;
  std::string text(2048, '\0');
  const ssize_t got = size < 0 ? -1 : ::pread(fd, text.data(), text.size(), from);
  ::close(fd);
  text.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
    text.pop_back();
  std::size_t at = text.size();
  for (std::size_t n = 0; n < lines && at != std::string::npos && at > 0; ++n)
    at = text.rfind('\n', at - 1);
  return at == std::string::npos || at == 0 ? text : text.substr(at + 1);
}

} // namespace cuparity
