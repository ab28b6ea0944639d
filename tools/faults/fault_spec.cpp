// Parses fault specs: `<exported symbol>:<kind>[=<value>][@<path>]`, `;`-separated.
#include "tools/faults/fault_spec.hpp"

#include "tools/faults/cuda_error_names.hpp"

#include <charconv>

namespace cuparity::faults {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

bool parse_int(std::string_view text, std::int64_t &out) {
  text = trim(text);
  if (text.empty())
    return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && end == text.data() + text.size();
}

// A CUresult as an integer or as its enumerator name (CUDA_ERROR_OUT_OF_MEMORY).
bool parse_error_code(std::string_view text, std::int64_t &out) {
  if (parse_int(text, out))
    return true;
  if (auto code = cuda_error_code(trim(text))) {
    out = *code;
    return true;
  }
  return false;
}

std::string parse_path(std::string_view text, call_path &out) {
  if (text == "any")
    out = call_path::any;
  else if (text == "dlsym")
    out = call_path::dlsym;
  else if (text == "proc")
    out = call_path::proc;
  else
    return "unknown path '" + std::string(text) + "' (any, dlsym, proc)";
  return {};
}

std::string parse_kind(std::string_view kind, bool has_value, std::string_view value,
                       fault_spec &out) {
  if (kind == "error") {
    out.kind = fault_kind::error;
    if (!has_value || !parse_error_code(value, out.value) || out.value < 0)
      return "error needs a CUresult value, e.g. error=2";
  } else if (kind == "delay_ns") {
    out.kind = fault_kind::delay_ns;
    if (!has_value || !parse_int(value, out.value) || out.value < 0)
      return "delay_ns needs a non-negative integer";
  } else if (kind == "corrupt") {
    out.kind = fault_kind::corrupt;
    if (has_value)
      return "corrupt takes no value";
  } else if (kind == "crash") {
    out.kind = fault_kind::crash;
    if (has_value)
      return "crash takes no value";
  } else if (kind == "legacy") {
    out.kind = fault_kind::legacy;
    if (has_value)
      return "legacy takes no value";
    if (!legacy_twin(out.symbol))
      return "legacy applies only to a per-thread symbol (_ptds, _ptsz) with a legacy twin";
  } else {
    return "unknown kind '" + std::string(kind) + "' (error, delay_ns, corrupt, crash, legacy)";
  }
  return {};
}

} // namespace

std::optional<symbol_id> legacy_twin(symbol_id id) {
  const std::string_view name = symbol_name(id);
  for (std::string_view suffix : {"_ptds", "_ptsz"})
    if (name.size() > suffix.size() && name.ends_with(suffix))
      return find_symbol(name.substr(0, name.size() - suffix.size()));
  return std::nullopt;
}

std::string parse_fault(std::string_view item, fault_spec &out) {
  const std::size_t colon = item.find(':');
  if (colon == std::string_view::npos)
    return "expected <symbol>:<kind>[=<value>][@<path>]";
  const std::string_view symbol = trim(item.substr(0, colon));
  const auto id = find_symbol(symbol);
  if (!id)
    return "'" + std::string(symbol) + "' is not a symbol this library exports";
  out.symbol = *id;
  std::string_view rest = item.substr(colon + 1);
  if (const std::size_t at = rest.find('@'); at != std::string_view::npos) {
    if (std::string reason = parse_path(trim(rest.substr(at + 1)), out.path); !reason.empty())
      return reason;
    rest = rest.substr(0, at);
  }
  std::string_view kind = trim(rest);
  std::string_view value;
  const std::size_t eq = kind.find('=');
  if (eq != std::string_view::npos) {
    value = trim(kind.substr(eq + 1));
    kind = trim(kind.substr(0, eq));
  }
  return parse_kind(kind, eq != std::string_view::npos, value, out);
}

std::string fault_item_support(std::string_view item, const support_check &supported) {
  fault_spec spec;
  std::string why = parse_fault(item, spec);
  if (why.empty() && supported)
    why = supported(spec);
  return why;
}

std::vector<fault_spec> parse_fault_list(std::string_view text, std::string_view variable,
                                         const warning_sink &warn, const support_check &supported) {
  std::vector<fault_spec> out;
  std::string_view rest = text;
  while (!rest.empty()) {
    const std::size_t semi = rest.find(';');
    const std::string_view item = trim(rest.substr(0, semi));
    rest = semi == std::string_view::npos ? std::string_view{} : rest.substr(semi + 1);
    if (item.empty())
      continue;
    fault_spec spec;
    std::string reason = parse_fault(item, spec);
    if (reason.empty() && supported)
      reason = supported(spec);
    if (!reason.empty()) {
      warn("ignoring fault '" + std::string(item) + "' in " + std::string(variable) + ": " +
           reason);
      continue;
    }
    out.push_back(spec);
  }
  return out;
}

} // namespace cuparity::faults
