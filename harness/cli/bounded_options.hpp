// Validators for numeric flags: a finite number or a whole one within stated bounds, said so.
#pragma once

#include <CLI/CLI.hpp>

namespace cuparity::cli {

/// A whole number in [min, max], written in decimal ("4", not "4.0" or "1e3"); the message
/// names the bounds ("must be a whole number from 1 to 1024, not '0'"). CLI11's own checks
/// print DBL_MAX in full and let -j 100000 through.
[[nodiscard]] CLI::Validator whole_number(long long min, long long max);

/// A finite number above `min` (or at least `min` when `min_included`) and at most `max`; nan
/// and inf are refused (CLI11's range checks take nan).
[[nodiscard]] CLI::Validator finite_number(double min, bool min_included, double max);

} // namespace cuparity::cli
