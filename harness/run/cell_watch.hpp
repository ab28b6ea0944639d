// Watching cell processes: a cell's cases in fresh processes, their events turned into records.
#pragma once

#include "harness/matrix/matrix.hpp"
#include "harness/protocol/results.hpp"
#include "harness/run/plan.hpp"
#include "harness/run/progress.hpp"

#include <atomic>
#include <chrono>
#include <string>

namespace cuparity {

/// What the cells of a run share: the matrix, where they record, and the stop flag. One runner
/// serves every worker thread.
struct cell_runner {
  const matrix &m;
  results_writer &results;
  progress_line &progress;
  std::string log_dir;
  std::string out_root;          ///< the run's output directory (for the lock directories)
  const std::atomic<bool> &stop; ///< set by SIGINT/SIGTERM: kill the cell, record nothing more
  /// When the functional phase began: records carry times since then (the phase's timeline).
  std::chrono::steady_clock::time_point phase_start = std::chrono::steady_clock::now();

  /// Runs every case of `w` in cell processes that see `gpu` (CUDA_VISIBLE_DEVICES, "" = as is).
  /// A case that hangs past its deadline is killed (timeout) and one that kills its process is a
  /// crash; either way the rest of the cell goes on in a new process, as it does after a sticky
  /// error (exit_code::cell_poisoned). Each case gets exactly one record.
  void run(const work_cell &w, const std::string &gpu) const;

  /// The watchdog's deadline for one case: the matrix's case_timeout_s, else the case's own.
  [[nodiscard]] std::chrono::milliseconds timeout_of(const std::string &case_id) const;
};

} // namespace cuparity
