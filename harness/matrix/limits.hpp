// The bounds on matrix values and on the flags that override them, in one place for all readers.
#pragma once

#include <cstddef>

namespace cuparity::limits {

// Every bound here is stated in docs/configuration.md#bounds; a value beyond one is bad input
// (exit 2), never clamped, so a typo cannot silently turn into a different run.

/// The per-case watchdog is kept in milliseconds (less than 1 would be 0 ms); at most a day.
inline constexpr double case_timeout_min_s = 0.001, case_timeout_max_s = 86400;
/// Any other duration in seconds: the latency phase's budget, at most a day.
inline constexpr double duration_max_s = 86400;
/// Seconds per series per round: the probe process gets it as "%f" text, so less than a
/// millisecond would lose digits; an hour per series is already far more than any probe needs.
inline constexpr double min_time_min_s = 0.001, min_time_max_s = 3600;
/// Seconds per block of one series.
inline constexpr double block_time_min_s = 1e-6, block_time_max_s = 1;
/// Rounds of the latency phase (rounds and max_rounds).
inline constexpr long long rounds_max = 10000;
/// Relative thresholds and the noise target: fractions, > 0; 10 is a change of 1000 %.
inline constexpr double fraction_max = 10;
/// Warnings a configuration expectation may count.
inline constexpr long long warning_count_max = 10000;

/// Cells of one matrix: each is a process (and log files) per run.
inline constexpr std::size_t cells_max = 10000;
/// Variables a matrix controls: every cell names each of them (unset where it says nothing).
inline constexpr std::size_t variables_max = 64;
/// [[include]], [[exclude]] and [[expect]] rules of each kind: each is checked against every cell.
inline constexpr std::size_t rules_max = 1000;
/// A variable's name, in bytes: far above any real one, and short enough to quote in a message.
inline constexpr std::size_t variable_name_max_bytes = 1024;
/// One variable's value, in bytes (Linux refuses a single environment string over 128 KiB).
inline constexpr std::size_t value_max_bytes = 64 * 1024;
/// All of a cell's variables together ("NAME=value" each), in bytes: the environment and the
/// arguments of a process share about 2 MiB on Linux, and the inherited environment needs room.
inline constexpr std::size_t cell_env_max_bytes = 256 * 1024;
/// A matrix name is the folder of its results (cuparity-results/<name>): one path component.
inline constexpr std::size_t name_max_bytes = 200;

/// -j / --jobs of `cuparity run`, and --gpu-count of `cuparity ctest`.
inline constexpr long long jobs_max = 1024, gpu_count_max = 1024;

} // namespace cuparity::limits
