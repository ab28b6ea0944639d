// A cell of a suite matrix: each external suite's processes, its tests as case records.
#pragma once

#include "harness/run/cell_watch.hpp"

namespace cuparity {

/// Runs the suites `w` names ("<suite>.*" plan ids) in cell `w.c`, one after another
/// (docs/configuration.md#external-suites): processes under `cuparity capture` started in the
/// suite's root, a crash or timeout ending one test and the rest resuming in a fresh process,
/// each module that cannot import one error case; unless every test failed alike (a broken
/// environment) or max_fails was reached, the tests that did not pass re-run together in batches
/// up to the suite's retries, then a few alone (flaky when their outcome changes); then the
/// cell's record from the captured evidence and a suite_end record (collected, process_count,
/// environment, budget). What goes wrong for a suite as a whole (no JUnit file, nothing
/// collected, killed outside a test) is one cell_error.
void run_suite_cell(const cell_runner &r, const work_cell &w, const std::string &gpu);

} // namespace cuparity
