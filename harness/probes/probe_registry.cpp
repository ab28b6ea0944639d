// Probe registration and selection.
#include "harness/probes/probe_registry.hpp"

#include "harness/protocol/probe_ids.hpp"

#include <fnmatch.h>

namespace cuparity {

probe_registry &probe_registry::instance() {
  static probe_registry r;
  return r;
}

std::vector<const probe_def *> probe_registry::select(const std::vector<std::string> &globs) const {
  std::vector<const probe_def *> out;
  for (const auto &p : m_probes) {
    bool in = globs.empty();
    for (const auto &g : globs)
      in = in || fnmatch(g.c_str(), p.name.c_str(), 0) == 0;
    if (in)
      out.push_back(&p);
  }
  return out;
}

bool probe_registry::matches_any(const std::string &glob) const {
  return !select({glob}).empty() || glob_matches_startup(glob);
}

const char *unit_of(probe_kind k) noexcept {
  return k == probe_kind::bandwidth ? "GB/s" : "ns";
}

const char *to_string(probe_kind k) noexcept {
  switch (k) {
  case probe_kind::host:
    return "host";
  case probe_kind::device:
    return "device";
  case probe_kind::bandwidth:
    return "bandwidth";
  case probe_kind::startup:
    return "startup";
  }
  return "host";
}

} // namespace cuparity
