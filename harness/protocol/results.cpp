// Append-only JSON-lines results with crash-tolerant reading.
#include "harness/protocol/results.hpp"

#include <cerrno>
#include <fcntl.h>
#include <fstream>
#include <stdexcept>
#include <system_error>
#include <unistd.h>

namespace cuparity {

results_writer::results_writer(const std::string &path) {
  m_fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (m_fd < 0)
    throw std::system_error(errno, std::generic_category(), "cannot open " + path);
}

results_writer::~results_writer() {
  if (m_fd >= 0)
    close(m_fd);
}

void results_writer::append(const nlohmann::json &record) {
  std::string line = record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::lock_guard<std::mutex> g(m_lock);
  // O_APPEND + one write per record: records never interleave, and the kernel has the data as
  // soon as write returns (a killed runner loses nothing that was appended).
  const char *p = line.data();
  std::size_t left = line.size();
  while (left) {
    ssize_t n = write(m_fd, p, left);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      throw std::system_error(errno, std::generic_category(), "cannot append a result");
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

results_file read_results(const std::string &path) {
  results_file out;
  std::ifstream in(path);
  if (!in)
    return out;
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::size_t pos = 0;
  int line_no = 0;
  while (pos < content.size()) {
    auto nl = content.find('\n', pos);
    ++line_no;
    if (nl == std::string::npos) {
      // No newline: the writer was killed mid-record.
      out.truncated_tail = true;
      break;
    }
    std::string line = content.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.empty())
      continue;
    try {
      out.records.push_back(nlohmann::json::parse(line));
    } catch (const nlohmann::json::exception &e) {
      throw std::runtime_error(path + ":" + std::to_string(line_no) +
                               ": not a JSON record: " + e.what());
    }
  }
  return out;
}

} // namespace cuparity
