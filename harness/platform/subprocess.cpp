// posix_spawn + poll: children get an explicit environment and are killed at their timeout.
#include "harness/platform/subprocess.hpp"

#include "harness/platform/parent_death.hpp"

#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <system_error>
#include <unistd.h>
#include <utility>

namespace cuparity {
namespace {

/// An owned file descriptor, closed when it goes out of scope: every way out of a spawn (a log
/// that cannot be opened, a failed posix_spawn) closes what was opened before it.
class unique_fd {
public:
  unique_fd() = default;
  explicit unique_fd(int fd) noexcept : m_fd(fd) {}
  ~unique_fd() { reset(); }
  unique_fd(unique_fd &&other) noexcept : m_fd(other.release()) {}
  unique_fd &operator=(unique_fd &&other) noexcept {
    if (this != &other) {
      reset();
      m_fd = other.release();
    }
    return *this;
  }
  unique_fd(const unique_fd &) = delete;
  unique_fd &operator=(const unique_fd &) = delete;

  [[nodiscard]] int get() const noexcept { return m_fd; }
  int release() noexcept { return std::exchange(m_fd, -1); }
  void reset() noexcept {
    if (m_fd >= 0)
      ::close(m_fd);
    m_fd = -1;
  }

private:
  int m_fd = -1;
};

struct pipe_ends {
  unique_fd read, write;
};

/// Close-on-exec, so no other child inherits either end; the spawn dup2s the child's end.
pipe_ends make_pipe() {
  int fd[2];
  if (pipe2(fd, O_CLOEXEC) != 0)
    throw std::system_error(errno, std::generic_category(), "pipe2");
  return {unique_fd(fd[0]), unique_fd(fd[1])};
}

/// The parent's descriptors that become the child's 0-3 (-1: stdin from /dev/null, no fd 3).
struct child_fds {
  int in = -1;
  int out = -1;
  int err = -1;
  int events = -1;
};

/// Starts spec.argv with exactly spec.env (plus parent_pid_variable) and `fds`, in a process group
/// of its own: a kill of the group reaches what the child starts through the shell or the like,
/// and a terminal's Ctrl-C reaches only the parent, which decides what happens to its children.
/// The child arms PR_SET_PDEATHSIG itself (die_with_parent, parent_death.cpp says why), so one
/// whose parent dies, however, dies too. Throws std::system_error when it cannot start.
pid_t spawn(const process_spec &spec, const child_fds &fds) {
  if (spec.argv.empty())
    throw std::system_error(EINVAL, std::generic_category(), "cannot start a process: empty argv");
  std::vector<std::string> env_strings;
  for (const auto &[k, v] : spec.env)
    if (k != parent_pid_variable)
      env_strings.push_back(k + "=" + v);
  env_strings.push_back(std::string(parent_pid_variable) + "=" + std::to_string(getpid()));
  std::vector<std::string> args = spec.argv;
  std::vector<char *> envp, argv;
  for (auto &s : env_strings)
    envp.push_back(s.data());
  envp.push_back(nullptr);
  for (auto &a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (fds.in >= 0)
    posix_spawn_file_actions_adddup2(&actions, fds.in, 0);
  else
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds.out, 1);
  posix_spawn_file_actions_adddup2(&actions, fds.err, 2);
  if (fds.events >= 0)
    posix_spawn_file_actions_adddup2(&actions, fds.events, 3);
  if (spec.cwd) // glibc 2.29+; a folder that cannot be entered fails the spawn (ENOENT, EACCES)
    posix_spawn_file_actions_addchdir_np(&actions, spec.cwd->c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0)
    throw std::system_error(rc, std::generic_category(), "cannot start " + spec.argv[0]);
  return pid;
}

/// Reads the child's stdout and stderr until both close, or kills its group at the timeout.
void collect_output(pid_t pid, const std::optional<std::chrono::milliseconds> &timeout, int out,
                    int err, process_result &result) {
  auto deadline = timeout ? std::chrono::steady_clock::now() + *timeout
                          : std::chrono::steady_clock::time_point::max();
  pollfd fds[2] = {{out, POLLIN, 0}, {err, POLLIN, 0}};
  std::string *sinks[2] = {&result.out, &result.err};
  int open_fds = 2;
  while (open_fds > 0) {
    int wait_ms = -1;
    if (timeout) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        kill(-pid, SIGKILL);
        result.timed_out = true;
        return;
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
}

} // namespace

void wait_for_child(int pid, process_result &result) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) {
    result.exited = true;
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
}

process_result run_process(const process_spec &spec) {
  pipe_ends out = make_pipe(), err = make_pipe();
  const pid_t pid = spawn(spec, {-1, out.write.get(), err.write.get(), -1});
  // The child holds the write ends now: closing ours lets its exit end the reads.
  out.write.reset();
  err.write.reset();
  process_result result;
  collect_output(pid, spec.timeout, out.read.get(), err.read.get(), result);
  wait_for_child(pid, result);
  return result;
}

child_process::child_process(const process_spec &spec, const std::string &log_path, bool commands) {
  pipe_ends events = make_pipe();
  pipe_ends input;
  if (commands)
    input = make_pipe();
  unique_fd log(open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
  if (log.get() < 0) {
    const int e = errno;
    throw std::system_error(e, std::generic_category(), "cannot open " + log_path);
  }
  m_pid = spawn(spec, {input.read.get(), log.get(), log.get(), events.write.get()});
  m_events = events.read.release();
  m_input = input.write.release(); // -1 without commands
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
  wait_for_child(m_pid, m_result);
  m_waited = true;
  return m_result;
}

} // namespace cuparity
