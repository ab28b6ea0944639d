// The running executable's own path, for starting more processes of the same binary.
#pragma once

#include <string>

namespace cuparity {

/// The path of the running binary (/proc/self/exe resolved). Cells, probes and helpers are this
/// binary again, so whatever starts one asks here. Throws std::filesystem::filesystem_error when
/// the link cannot be read.
[[nodiscard]] std::string self_executable();

} // namespace cuparity
