// Numba's _find_api suffix order and pins.
#include "backends/internal/suffix_rules.hpp"

#include <algorithm>

namespace cuparity {

suffix_rules suffix_rules::numba() {
  return suffix_rules{{"_v2_ptds", "_v2_ptsz", "_ptds", "_ptsz", "_v2", ""},
                      {"_v2", ""},
                      {"cuCtxGetDevice", "cuCtxSynchronize"}};
}

std::vector<std::string> suffix_rules::candidates(std::string_view base, bool ptds) const {
  if (std::find(pinned.begin(), pinned.end(), base) != pinned.end())
    return {std::string(base)};
  std::vector<std::string> out;
  for (const auto &suffix : ptds ? ptds_suffixes : legacy_suffixes)
    out.push_back(std::string(base) + suffix);
  return out;
}

} // namespace cuparity
