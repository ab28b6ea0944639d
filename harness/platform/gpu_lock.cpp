// Reader-preferring reader/writer lock over one flock(2) file.
#include "harness/platform/gpu_lock.hpp"

#include <cerrno>
#include <cstdlib>
#include <fcntl.h>
#include <sys/file.h>
#include <system_error>
#include <unistd.h>

namespace cuparity {
namespace {

void lock(int fd, int how) {
  while (flock(fd, how) != 0)
    if (errno != EINTR)
      throw std::system_error(errno, std::generic_category(), "flock");
}

} // namespace

gpu_lock::gpu_lock(const std::string &directory) {
  if (directory.empty())
    return;
  const std::string path = directory + "/gpu.lock";
  m_fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (m_fd < 0)
    throw std::system_error(errno, std::generic_category(), "cannot open lock file " + path);
}

std::string gpu_lock::directory_from_environment() {
  const char *dir = std::getenv(gpu_lock_variable);
  return dir ? dir : "";
}

gpu_lock::~gpu_lock() {
  release();
  if (m_fd >= 0)
    close(m_fd);
}

void gpu_lock::acquire(bool exclusive) {
  if (m_fd < 0)
    return;
  const held want = exclusive ? held::exclusive : held::shared;
  if (m_held == want)
    return;
  // flock converts a held lock non-atomically (it may let go first), so let go explicitly.
  release();
  lock(m_fd, exclusive ? LOCK_EX : LOCK_SH);
  m_held = want;
}

void gpu_lock::release() noexcept {
  if (m_fd < 0 || m_held == held::none)
    return;
  flock(m_fd, LOCK_UN);
  m_held = held::none;
}

} // namespace cuparity
