// Process exit codes, as DESIGN.md defines them.
#pragma once

namespace cuparity::exit_code {
inline constexpr int ok = 0;          ///< everything as expected
inline constexpr int failures = 1;    ///< failures, divergences or regressions
inline constexpr int bad_input = 2;   ///< bad input or usage (a flag, a variable, a matrix)
inline constexpr int environment = 3; ///< environment problem (no driver when one is required)
} // namespace cuparity::exit_code
