// Appending to a file a user (or a CI engine) named: only to a regular file or nothing.
#pragma once

#include <string>
#include <string_view>

namespace cuparity {

/// check_output_file (harness/io/output_file.hpp), then appends `content` to `path` (created when
/// missing) in one O_APPEND write sequence, as GitHub asks of $GITHUB_STEP_SUMMARY: what the file
/// held stays. Throws output_write_error naming `path` when the file system fails it (ENOSPC,
/// EDQUOT, EIO, EFBIG), else bad_input_error naming `path`.
void append_output_file(const std::string &path, std::string_view content,
                        const std::string &what = "");

/// The size of the regular file `path` in bytes; 0 when it does not exist or is no regular file.
[[nodiscard]] std::size_t output_file_size(const std::string &path);

} // namespace cuparity
