// std::cout over a buffer that checks each write(2) to descriptor 1 and keeps the first error.
#include "harness/io/standard_output.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <streambuf>
#include <unistd.h>

namespace cuparity {
namespace {

class checked_stdout : public std::streambuf {
public:
  checked_stdout() : m_line_buffered(isatty(STDOUT_FILENO) == 1) {
    setp(m_buffer.data(), m_buffer.data() + m_buffer.size());
  }
  /// The errno of the first write that failed; 0 while none has.
  [[nodiscard]] int error() const { return m_error; }

protected:
  int_type overflow(int_type c) override {
    if (!flush_buffer())
      return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
      if (m_line_buffered && c == '\n')
        return flush_buffer() ? c : traits_type::eof();
    }
    return traits_type::not_eof(c);
  }

  std::streamsize xsputn(const char *s, std::streamsize n) override {
    std::streamsize done = 0;
    while (done < n) {
      if (pptr() == epptr() && !flush_buffer())
        return done;
      const std::streamsize take = std::min<std::streamsize>(epptr() - pptr(), n - done);
      std::memcpy(pptr(), s + done, static_cast<std::size_t>(take));
      pbump(static_cast<int>(take));
      done += take;
    }
    if (m_line_buffered && std::memchr(s, '\n', static_cast<std::size_t>(n)))
      (void)flush_buffer();
    return done;
  }

  int sync() override { return flush_buffer() ? 0 : -1; }

private:
  /// Writes what the buffer holds; on an error keeps the first errno and drops the bytes (they
  /// cannot arrive; holding them would only fail again at every flush).
  bool flush_buffer() {
    const char *p = pbase();
    while (p < pptr()) {
      const ssize_t n = write(STDOUT_FILENO, p, static_cast<std::size_t>(pptr() - p));
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0) {
        if (m_error == 0)
          m_error = n < 0 ? errno : EIO;
        break;
      }
      p += n;
    }
    setp(m_buffer.data(), m_buffer.data() + m_buffer.size());
    return m_error == 0;
  }

  std::array<char, 64 * 1024> m_buffer{};
  bool m_line_buffered;
  int m_error = 0;
};

/// Never destroyed: std::cout is flushed at exit, after function-local statics are gone.
checked_stdout &buffer() {
  static auto *b = new checked_stdout;
  return *b;
}

} // namespace

void check_standard_output() {
  std::cout.rdbuf(&buffer());
}

std::optional<std::string> finish_standard_output() {
  std::cout.flush();
  errno = 0;
  // C's stdout too, for anything a library wrote there.
  const bool c_flushed = std::fflush(stdout) == 0 && std::ferror(stdout) == 0;
  int error = buffer().error();
  if (error == 0 && !c_flushed)
    error = errno ? errno : EIO;
  // close(2) reports what a file system defers to it (NFS, quota); after it nothing can be
  // written to descriptor 1, which is the end of the command's output.
  if (close(STDOUT_FILENO) != 0 && error == 0 && errno != EBADF)
    error = errno;
  if (error == 0)
    return std::nullopt;
  return std::string("stdout: ") + std::strerror(error);
}

} // namespace cuparity
