// Case-id globs: fnmatch, or a bare suite name.
#include "harness/protocol/case_ids.hpp"

#include <fnmatch.h>

namespace cuparity {

bool case_matches(const std::string &id, const std::string &pattern) {
  if (pattern == id.substr(0, id.find('.')))
    return true;
  return fnmatch(pattern.c_str(), id.c_str(), 0) == 0;
}

std::string suite_pair_id(const std::string &suite) {
  return suite + ".*";
}

std::string suite_of_pair_id(const std::string &id) {
  return id.size() > 2 && id.ends_with(".*") ? id.substr(0, id.size() - 2) : "";
}

} // namespace cuparity
