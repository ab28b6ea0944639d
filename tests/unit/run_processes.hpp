// Tests: finding the live processes of one run by a marker in their environment, and its /dev/shm.
#pragma once

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>

namespace cuparity::test {

/// The variable a test sets for a runner it starts: cells, probes and helpers inherit the
/// environment, so every process of that run carries it.
inline constexpr const char *run_marker_variable = "CUPARITY_TEST_RUN_MARKER";

/// A marker value no other test run uses.
inline std::string new_run_marker(const std::string &name) {
  static int counter = 0;
  return name + "-" + std::to_string(getpid()) + "-" + std::to_string(++counter);
}

inline std::string read_proc_file(const std::filesystem::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// The pids of live processes whose environment holds run_marker_variable=marker. A zombie has
/// an empty environ file: it is dead, only not yet reaped, and not listed.
inline std::set<int> marked_processes(const std::string &marker) {
  const std::string wanted = std::string(run_marker_variable) + "=" + marker;
  std::set<int> pids;
  std::error_code ec;
  for (const auto &e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos)
      continue;
    const std::string env = read_proc_file(e.path() / "environ");
    // environ is NUL-separated: look for the whole entry.
    for (std::size_t at = 0; at < env.size();) {
      const std::size_t end = env.find('\0', at);
      if (env.compare(at, (end == std::string::npos ? env.size() : end) - at, wanted) == 0) {
        pids.insert(std::stoi(name));
        break;
      }
      if (end == std::string::npos)
        break;
      at = end + 1;
    }
  }
  return pids;
}

/// argv of a process, words joined by spaces ("" once it is gone).
inline std::string command_line(int pid) {
  std::string text = read_proc_file("/proc/" + std::to_string(pid) + "/cmdline");
  for (char &c : text)
    if (c == '\0')
      c = ' ';
  return text;
}

/// Waits up to `limit` for every process carrying `marker` to end; returns those still alive.
inline std::set<int> survivors(const std::string &marker, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  std::set<int> alive = marked_processes(marker);
  while (!alive.empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    alive = marked_processes(marker);
  }
  return alive;
}

/// The variable that names the simulated driver's shared-memory objects and limits its sweeps of
/// dead makers' objects to those of its tag (tests/simdriver/README.md). A test that watches what
/// a killed run left in /dev/shm gives that run a tag of its own: untagged, any simulated process
/// starting or ending on the machine (a parallel ctest, another checkout) sweeps them first.
inline constexpr const char *shm_tag_variable = "CUPARITY_SIM_SHM_TAG";

/// A tag no other live process uses (1 to 6 of [a-z0-9]): "u" and this process's pid in base 36
/// (at most 5 digits below pid_max's limit of 2^22); the simulator's own tests use the bare pid.
inline std::string new_shm_tag() {
  std::string out;
  for (auto n = static_cast<unsigned long>(getpid()); n > 0; n /= 36)
    out.insert(out.begin(), "0123456789abcdefghijklmnopqrstuvwxyz"[n % 36]);
  return "u" + out;
}

/// The simulated driver's objects in /dev/shm made by one of `pids` under `tag` (their names
/// carry both: "cuparity-sim[-ev]-t<tag>.<pid>.<start>.<n>", tests/simdriver/src/shm_names.cpp).
inline std::set<std::string> shm_objects_of(const std::set<int> &pids, const std::string &tag) {
  std::set<std::string> out;
  std::error_code ec;
  for (const auto &e : std::filesystem::directory_iterator("/dev/shm", ec)) {
    const std::string name = e.path().filename().string();
    for (const std::string &prefix :
         {"cuparity-sim-t" + tag + ".", "cuparity-sim-ev-t" + tag + "."})
      if (name.compare(0, prefix.size(), prefix) == 0) {
        const std::string rest = name.substr(prefix.size());
        const std::size_t dot = rest.find('.');
        if (dot != std::string::npos && dot > 0 && rest.find_first_not_of("0123456789") == dot &&
            pids.count(std::stoi(rest.substr(0, dot))))
          out.insert(name);
      }
  }
  return out;
}

} // namespace cuparity::test
