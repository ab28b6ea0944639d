// The Python probe process's probes, by name and glob.
#include "harness/matrix/python_probes.hpp"

#include <algorithm>
#include <fnmatch.h>

namespace cuparity {

const std::vector<std::string> &python_probe_names() {
  static const std::vector<std::string> names{"py.ctx.get_current",  "py.mem.alloc_free_4k",
                                              "py.memcpy.htod_4b",   "py.launch.empty_kernel",
                                              "py.stream.sync_idle", "py.event.record_query"};
  return names;
}

bool is_python_probe(const std::string &name) {
  const auto &all = python_probe_names();
  return std::find(all.begin(), all.end(), name) != all.end();
}

bool glob_matches_python_probe(const std::string &glob) {
  const auto &all = python_probe_names();
  return std::any_of(all.begin(), all.end(), [&](const std::string &name) {
    return fnmatch(glob.c_str(), name.c_str(), 0) == 0;
  });
}

} // namespace cuparity
