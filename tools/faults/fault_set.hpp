// The faults a library applies: which symbols have any, and what one call on one path must do.
#pragma once

#include "tools/faults/fault_spec.hpp"

#include <array>
#include <cstdint>
#include <vector>

namespace cuparity::faults {

/// What the caller must do after the waits (delays) have been served.
struct fault_outcome {
  bool fail = false;     ///< return `code` without calling through
  std::int64_t code = 0; ///< the first matching error fault's value
  bool corrupt = false;  ///< call through, then damage the result
  bool legacy = false;   ///< a per-thread symbol: behave as its legacy twin (stream 0 is legacy)
};

class fault_set {
public:
  fault_set() = default;
  /// Calibrates precise_delay when any spec is a delay, so no driver call pays for it later.
  explicit fault_set(std::vector<fault_spec> specs);

  [[nodiscard]] bool empty() const noexcept { return m_specs.empty(); }
  [[nodiscard]] const std::vector<fault_spec> &specs() const noexcept { return m_specs; }
  /// True when any spec is a delay: precise_delay was calibrated, and its figures mean something.
  [[nodiscard]] bool has_delay() const noexcept { return m_has_delay; }

  /// True when the symbol has a fault on any path: its calls cannot simply be passed through.
  [[nodiscard]] bool has_fault(symbol_id id) const noexcept { return m_faulted[index_of(id)] != 0; }

  /// True when the symbol has a fault for one path only (`dlsym` or `proc`): cuGetProcAddress
  /// must then hand out the symbol's proc twin rather than its exported function, so a `dlsym`
  /// fault stays off the proc path and a `proc` fault off the dlsym path. Otherwise (no fault, or
  /// only `any` faults, which both paths must show alike) both paths bind the same address, and
  /// the binding audit matches.
  [[nodiscard]] bool needs_twin(symbol_id id) const noexcept {
    return m_path_specific[index_of(id)] != 0;
  }

  /// Serves the faults of `id` that match `path` (dlsym or proc), in spec order: waits for each
  /// delay, raises SIGSEGV for a crash, and reports the first error and whether to corrupt.
  [[nodiscard]] fault_outcome apply(symbol_id id, call_path path) const;

private:
  std::vector<fault_spec> m_specs;
  bool m_has_delay = false;
  std::array<std::uint8_t, symbol_count> m_faulted{};
  std::array<std::uint8_t, symbol_count> m_path_specific{};
};

} // namespace cuparity::faults
