// Case registration, id validation and glob selection.
#include "harness/framework/case_registry.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fnmatch.h>

namespace cuparity {

const std::vector<std::string> &builtin_suites() {
  static const std::vector<std::string> s{"binding", "context", "alloc", "launch",
                                          "stream",  "ipc",     "nvrtc"};
  return s;
}

case_def &case_def::uses(std::initializer_list<entry_need> entries) {
  needs.entries.insert(needs.entries.end(), entries.begin(), entries.end());
  return *this;
}

case_def &case_def::uses(const std::vector<entry_need> &entries) {
  needs.entries.insert(needs.entries.end(), entries.begin(), entries.end());
  return *this;
}

case_def &case_def::needs_attribute(attribute_need a) {
  needs.attributes.push_back(std::move(a));
  return *this;
}

case_def &case_def::needs_devices(int count) {
  needs.devices = count;
  return *this;
}

case_def &case_def::needs_driver(int version) {
  needs.driver_version = version;
  return *this;
}

case_def &case_def::needs_facility(facility_need f) {
  needs.facilities.push_back(std::move(f));
  return *this;
}

case_registry &case_registry::instance() {
  static case_registry r;
  return r;
}

namespace {

/// suite.group.name, each [a-z0-9_]+; by hand, as no std::regex reads text of unbounded length.
bool is_case_id(std::string_view id) {
  int parts = 0;
  std::size_t part_length = 0;
  for (const char c : id) {
    if (c == '.') {
      if (part_length == 0)
        return false;
      ++parts, part_length = 0;
    } else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_') {
      ++part_length;
    } else {
      return false;
    }
  }
  return parts == 2 && part_length > 0;
}

} // namespace

case_def &case_registry::add(case_def def) {
  if (!is_case_id(def.id)) {
    std::fprintf(stderr, "cuparity: case id '%s' is not suite.group.name (each [a-z0-9_]+)\n",
                 def.id.c_str());
    std::abort();
  }
  if (find(def.id)) {
    std::fprintf(stderr, "cuparity: case '%s' is registered twice\n", def.id.c_str());
    std::abort();
  }
  m_cases.push_back(std::move(def));
  return m_cases.back();
}

std::vector<std::string> case_registry::suites() const {
  const auto &builtin = builtin_suites();
  std::vector<std::string> out;
  for (const auto &c : m_cases)
    if (std::find(out.begin(), out.end(), c.suite()) == out.end())
      out.push_back(c.suite());
  const auto rank = [&builtin](const std::string &s) {
    return std::find(builtin.begin(), builtin.end(), s) - builtin.begin();
  };
  std::sort(out.begin(), out.end(), [&rank](const std::string &a, const std::string &b) {
    return rank(a) != rank(b) ? rank(a) < rank(b) : a < b;
  });
  return out;
}

const case_def *case_registry::find(const std::string &id) const noexcept {
  for (const auto &c : m_cases)
    if (c.id == id)
      return &c;
  return nullptr;
}

std::vector<const case_def *>
case_registry::select(const std::vector<std::string> &patterns,
                      const std::vector<std::string> &excludes) const {
  std::vector<const case_def *> out;
  for (const auto &c : m_cases) {
    bool in = patterns.empty();
    for (const auto &p : patterns)
      in = in || case_matches(c.id, p);
    for (const auto &x : excludes)
      in = in && !case_matches(c.id, x);
    if (in)
      out.push_back(&c);
  }
  std::sort(out.begin(), out.end(), [](auto *a, auto *b) { return a->id < b->id; });
  return out;
}

} // namespace cuparity
