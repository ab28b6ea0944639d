// Placeholders in matrix values: {bin} (the executable's directory), {matrix_dir}.
#include "harness/matrix/placeholders.hpp"

#include "harness/config/config.hpp"

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

} // namespace cuparity::matrix_detail
