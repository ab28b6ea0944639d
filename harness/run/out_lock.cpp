// flock(2) on a lock file in the output directory.
#include "harness/run/out_lock.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <stdexcept>
#include <string>
#include <sys/file.h>
#include <unistd.h>

namespace cuparity {

out_lock::out_lock(const std::string &dir) {
  const std::string path = dir + "/.cuparity.lock";
  m_fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (m_fd < 0)
    throw std::runtime_error("cannot create the lock file " + path + ": " + std::strerror(errno));
  if (flock(m_fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    char owner[32] = {};
    (void)!pread(m_fd, owner, sizeof owner - 1, 0);
    close(m_fd);
    m_fd = -1;
    if (err == EWOULDBLOCK)
      throw std::runtime_error(dir + " is in use by another cuparity process (pid " +
                               std::string(owner[0] ? owner : "?") +
                               "): wait for it to end, or use another --out");
    throw std::runtime_error("cannot lock " + path + ": " + std::strerror(err));
  }
  const std::string pid = std::to_string(getpid()) + "\n";
  if (ftruncate(m_fd, 0) == 0)
    (void)!pwrite(m_fd, pid.data(), pid.size(), 0);
}

out_lock::~out_lock() {
  if (m_fd >= 0)
    close(m_fd); // releases the lock
}

} // namespace cuparity
