// A finished run's summary.json read whole, for outputs that show its verdicts as written.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace cuparity {

/// summary.json as the run wrote it, checked by the reader `cuparity compare` uses.
struct summary_document {
  std::string source; ///< the file read
  nlohmann::json summary;
};

/// Reads `path`: a run directory holding summary.json (or summary.json.gz), or a summary file.
/// Throws summary_input_error (harness/report/summary_reader.hpp) naming the file and member for
/// a missing or unreadable file, bad JSON, a schema other than cuparity.summary/1, or any member
/// read_recorded_run refuses.
[[nodiscard]] summary_document read_summary_document(const std::string &path);

} // namespace cuparity
