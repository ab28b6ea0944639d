// One cell process's cases, run in order under the GPU lock, each ending in a case_end event.
#pragma once

#include "harness/config/config.hpp"
#include "harness/driver/driver.hpp"
#include "harness/platform/gpu_lock.hpp"
#include "harness/protocol/event_stream.hpp"

#include <optional>
#include <string>
#include <vector>

namespace cuparity {

/// Runs the cases `cases` selects (ids, globs or suites; none: all) minus `excludes`, in the
/// cell's running order (exclusive ones last, in one exclusive hold), through `d`. Before each
/// case a lock_wait and a case_start event, after it a case_end with its outcome, observations
/// and costs. A helper server is started beside the first cases when any case needs one. Stops at
/// the first case that poisons the process. Returns exit_code::cell_poisoned then, else ok.
[[nodiscard]] int run_cell_cases(driver &d, const effective_config &config, gpu_lock &lock,
                                 const event_stream &events, const std::vector<std::string> &cases,
                                 const std::vector<std::string> &excludes);

/// The cell's end, under the lock held shared (its teardown changes the device's free memory):
/// the helper server stops, every entry is resolved (a resumed cell's map must equal an
/// uninterrupted one's) unless the process is poisoned, and the cell_end event carries the
/// binding map; last, unless poisoned, the primary context of `primary` (the one the cell's start
/// retained) is released, still under the lock.
void finish_cell(driver &d, gpu_lock &lock, const event_stream &events, bool poisoned,
                 std::optional<CUdevice> primary);

} // namespace cuparity
