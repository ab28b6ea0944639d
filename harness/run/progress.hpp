// The progress line on a terminal: cells and cases done, failures, a time estimate.
#pragma once

#include <chrono>
#include <cstddef>
#include <mutex>

namespace cuparity {

/// Updated by the worker threads as cases and cells end; prints only to a terminal, so that CI
/// logs stay readable. Thread-safe.
class progress_line {
public:
  progress_line(std::size_t cells, std::size_t cases);
  void case_done(bool failed);
  void cell_done();
  void finish();

private:
  void print();
  std::mutex m_lock;
  bool m_tty;
  std::size_t m_cells, m_cases, m_cells_done = 0, m_cases_done = 0, m_failures = 0;
  std::chrono::steady_clock::time_point m_start;
};

} // namespace cuparity
