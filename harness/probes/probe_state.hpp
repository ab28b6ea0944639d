// A probe's timing loop: its series (facade, raw pointer, other backend) in alternating blocks.
#pragma once

#include "harness/driver/driver.hpp"

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace cuparity {

/// The ways one probe calls the same driver entries. `direct` and `other` are both raw pointers
/// with the same result check, so other/direct is the binding alone; facade/direct is what the
/// facade costs.
enum class probe_series : int {
  facade = 0, ///< the checked call through this cell's Driver facade
  direct = 1, ///< this cell's backend's raw pointer, resolved once before timing
  other = 2,  ///< the other backend's pointer for the same entry and null-stream mode
};
inline constexpr int probe_series_count = 3;
[[nodiscard]] const char *to_string(probe_series s) noexcept;

/// How a round of one probe is timed.
struct probe_plan {
  double block_s = 2.5e-4; ///< a block's target length; blocks alternate between series
  double budget_s = 0.05;  ///< time per series in the round (the round takes about that x3)
  bool flip = false;       ///< take the cycle of orders backwards (rounds alternate)
  std::array<bool, probe_series_count> wanted{true, true, true};
};

/// One block: `iterations` calls of a series and the time they took.
struct probe_block {
  probe_series series = probe_series::facade;
  std::int64_t iterations = 0;
  double ns = 0; ///< wall time, or the probe's own (device) time where it sets it
};

/// The loop a probe writes as `for (auto _ : s)`, and the binder its calls go through. The state
/// first finds a block size (iterations doubling until a block lasts `block_s`), then runs the
/// series in triples (one block each), their orders taken in turn from a Williams design
/// (series_order.hpp), until the budget is spent at the end of a whole cycle of orders. Pairing at
/// the block level cancels the host's state: on the H200 VM the launch time drifted 15 % over a
/// run while the ratio of two interleaved series stayed within +-0.4 %.
class probe_state {
public:
  /// `other` may be null: no other backend in this process (the series is then left out).
  probe_state(const probe_plan &plan, driver *other) noexcept;

  /// What `for (auto _ : s)` binds: nothing, and no unused-variable warning for it.
  struct [[maybe_unused]] value {};
  struct sentinel {};
  class iterator {
  public:
    explicit iterator(probe_state *s) noexcept : m_state(s) {}
    bool operator!=(sentinel) {
      if (m_left) [[likely]]
        return true;
      return m_state->next_block(m_left);
    }
    void operator++() noexcept { --m_left; }
    value operator*() const noexcept { return {}; }

  private:
    probe_state *m_state;
    std::int64_t m_left = 0;
  };
  iterator begin() noexcept { return iterator(this); }
  sentinel end() const noexcept { return {}; }

  /// Replaces the wall time of the current iteration with the probe's own measurement.
  void set_iteration_time(double seconds) noexcept {
    m_manual_ns += seconds * 1e9;
    m_manual = true;
  }

  /// A callable for the entry that calls it the way the current block's series does.
  template <entry_id Id, class... Args>
  auto bind(const detail::entry_fn<Id, CUresult(CUDAAPI *)(Args...)> &fn) {
    using pointer = CUresult(CUDAAPI *)(Args...);
    pointer own = fn.get();
    void *address = theirs_address(Id);
    note_binding(Id, reinterpret_cast<const void *>(own), address);
    // Without an address the other series is dropped when the loop starts, so never called.
    // `direct` and `other` share one call site with the pointer as data (indexed by the series):
    // the only difference between them is the address called. Two call sites (a branch on the
    // series) read 0.8 % apart on the H200 for one address.
    const std::array<pointer, probe_series_count> pointers{
        own, own, address ? reinterpret_cast<pointer>(address) : own};
    const int *active = &m_active;
    return [&fn, pointers, active](Args... args) {
      const int series = *active;
      if (series == 0) {
        fn(args...);
        return;
      }
      const CUresult r = pointers[static_cast<std::size_t>(series)](args...);
      if (r != CUDA_SUCCESS) [[unlikely]]
        fn.fail(r);
    };
  }

  [[nodiscard]] probe_series active() const noexcept { return static_cast<probe_series>(m_active); }
  /// The timed blocks, calibration left out, complete triples only.
  [[nodiscard]] const std::vector<probe_block> &blocks() const noexcept { return m_blocks; }
  [[nodiscard]] std::int64_t block_iterations() const noexcept { return m_block_iterations; }
  /// Which series ran (the other backend is left out where it lacks an entry the probe binds).
  [[nodiscard]] const std::array<bool, probe_series_count> &ran() const noexcept { return m_on; }
  /// Whether the other backend bound every entry to the same address as this one (an A/A pair).
  [[nodiscard]] bool same_address() const noexcept { return m_same_address; }
  [[nodiscard]] bool bound_any() const noexcept { return !m_entries.empty(); }
  /// The entries the probe bound, in the order it first bound them.
  [[nodiscard]] const std::vector<entry_id> &entries() const noexcept { return m_entries; }
  /// Why the other series did not run ("" when it did or was not wanted).
  [[nodiscard]] const std::string &other_missing() const noexcept { return m_other_missing; }

private:
  [[nodiscard]] void *theirs_address(entry_id id) const;
  void note_binding(entry_id id, const void *own, const void *theirs);
  bool next_block(std::int64_t &left);
  void start_loop();
  void close_block();
  bool choose_next();

  probe_plan m_plan;
  driver *m_other;
  std::array<bool, probe_series_count> m_on;
  std::vector<std::vector<probe_series>> m_orders; ///< one cycle of triple orders
  int m_active = 0;
  bool m_started = false, m_calibrating = true, m_same_address = true;
  std::vector<entry_id> m_entries;
  double m_last_ns = 0; ///< the last calibration block's time
  std::string m_other_missing;
  std::int64_t m_block_iterations = 1;
  std::size_t m_position = 0; ///< index into the current triple
  std::size_t m_triples = 0;  ///< complete triples so far (the current order is m_triples % cycle)
  std::chrono::steady_clock::time_point m_loop_start, m_block_start;
  double m_manual_ns = 0;
  bool m_manual = false;
  std::vector<probe_block> m_blocks;
};

/// Keeps a value alive through the optimiser (the result of a timed call nobody reads).
template <class T> inline void keep(const T &value) noexcept {
  asm volatile("" : : "r,m"(value) : "memory");
}

} // namespace cuparity
