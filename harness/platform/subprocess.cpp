// posix_spawn + poll: children get an explicit environment and are killed at their timeout.
#include "harness/platform/subprocess.hpp"

#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <system_error>
#include <unistd.h>

extern char **environ;

namespace cuparity {

std::map<std::string, std::string> current_environment() {
  std::map<std::string, std::string> env;
  for (char **e = environ; e && *e; ++e) {
    std::string kv(*e);
    auto eq = kv.find('=');
    if (eq != std::string::npos)
      env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return env;
}

namespace {

struct pipe_pair {
  int fd[2] = {-1, -1};
  pipe_pair() {
    if (pipe2(fd, O_CLOEXEC) != 0)
      throw std::system_error(errno, std::generic_category(), "pipe2");
  }
  ~pipe_pair() {
    for (int f : fd)
      if (f >= 0)
        close(f);
  }
  void close_end(int i) {
    if (fd[i] >= 0)
      close(fd[i]);
    fd[i] = -1;
  }
};

} // namespace

process_result run_process(const process_spec &spec) {
  if (spec.argv.empty())
    throw std::system_error(EINVAL, std::generic_category(), "run_process: empty argv");
  pipe_pair out, err;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out.fd[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err.fd[1], 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  // Own process group, so a timeout kills the child's helpers too.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);

  std::vector<std::string> env_strings;
  for (const auto &[k, v] : spec.env)
    env_strings.push_back(k + "=" + v);
  std::vector<char *> envp, argv;
  for (auto &s : env_strings)
    envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = spec.argv;
  for (auto &a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);

  pid_t pid = 0;
  int rc = posix_spawn(&pid, argv[0], &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0)
    throw std::system_error(rc, std::generic_category(), "cannot start " + spec.argv[0]);
  out.close_end(1);
  err.close_end(1);

  process_result result;
  auto deadline = spec.timeout ? std::chrono::steady_clock::now() + *spec.timeout
                               : std::chrono::steady_clock::time_point::max();
  pollfd fds[2] = {{out.fd[0], POLLIN, 0}, {err.fd[0], POLLIN, 0}};
  std::string *sinks[2] = {&result.out, &result.err};
  int open_fds = 2;
  while (open_fds > 0) {
    int wait_ms = -1;
    if (spec.timeout) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        kill(-pid, SIGKILL);
        result.timed_out = true;
        break;
      }
      wait_ms = static_cast<int>(left.count());
    }
    int n = poll(fds, 2, wait_ms);
    if (n < 0 && errno == EINTR)
      continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
        continue;
      char buf[4096];
      ssize_t got = read(fds[i].fd, buf, sizeof buf);
      if (got > 0) {
        sinks[i]->append(buf, static_cast<std::size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) {
    result.exited = true;
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  return result;
}

} // namespace cuparity

namespace cuparity {

child_process::child_process(const process_spec &spec, const std::string &log_path, bool commands) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    throw std::system_error(errno, std::generic_category(), "pipe2");
  int in[2] = {-1, -1};
  if (commands && pipe2(in, O_CLOEXEC) != 0) {
    int e = errno;
    close(fds[0]);
    close(fds[1]);
    throw std::system_error(e, std::generic_category(), "pipe2");
  }
  int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log < 0) {
    int e = errno;
    close(fds[0]);
    close(fds[1]);
    throw std::system_error(e, std::generic_category(), "cannot open " + log_path);
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (commands)
    posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  else
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, log, 1);
  posix_spawn_file_actions_adddup2(&actions, log, 2);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 3);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  std::vector<std::string> env_strings;
  for (const auto &[k, v] : spec.env)
    env_strings.push_back(k + "=" + v);
  std::vector<char *> envp, argv;
  for (auto &s : env_strings)
    envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = spec.argv;
  for (auto &a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  int rc = posix_spawn(&m_pid, argv[0], &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(fds[1]);
  close(log);
  if (commands)
    close(in[0]);
  if (rc != 0) {
    close(fds[0]);
    if (commands)
      close(in[1]);
    throw std::system_error(rc, std::generic_category(), "cannot start " + spec.argv[0]);
  }
  m_events = fds[0];
  m_input = commands ? in[1] : -1;
}

bool child_process::send_line(const std::string &line) noexcept {
  if (m_input < 0)
    return false;
  const std::string text = line + "\n";
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(m_input, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

void child_process::close_input() noexcept {
  if (m_input >= 0)
    close(m_input);
  m_input = -1;
}

child_process::~child_process() {
  close_input();
  if (!m_waited) {
    kill_group();
    try {
      (void)wait();
    } catch (...) {
    }
  }
  if (m_events >= 0)
    close(m_events);
}

child_process::read_status child_process::read_line(std::string &line,
                                                    std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (auto nl = m_buffer.find('\n'); nl != std::string::npos) {
      line = m_buffer.substr(0, nl);
      m_buffer.erase(0, nl + 1);
      return read_status::line;
    }
    if (m_events < 0)
      return read_status::eof;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      return read_status::timeout;
    pollfd p{m_events, POLLIN, 0};
    int n = poll(&p, 1, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR)
      continue;
    if (n == 0)
      return read_status::timeout;
    char buf[8192];
    ssize_t got = read(m_events, buf, sizeof buf);
    if (got > 0) {
      m_buffer.append(buf, static_cast<std::size_t>(got));
    } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
      close(m_events);
      m_events = -1;
      // A partial last line (the child died mid-write) is dropped: it is not an event.
      m_buffer.clear();
    }
  }
}

void child_process::kill_group() noexcept {
  if (m_pid > 0 && !m_waited)
    ::kill(-m_pid, SIGKILL);
}

process_result child_process::wait() {
  if (m_waited)
    return m_result;
  int status = 0;
  while (waitpid(m_pid, &status, 0) < 0 && errno == EINTR) {
  }
  m_waited = true;
  if (WIFEXITED(status)) {
    m_result.exited = true;
    m_result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    m_result.signal = WTERMSIG(status);
  }
  return m_result;
}

} // namespace cuparity
