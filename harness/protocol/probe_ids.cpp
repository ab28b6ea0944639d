// Probe names the protocol defines: matching globs against cell.startup.
#include "harness/protocol/probe_ids.hpp"

#include <fnmatch.h>

namespace cuparity {

bool glob_matches_startup(const std::string &glob) {
  return fnmatch(glob.c_str(), startup_probe, 0) == 0;
}

bool selects_startup(const std::vector<std::string> &globs) {
  if (globs.empty())
    return true;
  for (const auto &g : globs)
    if (glob_matches_startup(g))
      return true;
  return false;
}

} // namespace cuparity
