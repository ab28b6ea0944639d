// Placeholders in matrix values: {bin} (the executable's directory), {matrix_dir}.
#include "harness/matrix/placeholders.hpp"

#include "harness/config/config.hpp"

#include <cctype>

namespace cuparity::matrix_detail {

std::string substitute_placeholders(std::string s, const std::string &matrix_dir) {
  auto replace = [&](const std::string &from, const std::string &to) {
    for (auto pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size()))
      s.replace(pos, from.size(), to);
  };
  replace("{bin}", executable_dir());
  replace("{matrix_dir}", matrix_dir);
  return s;
}

std::optional<std::string> unknown_placeholder(std::string_view s) {
  auto word = [](char c, bool first) {
    const auto u = static_cast<unsigned char>(c);
    return std::isalpha(u) || c == '_' || (!first && (std::isdigit(u) || c == '-'));
  };
  for (auto open = s.find('{'); open != std::string_view::npos; open = s.find('{', open + 1)) {
    std::size_t end = open + 1;
    while (end < s.size() && word(s[end], end == open + 1))
      ++end;
    if (end == open + 1 || end >= s.size() || s[end] != '}')
      continue; // "{", "{}", "{ x }": not a placeholder's form, kept as written
    const std::string_view name = s.substr(open, end - open + 1);
    if (name != "{bin}" && name != "{matrix_dir}")
      return std::string(name);
  }
  return std::nullopt;
}

} // namespace cuparity::matrix_detail
