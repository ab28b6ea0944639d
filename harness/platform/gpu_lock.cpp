// Writer-preferring reader/writer lock over flock(2) files: for starts a turnstile and a lock, for
// cases a turnstile and the lock itself.
#include "harness/platform/gpu_lock.hpp"

#include <cerrno>
#include <cstdlib>
#include <fcntl.h>
#include <sys/file.h>
#include <system_error>
#include <unistd.h>

namespace cuparity {
namespace {

int open_lock(const std::string &path) {
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    throw std::system_error(errno, std::generic_category(), "cannot open lock file " + path);
  return fd;
}

void lock(int fd, int how) {
  while (flock(fd, how) != 0)
    if (errno != EINTR)
      throw std::system_error(errno, std::generic_category(), "flock");
}

} // namespace

gpu_lock::gpu_lock(const std::string &directory) {
  if (directory.empty())
    return;
  m_start_turnstile = open_lock(directory + "/gpu.start-turnstile.lock");
  m_start = open_lock(directory + "/gpu.start.lock");
  m_turnstile = open_lock(directory + "/gpu.turnstile.lock");
  m_fd = open_lock(directory + "/gpu.lock");
}

std::string gpu_lock::directory_from_environment() {
  const char *dir = std::getenv(gpu_lock_variable);
  return dir ? dir : "";
}

gpu_lock::~gpu_lock() {
  release();
  for (int fd : {m_start_turnstile, m_start, m_turnstile, m_fd})
    if (fd >= 0)
      close(fd);
}

void gpu_lock::acquire(bool exclusive) {
  if (m_fd < 0)
    return;
  const held want = exclusive ? held::exclusive : held::shared;
  if (m_held == want)
    return;
  // flock converts a held lock non-atomically (it may let go first), so let go explicitly.
  release();
  // A writer first waits for the starts in flight, holding new starts back but not cases (one
  // writer at a time gets past the start turnstile, so the case turnstile is held long only by
  // it). Then it keeps the case turnstile while it waits and while it holds the lock, so no new
  // reader passes it; a reader passes it and lets it go at once.
  if (exclusive) {
    lock(m_start_turnstile, LOCK_EX);
    lock(m_start, LOCK_EX);
  }
  lock(m_turnstile, LOCK_EX);
  if (exclusive) {
    lock(m_fd, LOCK_EX);
  } else {
    flock(m_turnstile, LOCK_UN);
    lock(m_fd, LOCK_SH);
  }
  m_held = want;
}

void gpu_lock::acquire_for_start() {
  if (m_fd < 0 || m_held == held::start)
    return;
  release();
  // Through the start turnstile (a writer waiting for starts holds new ones back), then as a
  // case reader: a writer past its first step already holds the start lock, so none is there.
  lock(m_start_turnstile, LOCK_EX);
  lock(m_start, LOCK_SH);
  flock(m_start_turnstile, LOCK_UN);
  lock(m_turnstile, LOCK_EX);
  flock(m_turnstile, LOCK_UN);
  lock(m_fd, LOCK_SH);
  m_held = held::start;
}

void gpu_lock::acquire_beside_writers() {
  if (m_fd < 0 || m_held == held::shared)
    return;
  release();
  lock(m_fd, LOCK_SH); // not through the turnstile: flock itself lets readers past a waiting writer
  m_held = held::shared;
}

void gpu_lock::release() noexcept {
  if (m_fd < 0 || m_held == held::none)
    return;
  flock(m_fd, LOCK_UN);
  if (m_held == held::exclusive) {
    flock(m_turnstile, LOCK_UN);
    flock(m_start, LOCK_UN);
    flock(m_start_turnstile, LOCK_UN);
  } else if (m_held == held::start) {
    flock(m_start, LOCK_UN);
  }
  m_held = held::none;
}

} // namespace cuparity
