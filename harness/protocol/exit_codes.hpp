// Process exit codes: the tool's (docs/formats.md) and those of the cell processes it starts.
#pragma once

namespace cuparity::exit_code {
inline constexpr int ok = 0;          ///< everything as expected
inline constexpr int failures = 1;    ///< failures, divergences, regressions, incomplete runs
inline constexpr int bad_input = 2;   ///< bad input or usage (a flag, a variable, a matrix)
inline constexpr int environment = 3; ///< environment problem (no driver when one is required)
/// `audit`: nothing was checked (an empty map, a package that did not load, a driver without
/// cuGetProcAddress_v2): not a pass, and distinct from a failure.
inline constexpr int not_audited = 4;
/// `run` stopped by SIGINT, SIGTERM or SIGHUP: 128 + the signal's number, what a shell reports for a
/// process the signal killed, so callers that test for either keep working. Every finished case
/// is recorded and --resume completes the run.
inline constexpr int interrupted = 130; ///< SIGINT
inline constexpr int terminated = 143;  ///< SIGTERM
inline constexpr int hung_up = 129;     ///< SIGHUP (the terminal or SSH session closed)
/// A cell process that stopped after a sticky error poisoned its context: the runner starts a
/// new process for the rest of the cell (EX_TEMPFAIL, so it cannot be mistaken for the above).
inline constexpr int cell_poisoned = 75;
} // namespace cuparity::exit_code
