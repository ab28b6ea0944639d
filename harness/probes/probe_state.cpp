// The block schedule of a probe's series: block size, triple order, budget.
#include "harness/probes/probe_state.hpp"

#include "harness/probes/series_order.hpp"

#include <algorithm>

namespace cuparity {
namespace {

/// Iterations per block at most: a call that costs nothing measurable must still end.
constexpr std::int64_t max_block_iterations = std::int64_t{1} << 30;

/// Triples at least, however slow the calls: fewer give no interval.
constexpr std::size_t min_triples = 2;

} // namespace

const char *to_string(probe_series s) noexcept {
  switch (s) {
  case probe_series::facade:
    return "facade";
  case probe_series::direct:
    return "direct";
  case probe_series::other:
    return "other";
  }
  return "facade";
}

probe_state::probe_state(const probe_plan &plan, driver *other) noexcept
    : m_plan(plan), m_other(other), m_on(plan.wanted) {}

void *probe_state::theirs_address(entry_id id) const {
  return m_other ? m_other->address(id) : nullptr;
}

void probe_state::note_binding(entry_id id, const void *own, const void *theirs) {
  if (std::find(m_entries.begin(), m_entries.end(), id) == m_entries.end())
    m_entries.push_back(id);
  m_same_address = m_same_address && own == theirs;
  if (m_other && !theirs && m_other_missing.empty())
    m_other_missing = "the " + std::string(m_other->backend_name()) + " backend has no " +
                      std::string(info(id).name);
}

void probe_state::start_loop() {
  m_started = true;
  if (!m_other && m_other_missing.empty() && m_on[2])
    m_other_missing = "no other backend in this process";
  if (!m_other_missing.empty())
    m_on[2] = false;
  if (m_entries.empty()) // no driver call: the series would all be the same code
    m_on[1] = m_on[2] = false;
  std::vector<probe_series> on;
  for (int s = 0; s < probe_series_count; ++s)
    if (m_on[s])
      on.push_back(static_cast<probe_series>(s));
  for (const auto &row : balanced_orders(on.size())) {
    m_orders.emplace_back();
    for (std::size_t i : row)
      m_orders.back().push_back(on[i]);
  }
  if (m_plan.flip) // odd rounds take the cycle backwards: each order is then reversed too
    std::reverse(m_orders.begin(), m_orders.end());
  m_calibrating = true;
  m_active = static_cast<int>(m_on[1] ? probe_series::direct : on.front());
  m_loop_start = std::chrono::steady_clock::now();
}

void probe_state::close_block() {
  const auto now = std::chrono::steady_clock::now();
  const double ns = m_manual
                        ? m_manual_ns
                        : std::chrono::duration<double, std::nano>(now - m_block_start).count();
  if (m_calibrating)
    m_last_ns = ns;
  else
    m_blocks.push_back({active(), m_block_iterations, ns});
}

/// Calibration grows the block until it lasts `block_s`; then triples run, each in the next order
/// of the cycle (series_order.hpp: every series takes every position equally often), until the
/// budget is spent at the end of a whole cycle. False when the loop is over.
bool probe_state::choose_next() {
  const double target_ns = m_plan.block_s * 1e9;
  if (m_calibrating) {
    if (m_last_ns < target_ns && m_block_iterations < max_block_iterations) {
      const double grow = m_last_ns > 0 ? target_ns / m_last_ns : 16.0;
      m_block_iterations = std::min(
          max_block_iterations,
          m_block_iterations * std::clamp<std::int64_t>(static_cast<std::int64_t>(grow), 2, 16));
      return true; // another calibration block of the same series
    }
    m_calibrating = false;
    m_position = 0;
  }
  const auto &order = m_orders[m_triples % m_orders.size()];
  if (m_position == order.size()) {
    ++m_triples;
    const double spent =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - m_loop_start).count();
    const bool cycle_end = m_triples % m_orders.size() == 0;
    if (cycle_end && m_triples >= min_triples &&
        spent >= m_plan.budget_s * static_cast<double>(order.size()))
      return false;
    m_position = 0;
  }
  m_active = static_cast<int>(m_orders[m_triples % m_orders.size()][m_position++]);
  return true;
}

bool probe_state::next_block(std::int64_t &left) {
  if (!m_started) {
    start_loop(); // the first block: calibration, in the series chosen there
  } else {
    close_block();
    if (!choose_next())
      return false;
  }
  left = m_block_iterations;
  m_manual_ns = 0;
  m_manual = false;
  m_block_start = std::chrono::steady_clock::now();
  return true;
}

} // namespace cuparity
