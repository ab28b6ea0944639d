// PR_SET_PDEATHSIG at the start of a child, with the check that closes its race.
//
// Why the child arms it, and not the spawn: posix_spawn runs no code of ours between the clone and
// the exec, and replacing it would mean a hand-written fork or vfork in processes that have many
// threads and a driver loaded. After fork(2) in a multithreaded process the child may call only
// async-signal-safe functions until it execs (fork(2), signal-safety(7)); a vfork-style child
// shares the parent's memory, so it must also keep signal handlers and errno off the parent's
// state, which glibc's posix_spawn does for us. Every process harness/platform/subprocess starts
// today is this same binary (cells, helpers, probes, `cuparity env` for the driver check and the
// binding cases), so a few lines at the start of its main cover them all.
//
// The race: a parent that dies after the spawn but before the child's prctl sends no signal
// (the setting only acts on a later death), so the child compares getppid() with the pid its
// parent wrote in the environment once the signal is armed; a child reparented already kills
// itself. prctl(2): "the signal that the calling process will get when its parent dies".
//
// What "parent" means: prctl(2) says "the 'parent' in this case is considered to be the thread
// that created this process": the signal comes when that thread ends, even while the rest of
// the process runs on. Whoever starts children from a thread must therefore reap them before the
// thread ends (subprocess.hpp says so, and the runner's workers, the latency phase and the
// cell's cases all do); getppid() cannot see that case (it names the process), so it is the
// caller's rule, not a check here.
#include "harness/platform/parent_death.hpp"

#include <csignal>
#include <cstdlib>
#include <string>
#include <sys/prctl.h>
#include <unistd.h>

namespace cuparity {

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
  if (getppid() != static_cast<pid_t>(expected))
    kill(getpid(), SIGKILL); // the parent went before the signal was armed: as if it had come
}

} // namespace cuparity
