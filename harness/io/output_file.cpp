// Outputs replace only regular files, through a temporary file and rename(2).
#include "harness/io/output_file.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cuparity {
namespace {

std::string parent_of(const std::string &path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

/// Writes all of `content` to `fd`; false with errno set when it cannot.
bool write_all(int fd, std::string_view content) {
  while (!content.empty()) {
    const ssize_t n = write(fd, content.data(), content.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return false;
    content.remove_prefix(static_cast<std::size_t>(n));
  }
  return fsync(fd) == 0 || errno == EINVAL;
}

} // namespace

void check_output_file(const std::string &path, const std::string &what) {
  const std::string name = named_file(path, what);
  if (path.empty())
    throw bad_input_error(name + "(an empty path): name a file to write");
  if (path.back() == '/')
    throw bad_input_error(name + ": names a folder; name the file to write");
  struct stat st {};
  if (lstat(path.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode))
      throw bad_input_error(name + ": a symbolic link; name the file itself (not replaced)");
    if (S_ISDIR(st.st_mode))
      throw bad_input_error(name + ": a directory; name the file to write");
    if (!S_ISREG(st.st_mode))
      throw bad_input_error(name + ": not a regular file (a device, FIFO or socket); not replaced");
  } else if (errno != ENOENT) {
    throw bad_input_error(name + ": " + std::strerror(errno));
  }
  const std::string dir = parent_of(path);
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw bad_input_error(name + ": its folder " + dir + " does not exist");
}

void refuse_same_file(const std::string &out, const std::string &in, const std::string &what) {
  struct stat a {
  }, b{};
  if (stat(out.c_str(), &a) != 0 || stat(in.c_str(), &b) != 0)
    return;
  if (a.st_dev == b.st_dev && a.st_ino == b.st_ino)
    throw bad_input_error(named_file(out, what) + ": is the input " + in +
                          "; an output never replaces an input");
}

namespace {

/// A failure of the file system, not of the path the user named: the disk or the quota is full,
/// or the device failed. That is the environment (exit 3), and the same path works once there is
/// room; anything else (no such folder, no permission) is the user's input (exit 2).
[[noreturn]] void cannot_write(const std::string &name, int e) {
  const std::string what = name + ": cannot be written: " + std::strerror(e);
  if (e == ENOSPC || e == EDQUOT || e == EIO || e == EFBIG)
    throw output_write_error(what);
  throw bad_input_error(what);
}

} // namespace

void write_output_file(const std::string &path, std::string_view content, const std::string &what) {
  check_output_file(path, what);
  const std::string name = named_file(path, what);
  std::string tmp = parent_of(path) + "/." + path.substr(path.find_last_of('/') + 1) + ".XXXXXX";
  const int fd = mkstemp(tmp.data());
  if (fd < 0)
    cannot_write(name, errno);
  const mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, 0666 & ~mask); // mkstemp makes 0600; outputs are as open as any other file
  const bool written = write_all(fd, content);
  int e = written ? 0 : errno;
  // close(2) reports what a file system defers to it (NFS, quota).
  if (close(fd) != 0 && e == 0)
    e = errno;
  if (e == 0 && rename(tmp.c_str(), path.c_str()) != 0)
    e = errno;
  if (e != 0) {
    unlink(tmp.c_str());
    cannot_write(name, e);
  }
}

} // namespace cuparity
