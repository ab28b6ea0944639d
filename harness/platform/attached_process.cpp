// posix_spawnp on the parent's descriptors, with the interactive signals held off while waiting.
#include "harness/platform/attached_process.hpp"

#include <cerrno>
#include <csignal>
#include <spawn.h>
#include <system_error>
#include <unistd.h>

namespace cuparity {
namespace {

/// Ignores one signal for as long as it lives, then puts the old disposition back.
class ignored_signal {
public:
  explicit ignored_signal(int sig) : m_sig(sig) {
    struct sigaction ign {};
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    m_saved = sigaction(sig, &ign, &m_old) == 0;
  }
  ~ignored_signal() {
    if (m_saved)
      sigaction(m_sig, &m_old, nullptr);
  }
  ignored_signal(const ignored_signal &) = delete;
  ignored_signal &operator=(const ignored_signal &) = delete;

private:
  int m_sig;
  struct sigaction m_old {};
  bool m_saved = false;
};

volatile pid_t g_child = 0;

extern "C" void forward_signal(int sig) {
  if (g_child > 0)
    kill(g_child, sig);
}

/// Passes one signal on to the child for as long as it lives: a SIGTERM to cuparity (a CI job's
/// timeout) ends the command, and cuparity still records how it ended.
class forwarded_signal {
public:
  explicit forwarded_signal(int sig) : m_sig(sig) {
    struct sigaction fwd {};
    fwd.sa_handler = forward_signal;
    sigemptyset(&fwd.sa_mask);
    fwd.sa_flags = SA_RESTART;
    m_saved = sigaction(sig, &fwd, &m_old) == 0;
  }
  ~forwarded_signal() {
    if (m_saved)
      sigaction(m_sig, &m_old, nullptr);
  }
  forwarded_signal(const forwarded_signal &) = delete;
  forwarded_signal &operator=(const forwarded_signal &) = delete;

private:
  int m_sig;
  struct sigaction m_old {};
  bool m_saved = false;
};

} // namespace

process_result run_attached(const std::vector<std::string> &argv,
                            const std::map<std::string, std::string> &env) {
  if (argv.empty())
    throw std::system_error(EINVAL, std::generic_category(), "cannot start a process: no command");
  std::vector<std::string> env_strings, args = argv;
  for (const auto &[k, v] : env)
    env_strings.push_back(k + "=" + v);
  std::vector<char *> envp, argp;
  for (auto &s : env_strings)
    envp.push_back(s.data());
  envp.push_back(nullptr);
  for (auto &a : args)
    argp.push_back(a.data());
  argp.push_back(nullptr);

  // A SIGTERM or SIGHUP that comes before the child's pid is known waits (blocked) until it is,
  // and is then passed on: unblocked, one that came between the spawn and g_child's store was
  // lost, and the command ran on to its end.
  sigset_t forwarded, old_mask;
  sigemptyset(&forwarded);
  sigaddset(&forwarded, SIGTERM);
  sigaddset(&forwarded, SIGHUP);
  sigprocmask(SIG_BLOCK, &forwarded, &old_mask);
  const ignored_signal no_int(SIGINT), no_quit(SIGQUIT);
  const forwarded_signal term(SIGTERM), hangup(SIGHUP);
  // The child starts with the default dispositions, not the ignored ones above, and the old mask.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGQUIT);
  sigaddset(&defaults, SIGTERM);
  sigaddset(&defaults, SIGHUP);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setsigmask(&attr, &old_mask);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, argp[0], nullptr, &attr, argp.data(), envp.data());
  posix_spawnattr_destroy(&attr);
  if (rc == 0)
    g_child = pid;
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  if (rc != 0)
    throw std::system_error(rc, std::generic_category(), "cannot start " + argv[0]);
  process_result result;
  wait_for_child(pid, result);
  g_child = 0;
  return result;
}

int shell_status(const process_result &r) noexcept {
  return r.exited ? r.exit_code : 128 + r.signal;
}

} // namespace cuparity
