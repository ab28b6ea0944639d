// Names of the shared-memory objects behind device memory and IPC events, and the sweep that
// removes those a killed process left behind.
//
// Every cuMemAlloc and every interprocess event of the simulator is a POSIX shared-memory object
// (a file in /dev/shm), so that another process can open it from an IPC handle. A process that
// ends normally unlinks its own (the destructors in memory.cpp and events.cpp); one killed by
// SIGKILL (a watchdog, a dying runner) cannot, and about 3 MB per killed cell stayed in /dev/shm.
//
// The scheme: a name says who made it, "/<prefix>.<pid>.<start time>.<n>", the start time being
// field 22 of /proc/<pid>/stat (clock ticks after boot, proc(5)), so that a pid the kernel has
// handed to a new process since does not look like the maker still alive. The first cuInit of
// every simulated process sweeps: it unlinks every such object whose maker is gone; and so does
// its normal exit (a maker still dying at the first sweep is dead by then). A killed process's
// objects therefore live until the next simulated process starts or ends, which for a run is at
// the latest its `--resume` (whose driver check runs `cuparity env`, calling cuInit).
//
// Why not unlink early: an IPC handle may be opened by any number of processes, at any time
// until the exporter frees the memory (that is what the IPC cases test), so there is no moment
// after which the name is no longer needed; and a name-less object (memfd) could only be
// reopened through /proc/<pid>/fd of the exporter, which holds one descriptor per allocation.
//
// Limits: a process in another pid namespace that shares this /dev/shm would look dead (its pid
// names some other process, or none); containers get a /dev/shm of their own, and the sweep
// only touches names with these prefixes and its own CUPARITY_SIM_SHM_TAG (config.cpp). unlink
// in /dev/shm (a sticky directory) only succeeds for objects of this user.
#include "sim.hpp"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <optional>
#include <sstream>
#include <sys/mman.h>
#include <unistd.h>

namespace cuparity::sim {
namespace {

/// Field 22 of /proc/<pid>/stat, the process's start time; nullopt when it cannot be read, and
/// for a zombie: a process that has ended but that its parent has not reaped yet keeps its stat
/// (proc(5): state Z), yet it will never use its objects again. A cell whose runner was killed
/// is reparented to the namespace's init, which may reap it late or (in some containers) never.
std::optional<unsigned long long> start_time(long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  if (!in.is_open())
    return std::nullopt;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Field 2 (the command) is in parentheses and may hold spaces or ')': skip to the last ')'.
  const auto close = text.rfind(')');
  if (close == std::string::npos)
    return std::nullopt;
  std::istringstream fields(text.substr(close + 1));
  std::string field;
  for (int i = 3; i < 22; ++i) { // fields 3..21
    if (!(fields >> field))
      return std::nullopt;
    if (i == 3 && (field == "Z" || field == "X"))
      return std::nullopt; // a zombie, or dead
  }
  unsigned long long start = 0;
  if (!(fields >> start))
    return std::nullopt;
  return start;
}

unsigned long long own_start_time() {
  static const unsigned long long start = start_time(getpid()).value_or(0);
  return start;
}

/// Whether the process that made an object named with (pid, start) still runs.
bool maker_alive(long pid, unsigned long long start) {
  if (pid == getpid())
    return true;
  const std::string stat = "/proc/" + std::to_string(pid) + "/stat";
  if (access(stat.c_str(), R_OK) == 0) {
    const auto now = start_time(pid);
    return now && *now == start; // no start time: a zombie (or it ended just now)
  }
  // No stat to read (a /proc mounted with hidepid, say): kill(pid, 0) tells whether the pid
  // exists at all (EPERM: it does, for another user); existing counts as alive.
  return kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

/// "<pid>.<start>.<n>" after a known prefix; false for any other name.
bool parse_owner(const std::string &rest, long &pid, unsigned long long &start) {
  char *end = nullptr;
  pid = std::strtol(rest.c_str(), &end, 10);
  if (end == rest.c_str() || *end != '.' || pid <= 0)
    return false;
  const char *s = end + 1;
  start = std::strtoull(s, &end, 10);
  if (end == s || *end != '.')
    return false;
  const char *n = end + 1;
  (void)std::strtoull(n, &end, 10);
  return end != n && *end == '\0';
}

/// "<prefix>" or "<prefix>-t<tag>": no tagged name starts with an untagged prefix followed by
/// its '.', nor with another tag's, so each sweep sees only its own tag's objects.
std::string tagged(const char *prefix) {
  const std::string &tag = cfg().shm_tag;
  return tag.empty() ? std::string(prefix) : std::string(prefix) + "-t" + tag;
}

} // namespace

std::string shm_object_name(const char *prefix, std::uint64_t n) {
  return "/" + tagged(prefix) + "." + std::to_string(getpid()) + "." +
         std::to_string(own_start_time()) + "." + std::to_string(n);
}

void sweep_dead_shm_objects() {
  // glibc's shm_open keeps its objects in /dev/shm (the tmpfs POSIX shared memory lives on).
  DIR *dir = opendir("/dev/shm");
  if (dir == nullptr)
    return;
  std::vector<std::string> dead;
  const std::string prefixes[] = {tagged("cuparity-sim") + ".", tagged("cuparity-sim-ev") + "."};
  while (const dirent *e = readdir(dir)) {
    const std::string name = e->d_name;
    for (const std::string &p : prefixes) {
      long pid = 0;
      unsigned long long start = 0;
      if (name.compare(0, p.size(), p) == 0 && parse_owner(name.substr(p.size()), pid, start) &&
          !maker_alive(pid, start))
        dead.push_back("/" + name);
    }
  }
  closedir(dir);
  for (const auto &name : dead)
    shm_unlink(name.c_str()); // ENOENT: another process swept it first
}

} // namespace cuparity::sim
