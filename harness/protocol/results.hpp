// results.jsonl: one JSON record per line, appended and flushed as each case ends.
#pragma once

#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace cuparity {

inline constexpr const char *results_schema = "cuparity.results/1";

/// Appends records with one write(2) each: a SIGKILL of the runner loses at most the record
/// being written, and readers skip a truncated last line. Thread-safe.
///
/// A write that fails (a full disk) is sticky: that append and every later one throw
/// results_write_error, and nothing more is written, so a record cut off by the failure stays the
/// file's last line (a later record after it would make a line no reader can parse; --resume sets
/// the cut-off tail aside).
class results_writer {
public:
  explicit results_writer(const std::string &path);
  ~results_writer();
  results_writer(const results_writer &) = delete;
  results_writer &operator=(const results_writer &) = delete;
  void append(const nlohmann::json &record);
  /// "<path>: <strerror>" once a write has failed; std::nullopt until then.
  [[nodiscard]] std::optional<std::string> failure() const;

private:
  std::string m_path;
  int m_fd = -1;
  mutable std::mutex m_lock;
  std::optional<std::string> m_failure;
};

/// An append to a results file that failed, now or before: what() is "<path>: <strerror>".
class results_write_error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

struct results_file {
  std::vector<nlohmann::json> records;
  bool truncated_tail = false;   ///< the last line was cut off (and ignored)
  std::size_t complete_size = 0; ///< bytes up to the end of the last complete line
};

/// Reads every complete record; none when `path` does not exist. Throws std::runtime_error
/// naming the file, and "file:N" for a line that is no record (not JSON, not an object, an
/// unknown type, a member missing or of the wrong kind: record_schema.hpp), and when `path` is
/// a folder, a dangling link or unreadable. A last line without its newline is a record cut off
/// by a kill: it is not read, and `truncated_tail` says so.
[[nodiscard]] results_file read_results(const std::string &path);

/// Before anything is appended to a results file that ends in a cut-off record: moves those
/// bytes to "<path>.torn-<K>" (the first K free) and truncates the file after its last complete
/// line, so that the next record starts a line of its own. Returns the file they went to; none
/// when the file ends cleanly. Throws std::runtime_error naming the file when it cannot.
std::optional<std::string> set_aside_torn_tail(const std::string &path);

} // namespace cuparity
