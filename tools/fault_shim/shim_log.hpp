// The shim's log: at exit, one JSON line per process to the file CUPARITY_SHIM_LOG names.
#pragma once

#include <string>

namespace cuparity::shim {

/// What the line says now: the pid, the command, the binding variables (NUMBA_CUDA_*,
/// CUDA_PYTHON_*, CUPARITY_SHIM_*), the calls that took the slow path per symbol and path, and,
/// when a fault is a delay, the delay's calibration and its loop's history.
[[nodiscard]] std::string log_line();

/// Appends log_line() and a newline to `path` in one write; returns why not ("" when written).
[[nodiscard]] std::string append_log(const std::string &path);

} // namespace cuparity::shim
