// Reading gzip-compressed inputs: stored runs keep summary.json.gz and results.jsonl.gz.
#pragma once

#include <cstddef>
#include <string>

namespace cuparity {

/// Whether `bytes` start like a gzip stream (1f 8b).
[[nodiscard]] bool is_gzip(const std::string &bytes) noexcept;

/// The text inside gzip `bytes` (several members are joined, as gzip -d does). Throws
/// bad_input_error "<name>: <problem>" for a damaged or truncated stream, or one that inflates to
/// more than `max_bytes`.
[[nodiscard]] std::string gunzip(const std::string &bytes, const std::string &name,
                                 std::size_t max_bytes);

/// The stored form of a run's file: `dir/file` where it exists, else `dir/file.gz` where that
/// exists, else `dir/file` (so a message names what is missing).
[[nodiscard]] std::string stored_run_file(const std::string &dir, const std::string &file);

} // namespace cuparity
