// Run against run, for equivalence: which divergences B has that A had not, and which are gone.
#pragma once

#include "harness/verdict/compare.hpp"

#include <string>
#include <vector>

namespace cuparity {

/// Where a divergence lies in terms that survive a change of host: "stream0=<mode>
/// driver=<file name>" from its group key (the driver's folder and the include path differ
/// between machines; the mode and the driver file do not).
[[nodiscard]] std::string divergence_place(const std::string &group_key);

/// A divergence's identity across runs: its case, its key and divergence_place of its group.
[[nodiscard]] std::string divergence_identity(const divergence &d);

struct divergence_changes {
  std::vector<divergence> added; ///< B's divergences whose identity A has not
  std::vector<divergence> gone;  ///< A's divergences whose identity B has not
};

/// Both lists sorted by identity.
[[nodiscard]] divergence_changes compare_divergences(const std::vector<divergence> &a,
                                                     const std::vector<divergence> &b);

} // namespace cuparity
