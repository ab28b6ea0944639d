// results.jsonl: one JSON record per line, appended and flushed as each case ends.
#pragma once

#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cuparity {

inline constexpr const char *results_schema = "cuparity.results/1";

/// Appends records with one write(2) each: a SIGKILL of the runner loses at most the record
/// being written, and readers skip a truncated last line. Thread-safe.
class results_writer {
public:
  explicit results_writer(const std::string &path);
  ~results_writer();
  results_writer(const results_writer &) = delete;
  results_writer &operator=(const results_writer &) = delete;
  void append(const nlohmann::json &record);

private:
  int m_fd = -1;
  std::mutex m_lock;
};

struct results_file {
  std::vector<nlohmann::json> records;
  bool truncated_tail = false; ///< the last line was cut off (and ignored)
};

/// Reads every complete record. Throws std::runtime_error naming file and line for a corrupt
/// line that is not the last one.
[[nodiscard]] results_file read_results(const std::string &path);

} // namespace cuparity
