// Appends through O_APPEND, after the same checks as a whole-file output.
#include "harness/io/output_append.hpp"

#include "harness/io/input_file.hpp"
#include "harness/io/output_file.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cuparity {
namespace {

[[noreturn]] void cannot_append(const std::string &name, int e) {
  const std::string what = name + ": cannot be written: " + std::strerror(e);
  if (e == ENOSPC || e == EDQUOT || e == EIO || e == EFBIG)
    throw output_write_error(what);
  throw bad_input_error(what);
}

} // namespace

void append_output_file(const std::string &path, std::string_view content,
                        const std::string &what) {
  check_output_file(path, what);
  const std::string name = named_file(path, what);
  // O_NOFOLLOW: a link swapped in after the check is refused, not followed.
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0)
    cannot_append(name, errno);
  int e = 0;
  while (!content.empty()) {
    const ssize_t n = write(fd, content.data(), content.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      e = errno;
      break;
    }
    content.remove_prefix(static_cast<std::size_t>(n));
  }
  // close(2) reports what a file system defers to it (NFS, quota).
  if (close(fd) != 0 && e == 0)
    e = errno;
  if (e != 0)
    cannot_append(name, e);
}

std::size_t output_file_size(const std::string &path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    return 0;
  return static_cast<std::size_t>(st.st_size);
}

} // namespace cuparity
