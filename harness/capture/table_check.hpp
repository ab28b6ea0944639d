// A capture checked against the driver table a package reports itself (cuda.bindings' own).
#pragma once

#include "harness/capture/captured_map.hpp"
#include "harness/capture/map_audit.hpp"

#include <string>
#include <vector>

namespace cuparity {

/// For each package table of `m` read whole (status "ok"), each function whose symbols in the
/// table differ from the ones the package's own objects were seen to get from cuGetProcAddress in
/// that process image: a finding of kind table_disagrees naming the process, the function and
/// both sides (a pointer the table holds that the capture never saw bound, and the reverse).
/// An object is the package's when it lies in the table's `folder`, or when the distribution
/// that owns it is the table's `package`.
[[nodiscard]] std::vector<map_finding> table_findings(const captured_map &m);

/// One line for each table that could not be checked (the package bound nothing, a version
/// without a table, a table that failed or was never written), saying why: never a silent pass.
[[nodiscard]] std::vector<std::string> table_notes(const captured_map &m);

} // namespace cuparity
