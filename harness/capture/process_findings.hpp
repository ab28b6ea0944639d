// What a process tree's binding map says beyond each entry: the configuration each entry answers
// to, and the findings that need several entries of one process (binding_map/2).
#pragma once

#include "harness/capture/map_audit.hpp"

#include <vector>

namespace cuparity {

/// What `e` should have bound, from the best evidence there is: the documented variable of a known
/// package that owns the caller (cuda.bindings, Numba; Numba's ctypes binding asks through
/// Python's _ctypes module), else the flags of its cuGetProcAddress request (cudart's evidence),
/// else nothing (`known` false).
[[nodiscard]] ptds_expectation expectation_for(const captured_map &m, const captured_entry &e);

/// The package whose documented variable governs `e` ("cuda.bindings", "numba"), or "".
[[nodiscard]] std::string governing_package(const captured_map &m, const captured_entry &e);

/// Per process and function: two ABIs bound, both stream-0 modes bound, and functions bound by
/// PLT or dlsym in a process that resolves others through cuGetProcAddress but never this one.
[[nodiscard]] std::vector<map_finding> process_findings(const captured_map &m);

} // namespace cuparity
