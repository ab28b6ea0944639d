// Matrix variables: names, values (string, integer or false = unset), rule tables, cell ids.
#include "harness/matrix/variables.hpp"

#include "harness/config/env_vars.hpp"
#include "harness/matrix/limits.hpp"
#include "harness/matrix/package_keys.hpp"
#include "harness/matrix/placeholders.hpp"
#include "harness/matrix/text.hpp"

#include <algorithm>
#include <cctype>

namespace cuparity {

std::string short_variable_name(const std::string &var) {
  static const std::map<std::string, std::string> names{
      {var::use_nvidia_binding, "nv"},    {var::numba_ptds, "numba_ptds"},
      {var::cuda_python_ptds, "cp_ptds"}, {var::driver, "driver"},
      {var::include_path, "include"},     {var::nvidia_backend, "nv_lib"},
      {var::binding_map, "map"}};
  auto it = names.find(var);
  return it == names.end() ? var : it->second;
}

bool env_matches(const cell_env &when, const cell_env &env) {
  for (const auto &[k, v] : when) {
    auto it = env.find(k);
    env_value have = it == env.end() ? std::nullopt : it->second;
    if (have != v)
      return false;
  }
  return true;
}

namespace matrix_detail {

namespace {

/// [A-Z_][A-Z0-9_]*, by hand: std::regex_match recurses once per character, and a 50,000-byte key
/// overflowed the stack (exit 139). Nothing here reads untrusted text with std::regex.
bool upper_case_name(std::string_view s) {
  const auto upper = [](char c) { return (c >= 'A' && c <= 'Z') || c == '_'; };
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  return !s.empty() && upper(s[0]) &&
         std::all_of(s.begin(), s.end(), [&](char c) { return upper(c) || digit(c); });
}

} // namespace

void check_variable_name(const toml_reader &r, const toml::key &k, const std::string &name) {
  if (name.size() > limits::variable_name_max_bytes)
    r.error(k, in_quotes(name) + " is longer than a variable name may be (" +
                   std::to_string(limits::variable_name_max_bytes) + " bytes)");
  if (!upper_case_name(name))
    r.error(k, in_quotes(name) + " is not an environment variable name (expected UPPER_CASE)");
}

namespace {

/// A string value: no NUL (an environment cannot hold one; string_of refuses it), no unknown
/// placeholder, and at most value_max_bytes once the placeholders are substituted.
std::string string_value(const toml_reader &r, const toml::node &n, const std::string &var) {
  const std::string what = "value of " + var;
  const std::string raw = r.string_of(n, what);
  if (auto p = unknown_placeholder(raw))
    r.error(n, what + ": unknown placeholder " + *p +
                   " (known: {bin}, {matrix_dir}; environment variables are not expanded)");
  std::string value = substitute_placeholders(raw, r.dir());
  if (value.size() > limits::value_max_bytes)
    r.error(n, what + " is " + std::to_string(value.size()) + " bytes long; the most is " +
                   std::to_string(limits::value_max_bytes));
  return value;
}

} // namespace

env_value variable_value(const toml_reader &r, const toml::node &n, const std::string &var) {
  if (n.is_string())
    return string_value(r, n, var);
  if (n.is_integer())
    return std::to_string(*n.value<long long>());
  if (n.is_boolean() && !*n.value<bool>())
    return std::nullopt;
  r.error(n, "value of " + var + " must be a string, an integer or false (= unset), not " +
                 toml_reader::type_name(n));
}

rule read_rule(const toml_reader &r, const toml::table &t, std::string_view what,
               const std::vector<std::string_view> &lowercase_keys) {
  rule out;
  out.where = r.at(t);
  for (const auto &[kp, vp] : toml_reader::in_file_order(t)) {
    const std::string key(kp->str());
    if (std::find(lowercase_keys.begin(), lowercase_keys.end(), key) != lowercase_keys.end())
      continue;
    if (key == package_axis) { // a requirement list (package_keys.hpp), not an UPPER_CASE variable
      out.env[key] = package_value(r, *vp);
      continue;
    }
    if (!key.empty() && std::islower(static_cast<unsigned char>(key[0])))
      r.error(*kp, "unknown key " + in_quotes(key) + " in " + std::string(what) +
                       (lowercase_keys.empty()
                            ? ""
                            : " (known lowercase keys: " + join(lowercase_keys) + ")"));
    check_variable_name(r, *kp, key);
    out.env[key] = variable_value(r, *vp, key);
  }
  return out;
}

std::string cell_id(const std::vector<std::string> &vars, const cell_env &env) {
  std::string id;
  for (const auto &v : vars) {
    auto it = env.find(v);
    if (it == env.end())
      continue;
    if (!id.empty())
      id += ",";
    // A value may hold a newline or a tab (Python's int() strips them, so a matrix may test
    // that); the id shows them escaped, so it stays one printable line in every file.
    id += short_variable_name(v) + "=" + (it->second ? escape_controls(*it->second) : "-");
  }
  return id.empty() ? "default" : id;
}

} // namespace matrix_detail
} // namespace cuparity
