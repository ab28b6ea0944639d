// Case-id globs: fnmatch, or a bare suite name.
#include "harness/protocol/case_ids.hpp"

#include <fnmatch.h>

namespace cuparity {

bool case_matches(const std::string &id, const std::string &pattern) {
  if (pattern == id.substr(0, id.find('.')))
    return true;
  return fnmatch(pattern.c_str(), id.c_str(), 0) == 0;
}

} // namespace cuparity
