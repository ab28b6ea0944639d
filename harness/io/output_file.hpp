// Writing a file a user named: only over a regular file or nothing, whole or not at all.
#pragma once

#include "harness/io/input_file.hpp"

#include <stdexcept>
#include <string>
#include <string_view>

namespace cuparity {

/// Throws bad_input_error "<what> <path>: <problem>" unless `path` can be written as an output:
/// missing, or a regular file that is no link (a link, directory, FIFO, socket or device is not
/// ours to replace: rename(2) over it would swap /dev/null for a file when run as root), in a
/// folder that exists.
void check_output_file(const std::string &path, const std::string &what = "");

/// Throws bad_input_error when `out` names the same file as `in` (an existing `in`): an output
/// must never be one of the command's inputs.
void refuse_same_file(const std::string &out, const std::string &in, const std::string &what);

/// A write the file system could not complete (a full disk, quota, an I/O error): the
/// environment, not the user's input (exit 3). what() names the file.
class output_write_error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// check_output_file, then writes `content` to a temporary file beside `path` and renames it over
/// `path`: readers see the old file or the new one, and a failed write leaves the old one as it
/// was (the temporary file is removed). Throws output_write_error naming `path` when the file
/// system fails it (ENOSPC, EDQUOT, EIO, EFBIG), else bad_input_error naming `path`.
void write_output_file(const std::string &path, std::string_view content,
                       const std::string &what = "");

} // namespace cuparity
