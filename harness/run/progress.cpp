// The progress line, redrawn in place on stderr.
#include "harness/run/progress.hpp"

#include <cstdio>
#include <iostream>
#include <unistd.h>

namespace cuparity {

progress_line::progress_line(std::size_t cells, std::size_t cases)
    : m_tty(isatty(2) != 0), m_cells(cells), m_cases(cases),
      m_start(std::chrono::steady_clock::now()) {}

void progress_line::case_done(bool failed) {
  std::lock_guard<std::mutex> g(m_lock);
  ++m_cases_done;
  m_failures += failed;
  print();
}

void progress_line::cell_done() {
  std::lock_guard<std::mutex> g(m_lock);
  ++m_cells_done;
  print();
}

void progress_line::finish() {
  if (m_tty)
    std::cerr << "\n";
}

void progress_line::print() {
  if (!m_tty)
    return;
  double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
  double eta = m_cases_done ? elapsed / m_cases_done * (m_cases - m_cases_done) : 0;
  std::fprintf(stderr, "\r[cuparity] cells %zu/%zu  cases %zu/%zu  failures %zu  ETA %.0fs   ",
               m_cells_done, m_cells, m_cases_done, m_cases, m_failures, eta);
}

} // namespace cuparity
