// Every command's standard output, written through one checked buffer: a write that failed is
// an error, never exit 0.
#pragma once

#include <optional>
#include <string>

namespace cuparity {

/// Puts std::cout on a buffer of our own over file descriptor 1 that keeps the first write error
/// (errno) of any flush: the library's own stream keeps only a flag, and the error's cause (a full
/// disk) is gone by the time the command ends. Line-buffered on a terminal, else flushed when
/// full or asked. Call once, first thing in main.
void check_standard_output();

/// Flushes std::cout (and C's stdout), closes descriptor 1, and returns std::nullopt when
/// everything written reached it; else "stdout: <strerror>" (a full disk, a closed pipe): a
/// command that exits 0 having written nothing would pass a script that reads its output.
[[nodiscard]] std::optional<std::string> finish_standard_output();

} // namespace cuparity
