// Reading users' files: type and size checked before reading, JSON depth before parsing.
#include "harness/io/input_file.hpp"

#include "harness/io/gzip_input.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cuparity {
namespace {

const char *kind_of(mode_t mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISSOCK(mode))
    return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode))
    return "a device";
  return "not a regular file";
}

/// Closes the descriptor on every way out.
struct fd_guard {
  int fd;
  ~fd_guard() {
    if (fd >= 0)
      close(fd);
  }
};

} // namespace

std::string named_file(const std::string &path, const std::string &what) {
  return what.empty() ? path : what + " " + path;
}

std::string read_input_file(const std::string &path, const std::string &what,
                            std::size_t max_bytes) {
  const std::string name = named_file(path, what);
  if (path.empty())
    throw bad_input_error(name + "(an empty path): name a file");
  struct stat st {};
  if (stat(path.c_str(), &st) != 0)
    throw bad_input_error(name + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    throw bad_input_error(name + ": " + kind_of(st.st_mode) + ", not a file to read");
  // O_NONBLOCK: should the path be swapped for a FIFO after the stat, opening it cannot block.
  const fd_guard f{open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
  if (f.fd < 0)
    throw bad_input_error(name + ": cannot be read: " + std::strerror(errno));
  if (fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode))
    throw bad_input_error(name + ": changed while it was opened; not a regular file");
  if (static_cast<std::size_t>(st.st_size) > max_bytes)
    throw bad_input_error(name + ": " + std::to_string(st.st_size) + " bytes, more than the " +
                          std::to_string(max_bytes) + " an input may have");
  std::string out(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t got = 0;
  while (got < out.size()) {
    const ssize_t n = read(f.fd, out.data() + got, out.size() - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      throw bad_input_error(name + ": cannot be read: " + std::strerror(errno));
    if (n == 0)
      break; // shrank meanwhile: what is there is what we have
    got += static_cast<std::size_t>(n);
  }
  out.resize(got);
  // Stored runs keep their summaries and results gzipped (reports/runs/*/results.jsonl.gz).
  if (is_gzip(out))
    return gunzip(out, name, max_bytes);
  return out;
}

int json_depth(const std::string &text, int limit) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit)
        return deepest;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

nlohmann::json parse_json_input(const std::string &text, const std::string &where) {
  if (json_depth(text) > max_json_depth)
    throw bad_input_error(where + ": JSON nested deeper than " + std::to_string(max_json_depth) +
                          " levels");
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception &e) {
    // parse_error (syntax, invalid UTF-8, NaN) and out_of_range (1e400) alike.
    throw bad_input_error(where + ": not valid JSON: " + e.what());
  }
}

nlohmann::json read_json_file(const std::string &path, const std::string &what) {
  return parse_json_input(read_input_file(path, what), named_file(path, what));
}

} // namespace cuparity
