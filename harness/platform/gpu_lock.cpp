// Writer-preferring reader/writer lock over two flock(2) files.
#include "harness/platform/gpu_lock.hpp"

#include <cerrno>
#include <fcntl.h>
#include <stdexcept>
#include <sys/file.h>
#include <system_error>
#include <unistd.h>

namespace cuparity {
namespace {

int open_lock(const std::string &path) {
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
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
  m_turnstile = open_lock(directory + "/gpu.turnstile.lock");
  m_data = open_lock(directory + "/gpu.lock");
}

gpu_lock::~gpu_lock() {
  release();
  for (int fd : {m_turnstile, m_data})
    if (fd >= 0)
      close(fd);
}

void gpu_lock::acquire(bool exclusive) {
  if (m_data < 0)
    return;
  lock(m_turnstile, LOCK_EX);
  if (exclusive) {
    lock(m_data, LOCK_EX); // keeps the turnstile: no new reader gets in until release()
  } else {
    flock(m_turnstile, LOCK_UN);
    lock(m_data, LOCK_SH);
  }
}

void gpu_lock::release() noexcept {
  if (m_data < 0)
    return;
  flock(m_data, LOCK_UN);
  flock(m_turnstile, LOCK_UN);
}

} // namespace cuparity
