// PR_SET_PDEATHSIG at the start of a child, with the check that closes its race.
//
// Why the child arms it, and not the spawn: posix_spawn runs no code of ours between the clone and
// the exec, and replacing it would mean a hand-written fork or vfork in processes that have many
// threads and a driver loaded. After fork(2) in a multithreaded process the child may call only
// async-signal-safe functions until it execs (fork(2), signal-safety(7)); a vfork-style child
// shares the parent's memory, so it must also keep signal handlers and errno off the parent's
// state, which glibc's posix_spawn does for us. Every process cuparity starts through
// harness/platform/subprocess is cuparity again (cells, helpers, probes, `cuparity env` for the
// driver check and the binding cases), so a few lines at the start of its main cover them all.
//
// The race: a parent that dies after the spawn but before the child's prctl sends no signal
// (the setting only acts on a later death; prctl(2): "the signal that the calling process will
// get when its parent dies"), so once the signal is armed the child looks for the pid its parent
// wrote in the environment: a child already reparented (to init or a subreaper) kills itself.
// The pid is looked for among all ancestors, not only getppid(): a program that is not cuparity
// passes the variable on unchanged (the tests start `ctest`, which starts `cuparity run`), and
// such a child must run, with the signal armed against its own parent.
//
// What "parent" means: prctl(2) says "the 'parent' in this case is considered to be the thread
// that created this process": the signal comes when that thread ends, even while the rest of
// the process runs on. Whoever starts children from a thread must therefore reap them before the
// thread ends (subprocess.hpp says so, and the runner's workers, the latency phase and the
// cell's cases all do); getppid() cannot see that case (it names the process), so it is the
// caller's rule, not a check here.
#include "harness/platform/parent_death.hpp"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

namespace cuparity {
namespace {

/// The parent of `pid`: field 4 of /proc/<pid>/stat (proc(5)); 0 when it cannot be read.
pid_t parent_of(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  char buf[1024];
  const ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0)
    return 0;
  buf[n] = '\0';
  // Field 2, the command, is in parentheses and may hold spaces or ')': skip to the last ')'.
  const char *close_paren = std::strrchr(buf, ')');
  char state = 0;
  int parent = 0;
  if (close_paren == nullptr || std::sscanf(close_paren + 1, " %c %d", &state, &parent) != 2)
    return 0;
  return parent;
}

/// Whether `pid` is this process's parent or one of its ancestors, init (pid 1) aside: an orphan
/// is reparented to init, so init proves nothing.
bool is_ancestor(pid_t pid) {
  int depth = 0;
  for (pid_t p = getppid(); p > 1 && depth < 256; p = parent_of(p), ++depth)
    if (p == pid)
      return true;
  return false;
}

} // namespace

void die_with_parent() noexcept {
  const char *raw = std::getenv(parent_pid_variable);
  if (raw == nullptr)
    return;
  char *end = nullptr;
  const long expected = std::strtol(raw, &end, 10);
  const bool valid = end != raw && *end == '\0' && expected > 0;
  unsetenv(parent_pid_variable);
  if (!valid)
    return;
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
    return;
  if (!is_ancestor(static_cast<pid_t>(expected)))
    kill(getpid(), SIGKILL); // the parent went before the signal was armed: as if it had come
}

} // namespace cuparity
