// A cell's [[program]] tables: each command under capture, its exit status and map the result.
#pragma once

#include "harness/run/cell_watch.hpp"

#include <map>
#include <string>

namespace cuparity {

/// The programs of one cell, run one after another (docs/configuration.md#programs).
class program_cell {
public:
  /// `cell_recorded` is the cell's, shared with its suites: its record is written once.
  program_cell(const cell_runner &r, const cell &c, const std::string &gpu, bool &cell_recorded);

  /// Runs program `x` under `cuparity capture` (and again up to its retries while it did not
  /// pass), then records its one case `<name>` and a suite_end with its first process's captured
  /// bindings; the cell's record comes from the first program whose processes bound the driver.
  /// A map that cannot be read is a cell_error. Nothing is recorded when the run is stopped.
  void run(const external_suite &x);

  /// After the cell's programs: the cell's record with stream0 "none" when no program bound the
  /// driver (every package missing, say), so that the cell is judged, not lost.
  void finish();

private:
  const cell_runner &m_r;
  const cell &m_cell;
  const std::string m_gpu;
  bool &m_cell_recorded;
  const std::map<std::string, std::string> m_env;
  bool m_ran = false; ///< some program ran to its end here
};

} // namespace cuparity
