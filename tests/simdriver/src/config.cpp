// Reads the simulated driver's configuration from CUPARITY_SIM_* environment variables, once.
#include "sim.hpp"

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

bool parse_error_code(std::string_view text, std::int64_t &out) {
  if (parse_int(text, out))
    return true;
  // Also accept an enumerator name such as CUDA_ERROR_OUT_OF_MEMORY.
  for (int code = 0; code <= 1000; ++code) {
    const char *name = error_name(static_cast<CUresult>(code));
    if (name != nullptr && text == name) {
      out = code;
      return true;
    }
  }
  return false;
}

// One fault spec: <exported symbol>:<kind>[=<value>][@<path>]; returns a reason when malformed.
std::string parse_fault(std::string_view spec, fault_spec &out) {
  const std::size_t colon = spec.find(':');
  if (colon == std::string_view::npos)
    return "expected <symbol>:<kind>[=<value>][@<path>]";
  const std::string_view symbol = trim(spec.substr(0, colon));
  if (!find_symbol(symbol, out.symbol))
    return "'" + std::string(symbol) + "' is not a symbol this driver exports";
  std::string_view rest = spec.substr(colon + 1);
  if (const std::size_t at = rest.find('@'); at != std::string_view::npos) {
    const std::string_view path = trim(rest.substr(at + 1));
    rest = rest.substr(0, at);
    if (path == "any")
      out.path = call_path::any;
    else if (path == "dlsym")
      out.path = call_path::dlsym;
    else if (path == "proc")
      out.path = call_path::proc;
    else
      return "unknown path '" + std::string(path) + "' (any, dlsym, proc)";
  }
  std::string_view kind = trim(rest);
  std::string_view value;
  bool has_value = false;
  if (const std::size_t eq = kind.find('='); eq != std::string_view::npos) {
    value = trim(kind.substr(eq + 1));
    kind = trim(kind.substr(0, eq));
    has_value = true;
  }
  if (kind == "error") {
    out.what = fault_spec::kind::error;
    if (!has_value || !parse_error_code(value, out.value) || out.value < 0)
      return "error needs a CUresult value, e.g. error=2";
  } else if (kind == "delay_ns") {
    out.what = fault_spec::kind::delay_ns;
    if (!has_value || !parse_int(value, out.value) || out.value < 0)
      return "delay_ns needs a non-negative integer";
  } else if (kind == "corrupt") {
    out.what = fault_spec::kind::corrupt;
    if (has_value)
      return "corrupt takes no value";
  } else if (kind == "crash") {
    // A driver that dies inside a call (SIGSEGV): lets tests prove the runner records a crash
    // and carries on with the rest of the cell in a new process.
    out.what = fault_spec::kind::crash;
    if (has_value)
      return "crash takes no value";
  } else {
    return "unknown kind '" + std::string(kind) + "' (error, delay_ns, corrupt, crash)";
  }
  return {};
}

void read_faults(config &c) {
  const char *raw = std::getenv("CUPARITY_SIM_FAULTS");
  if (raw == nullptr)
    return;
  std::string_view rest = raw;
  while (!rest.empty()) {
    const std::size_t semi = rest.find(';');
    const std::string_view item = trim(rest.substr(0, semi));
    rest = semi == std::string_view::npos ? std::string_view{} : rest.substr(semi + 1);
    if (item.empty())
      continue;
    fault_spec spec;
    if (std::string reason = parse_fault(item, spec); !reason.empty()) {
      warn("ignoring fault '" + std::string(item) + "' in CUPARITY_SIM_FAULTS: " + reason);
      continue;
    }
    c.faults.push_back(spec);
  }
}

config load() {
  config c;
  c.driver_version = CUPARITY_SIM_DEFAULT_DRIVER_VERSION;
  c.total_mem = default_total_mem;
  read_int<int>("CUPARITY_SIM_DRIVER_VERSION", 1000, 1000000, c.driver_version);
  read_int<int>("CUPARITY_SIM_DEVICES", 0, 64, c.device_count);
  read_int<std::uint64_t>("CUPARITY_SIM_TOTAL_MEM", 1, std::uint64_t{1} << 50, c.total_mem);
  read_hidden(c);
  read_faults(c);
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
