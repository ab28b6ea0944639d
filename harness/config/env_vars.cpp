// Numba-compatible reading of integer environment variables.
#include "harness/config/env_vars.hpp"

#include <cctype>
#include <cstdlib>

namespace cuparity {

const std::vector<std::string> &binding_variables() {
  static const std::vector<std::string> vars{var::use_nvidia_binding, var::numba_ptds,
                                             var::cuda_python_ptds,   var::driver,
                                             var::include_path,       var::nvidia_backend};
  return vars;
}

env_lookup process_environment() {
  return [](const std::string &name) -> std::optional<std::string> {
    if (const char *v = std::getenv(name.c_str()))
      return std::string(v);
    return std::nullopt;
  };
}

std::optional<long long> parse_python_int(std::string_view text) {
  auto is_space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!text.empty() && is_space(text.front()))
    text.remove_prefix(1);
  while (!text.empty() && is_space(text.back()))
    text.remove_suffix(1);
  bool negative = false;
  if (!text.empty() && (text.front() == '+' || text.front() == '-')) {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  if (text.empty())
    return std::nullopt;
  long long value = 0;
  bool last_was_digit = false;
  for (char c : text) {
    if (c == '_') {
      // int("1_0") == 10 in Python, but "1__0", "_1" and "1_" are errors.
      if (!last_was_digit)
        return std::nullopt;
      last_was_digit = false;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(c)))
      return std::nullopt;
    if (value > (__LONG_LONG_MAX__ - 9) / 10)
      return std::nullopt; // beyond what any of our switches could mean
    value = value * 10 + (c - '0');
    last_was_digit = true;
  }
  if (!last_was_digit)
    return std::nullopt;
  return negative ? -value : value;
}

long long read_int_variable(const env_lookup &env, const std::string &name, long long fallback,
                            std::vector<std::string> &warnings) {
  auto raw = env(name);
  if (!raw)
    return fallback;
  if (auto v = parse_python_int(*raw))
    return *v;
  warnings.push_back(name + "='" + *raw + "' is not an integer; using the default " +
                     std::to_string(fallback) + " instead");
  return fallback;
}

} // namespace cuparity
