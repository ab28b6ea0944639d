// Reads the simulated driver's configuration from CUPARITY_SIM_* environment variables, once.
#include "sim.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>

#ifndef CUPARITY_SIM_DEFAULT_DRIVER_VERSION
#define CUPARITY_SIM_DEFAULT_DRIVER_VERSION 13000
#endif

namespace cuparity::sim {

namespace {

constexpr std::uint64_t default_total_mem = 16ULL << 30;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

template <class T> bool parse_int(std::string_view text, T &out) {
  text = trim(text);
  if (text.empty())
    return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && end == text.data() + text.size();
}

// Integer variables: a value that is not an integer in range is reported and the default kept,
// like Numba's _readenv, so a typo never crashes a cell.
template <class T> void read_int(const char *var, T lo, T hi, T &value) {
  const char *raw = std::getenv(var);
  if (raw == nullptr)
    return;
  T parsed{};
  if (!parse_int(raw, parsed) || parsed < lo || parsed > hi) {
    warn(std::string("ignoring ") + var + "='" + raw + "': expected an integer in [" +
         std::to_string(lo) + ", " + std::to_string(hi) + "]; using " + std::to_string(value));
    return;
  }
  value = parsed;
}

bool is_identifier(std::string_view s) {
  if (s.empty())
    return false;
  for (char c : s)
    if (!(c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
      return false;
  return !(s.front() >= '0' && s.front() <= '9');
}

void read_hidden(config &c) {
  const char *raw = std::getenv("CUPARITY_SIM_HIDE");
  if (raw == nullptr)
    return;
  std::string_view rest = raw;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    if (item.empty())
      continue;
    if (!is_identifier(item)) {
      warn(std::string("ignoring '") + std::string(item) + "' in CUPARITY_SIM_HIDE='" + raw +
           "': not a function name");
      continue;
    }
    c.hidden.emplace(item);
  }
}

void read_faults(config &c) {
  const char *raw = std::getenv("CUPARITY_SIM_FAULTS");
  if (raw == nullptr)
    return;
  // The grammar and its warnings are shared with CUPARITY_SHIM_FAULTS (tools/faults/fault_spec).
  c.faults =
      faults::fault_set(faults::parse_fault_list(raw, "CUPARITY_SIM_FAULTS", warn, fault_support));
}

// CUDA_VISIBLE_DEVICES as the real driver reads a list of ordinals (the rules PyTorch's
// _parse_visible_devices models): the listed devices, in that order, renumbered from 0. An entry
// that names no device (no leading digits, negative, or past the host's count) ends the list, so
// "" shows none; a device listed twice shows none at all. Only the leading digits of an entry
// count ("1gpu" is 1), as with strtoul. UUIDs (GPU-...) are not modelled: they end the list too.
void read_visible(config &c) {
  const char *raw = std::getenv("CUDA_VISIBLE_DEVICES");
  c.visible.clear();
  if (raw == nullptr) {
    for (int d = 0; d < c.device_count; ++d)
      c.visible.push_back(d);
    return;
  }
  std::string_view rest = raw;
  for (bool more = true; more;) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = trim(rest.substr(0, comma));
    more = comma != std::string_view::npos;
    rest = more ? rest.substr(comma + 1) : std::string_view{};
    int d = -1;
    std::from_chars(item.data(), item.data() + item.size(), d);
    if (d < 0 || d >= c.device_count)
      return;
    if (std::find(c.visible.begin(), c.visible.end(), d) != c.visible.end()) {
      c.visible.clear();
      return;
    }
    c.visible.push_back(d);
  }
}

// CUPARITY_SIM_COMPUTE_CAPABILITY: "<major>.<minor>", e.g. 8.0, 9.0, 10.0 (the device's SM is
// major * 10 + minor). Unlike the integers above, a bad value is not replaced by the default: runs
// at the wrong architecture would pass as if the requested one had been tested.
void read_compute_capability(config &c) {
  const char *raw = std::getenv("CUPARITY_SIM_COMPUTE_CAPABILITY");
  if (raw == nullptr)
    return;
  const std::string_view text = trim(raw);
  const std::size_t dot = text.find('.');
  int major = 0, minor = 0;
  if (dot == std::string_view::npos || !parse_int(text.substr(0, dot), major) ||
      !parse_int(text.substr(dot + 1), minor) || major < 1 || major > 25 || minor < 0 ||
      minor > 9) {
    c.cc_error = std::string("CUPARITY_SIM_COMPUTE_CAPABILITY='") + raw +
                 "': expected <major>.<minor> such as 8.0, 9.0 or 10.0; cuInit fails with "
                 "CUDA_ERROR_NO_DEVICE";
    warn(c.cc_error);
    return;
  }
  c.cc_major = major;
  c.cc_minor = minor;
}

// CUPARITY_SIM_SHM_TAG: a namespace for the shared-memory objects, so that a test can watch a
// killed process's objects while other simulated processes (a parallel ctest, another
// checkout's tests) sweep theirs: every sweep is machine-wide within its tag. Short, because an
// IPC handle carries the name in 48 bytes. A bad value is reported and ignored (no tag).
void read_shm_tag(config &c) {
  const char *raw = std::getenv("CUPARITY_SIM_SHM_TAG");
  if (raw == nullptr)
    return;
  const std::string_view tag = raw;
  const bool ok =
      !tag.empty() && tag.size() <= 6 && std::all_of(tag.begin(), tag.end(), [](char ch) {
        return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
      });
  if (!ok) {
    warn(std::string("ignoring CUPARITY_SIM_SHM_TAG='") + raw +
         "': expected 1 to 6 of [a-z0-9]; objects are named without a tag");
    return;
  }
  c.shm_tag = tag;
}

config load() {
  config c;
  c.driver_version = CUPARITY_SIM_DEFAULT_DRIVER_VERSION;
  c.total_mem = default_total_mem;
  read_int<int>("CUPARITY_SIM_DRIVER_VERSION", 1000, 1000000, c.driver_version);
  read_int<int>("CUPARITY_SIM_DEVICES", 0, 64, c.device_count);
  read_visible(c);
  read_compute_capability(c);
  read_int<std::uint64_t>("CUPARITY_SIM_TOTAL_MEM", 1, std::uint64_t{1} << 50, c.total_mem);
  read_hidden(c);
  read_faults(c);
  read_shm_tag(c);
  return c;
}

} // namespace

void warn(const std::string &message) {
  std::fprintf(stderr, "cuparity simdriver: warning: %s\n", message.c_str());
}

const config &cfg() {
  // Intentionally leaked: worker threads may still use it while the process exits.
  static const config *const loaded = [] {
    auto *c = new config(load());
    g_fault_gate.store(c->faults.empty() ? 1 : 2, std::memory_order_release);
    return c;
  }();
  return *loaded;
}

} // namespace cuparity::sim
