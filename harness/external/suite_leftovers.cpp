// Finding a suite's leftover processes in /proc, killing them through pidfds, reaping the adopted.
#include "harness/external/suite_leftovers.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <fcntl.h>
#include <optional>
#include <poll.h>
#include <set>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#ifndef P_PIDFD
#define P_PIDFD 3 // waitid(2) on a pidfd, Linux 5.4; older C libraries lack the name
#endif

namespace cuparity {
namespace {

using steady = std::chrono::steady_clock;

/// How long killed processes get to end before the sweep goes on without them (a process in an
/// uninterruptible sleep, a GPU driver's call, ends only when that call returns).
constexpr std::chrono::seconds leftover_exit_wait{10};
/// The most read of a process's environment (the kernel's own limit on it is about this size).
constexpr std::size_t environ_limit = std::size_t{8} << 20;

/// Up to `most` bytes of a /proc file; none when it cannot be opened (the process ended).
std::optional<std::string> read_proc_file(const std::string &path, std::size_t most) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return std::nullopt;
  std::string text;
  char buf[16384];
  while (text.size() < most) {
    const ssize_t got = ::read(fd, buf, sizeof buf);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      break;
    text.append(buf, static_cast<std::size_t>(got));
  }
  ::close(fd);
  return text;
}

struct proc_stat {
  char state = '?';
  int ppid = 0, pgrp = 0;
  std::string comm;
};

/// /proc/<pid>/stat: "pid (comm) state ppid pgrp ..."; comm may hold spaces and parentheses.
std::optional<proc_stat> read_stat(int pid) {
  const auto text = read_proc_file("/proc/" + std::to_string(pid) + "/stat", 4096);
  if (!text)
    return std::nullopt;
  const auto open = text->find('('), close = text->rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open)
    return std::nullopt;
  proc_stat s;
  s.comm = text->substr(open + 1, close - open - 1);
  if (std::sscanf(text->c_str() + close + 1, " %c %d %d", &s.state, &s.ppid, &s.pgrp) != 3)
    return std::nullopt;
  return s;
}

bool environment_holds(int pid, const std::string &marker) {
  const auto text = read_proc_file("/proc/" + std::to_string(pid) + "/environ", environ_limit);
  if (!text)
    return false;
  for (std::size_t at = 0; at < text->size();) {
    const auto end = std::min(text->find('\0', at), text->size());
    if (text->compare(at, end - at, marker) == 0)
      return true;
    at = end + 1;
  }
  return false;
}

std::vector<int> all_pids() {
  std::vector<int> pids;
  DIR *dir = ::opendir("/proc");
  if (!dir)
    return pids;
  while (const dirent *e = ::readdir(dir)) {
    char *end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (pid > 0 && *end == '\0')
      pids.push_back(static_cast<int>(pid));
  }
  ::closedir(dir);
  return pids;
}

int pidfd_of(int pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  errno = ENOSYS;
  return -1;
#endif
}

void kill_process(int pidfd, int pid) {
#ifdef SYS_pidfd_send_signal
  if (pidfd >= 0) {
    (void)::syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0);
    return;
  }
#endif
  (void)::kill(pid, SIGKILL);
}

struct killed_process {
  int pid = 0;
  int pidfd = -1; ///< -1 on a kernel without pidfds (before 5.3)
};

/// Whether the process of a leftover has ended (it may be a zombie still).
bool has_ended(const killed_process &k) {
  if (k.pidfd >= 0) {
    pollfd p{k.pidfd, POLLIN, 0};
    return ::poll(&p, 1, 0) != 0;
  }
  const auto s = read_stat(k.pid);
  return !s || s->state == 'Z' || s->state == 'X';
}

/// Waits (bounded) for the killed processes to end, then reaps those that became this process's
/// children: through their pidfd when there is one, so never another process that took the pid.
void reap(std::vector<killed_process> &killed) {
  const auto deadline = steady::now() + leftover_exit_wait;
  for (const auto &k : killed)
    while (!has_ended(k) && steady::now() < deadline)
      if (k.pidfd >= 0) {
        pollfd p{k.pidfd, POLLIN, 0};
        (void)::poll(&p, 1, 100);
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
  for (auto &k : killed) {
    siginfo_t info{};
    if (k.pidfd >= 0) {
      (void)::waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(k.pidfd), &info,
                     WEXITED | WNOHANG);
      ::close(k.pidfd);
    } else if (const auto s = read_stat(k.pid); s && s->ppid == ::getpid() && s->state == 'Z') {
      (void)::waitpid(k.pid, nullptr, WNOHANG);
    }
  }
  killed.clear();
}

/// Whether a process outside the suite's group may still be one of its leftovers. This process is
/// the subreaper of the suite's (adopt_orphans, before the suite started): whatever the suite left
/// running outside its group has, at its top, a process whose parent ended and which became this
/// process's child; what hangs below it is found once that one is killed (the sweep rescans).
/// So only this process's children need their environment read, not every process of the host
/// (about 20 us each: 10 ms a suite process on a busy host). Without a subreaper, any might be.
bool may_be_adopted(const proc_stat &s, int self) {
  return !adopt_orphans() || s.ppid == self;
}

/// One scan of /proc: kills what belongs to the suite (group `pgid`, whose leader is skipped, or
/// `marker`) and is running, reaps the ended processes of the group that became this process's
/// children. Appends what it killed to `found`.
bool sweep_once(int pgid, const std::string &marker, bool group_killed,
                std::vector<leftover_process> &found, std::set<int> &named) {
  const int self = ::getpid();
  std::vector<killed_process> killed;
  for (const int pid : all_pids()) {
    if (pid == self || pid == pgid)
      continue;
    const auto s = read_stat(pid);
    if (!s)
      continue;
    if (s->state == 'Z' || s->state == 'X') {
      // The group's pid stays taken while a member lives: a zombie in it is the suite's.
      if (s->ppid == self && s->pgrp == pgid)
        (void)::waitpid(pid, nullptr, WNOHANG);
      continue;
    }
    if (s->pgrp != pgid && !may_be_adopted(*s, self) && !environment_holds(pid, marker))
      continue;
    // Pin the process, then look again: the pid may have ended and been taken meanwhile.
    const int fd = pidfd_of(pid);
    if (fd < 0 && errno != ENOSYS)
      continue;
    const auto again = read_stat(pid);
    if (!again || (again->pgrp != pgid && !environment_holds(pid, marker))) {
      if (fd >= 0)
        ::close(fd);
      continue;
    }
    kill_process(fd, pid);
    killed.push_back({pid, fd});
    if (named.insert(pid).second && (!group_killed || again->pgrp != pgid))
      found.push_back({pid, again->comm});
  }
  const bool any = !killed.empty();
  reap(killed);
  return any;
}

} // namespace

bool adopt_orphans() noexcept {
  static const bool adopted = ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0;
  return adopted;
}

std::vector<leftover_process> end_leftover_processes(int leader, const std::string &marker,
                                                     bool group_killed) {
  std::vector<leftover_process> found;
  std::set<int> named;
  try {
    for (int round = 0; round < leftover_rounds; ++round)
      if (!sweep_once(leader, marker, group_killed, found, named))
        break;
  } catch (...) {
    // Out of memory while scanning: what was found so far is what is reported.
  }
  return found;
}

std::string describe_leftovers(const std::vector<leftover_process> &left) {
  std::string text =
      std::to_string(left.size()) + (left.size() == 1 ? " process: " : " processes: ");
  for (std::size_t i = 0; i < left.size() && i < 20; ++i)
    text += (i ? ", " : "") + std::to_string(left[i].pid) + " (" + left[i].comm + ")";
  if (left.size() > 20)
    text += " and " + std::to_string(left.size() - 20) + " more";
  return text;
}

} // namespace cuparity
