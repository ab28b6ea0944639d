// Append-only JSON-lines results with crash-tolerant reading.
#include "harness/protocol/results.hpp"

#include "harness/io/gzip_input.hpp"
#include "harness/io/input_file.hpp"
#include "harness/io/json_input.hpp"
#include "harness/protocol/record_schema.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <system_error>
#include <unistd.h>

namespace cuparity {
namespace fs = std::filesystem;

results_writer::results_writer(const std::string &path) : m_path(path) {
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
  if (m_failure)
    throw results_write_error(*m_failure);
  // O_APPEND + one write per record: records never interleave, and the kernel has the data as
  // soon as write returns (a killed runner loses nothing that was appended).
  const char *p = line.data();
  std::size_t left = line.size();
  while (left) {
    ssize_t n = write(m_fd, p, left);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      m_failure = m_path + ": " + std::strerror(errno);
      throw results_write_error(*m_failure);
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

std::optional<std::string> results_writer::failure() const {
  std::lock_guard<std::mutex> g(m_lock);
  return m_failure;
}

namespace {

/// The file's bytes; none when it does not exist.
std::optional<std::string> file_content(const std::string &path) {
  std::error_code ec;
  const auto st = fs::symlink_status(path, ec);
  if (ec || st.type() == fs::file_type::not_found)
    return std::nullopt;
  const auto target = fs::status(path, ec);
  if (target.type() == fs::file_type::not_found)
    throw std::runtime_error(path + ": a link to nothing (" + fs::read_symlink(path, ec).string() +
                             "); cannot read results");
  if (target.type() != fs::file_type::regular)
    throw std::runtime_error(path + ": not a regular file; results.jsonl must be one");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error(path + ": cannot be read: " + std::strerror(errno));
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

nlohmann::json parse_record(const std::string &path, int line_no, const std::string &line) {
  const std::string where = path + ":" + std::to_string(line_no) + ": ";
  nlohmann::json record;
  try {
    record = parse_json_input(line, "record");
  } catch (const bad_input_error &e) {
    throw std::runtime_error(where + "not a JSON record: " + std::string(e.what()).substr(8));
  }
  try {
    check_record(record);
  } catch (const json_input_error &e) {
    throw std::runtime_error(where + "not a cuparity record: " + e.what());
  }
  return record;
}

} // namespace

results_file read_results(const std::string &path) {
  results_file out;
  auto content = file_content(path);
  if (!content)
    return out;
  if (is_gzip(*content)) // a stored run's results.jsonl.gz: read, never appended to
    content = gunzip(*content, path, max_input_bytes);
  std::size_t pos = 0;
  int line_no = 0;
  while (pos < content->size()) {
    auto nl = content->find('\n', pos);
    ++line_no;
    if (nl == std::string::npos) {
      // No newline: the writer was killed mid-record.
      out.truncated_tail = true;
      break;
    }
    std::string line = content->substr(pos, nl - pos);
    pos = nl + 1;
    out.complete_size = pos;
    if (line.empty())
      continue;
    out.records.push_back(parse_record(path, line_no, line));
  }
  return out;
}

std::optional<std::string> set_aside_torn_tail(const std::string &path) {
  const auto content = file_content(path);
  if (!content || content->empty() || content->back() == '\n')
    return std::nullopt;
  const std::size_t keep = content->rfind('\n') == std::string::npos ? 0 : content->rfind('\n') + 1;
  std::string aside;
  for (int k = 1;; ++k) {
    aside = path + ".torn-" + std::to_string(k);
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(aside, ec)))
      break;
  }
  {
    std::ofstream torn(aside, std::ios::binary);
    torn << content->substr(keep);
    if (!torn.flush())
      throw std::runtime_error(aside + ": cannot keep the cut-off end of " + path);
  }
  std::error_code ec;
  fs::resize_file(path, keep, ec);
  if (ec)
    throw std::runtime_error(path + ": cannot cut off its torn last record: " + ec.message());
  return aside;
}

} // namespace cuparity
