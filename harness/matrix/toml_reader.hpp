// TOML value readers with positions: typed reads that throw matrix_error at file:line:column.
#pragma once

#include "harness/matrix/matrix.hpp"

#include <string>
#include <string_view>
#include <toml++/toml.h>
#include <utility>
#include <vector>

namespace cuparity::matrix_detail {

class toml_reader {
public:
  explicit toml_reader(std::string file);

  [[nodiscard]] source_position at(const toml::source_region &r) const;
  [[nodiscard]] source_position at(const toml::node &n) const { return at(n.source()); }

  [[noreturn]] void error(const toml::node &n, const std::string &what) const;
  [[noreturn]] void error(const toml::key &k, const std::string &what) const;

  /// Only `known` keys may appear in `t` ("unknown key 'x' in <where> (known: a, b)").
  void check_keys(const toml::table &t, std::string_view where,
                  const std::vector<std::string_view> &known) const;

  [[nodiscard]] std::string string_of(const toml::node &n, const std::string &what) const;
  [[nodiscard]] bool bool_of(const toml::node &n, const std::string &what) const;
  /// An integer or a float, as a double (any value, inf and nan included).
  [[nodiscard]] double number_of(const toml::node &n, const std::string &what) const;
  /// A string, or an array of strings.
  [[nodiscard]] std::vector<std::string> strings_of(const toml::node &n,
                                                    const std::string &what) const;
  [[nodiscard]] const toml::table &table_of(const toml::node &n, const std::string &what) const;
  /// An array of tables ([[what]]).
  [[nodiscard]] std::vector<const toml::table *> tables_of(const toml::node &n,
                                                           const std::string &what) const;

  /// A table's entries in file order (toml++ keeps tables sorted by key).
  [[nodiscard]] static std::vector<std::pair<const toml::key *, const toml::node *>>
  in_file_order(const toml::table &t);
  /// "a string", "an integer", ... for messages.
  [[nodiscard]] static std::string type_name(const toml::node &n);

  [[nodiscard]] const std::string &file() const { return m_file; }
  /// The matrix file's directory, absolute.
  [[nodiscard]] const std::string &dir() const { return m_dir; }

private:
  std::string m_file;
  std::string m_dir;
};

/// "a, b, c".
[[nodiscard]] std::string join(const std::vector<std::string_view> &names);

} // namespace cuparity::matrix_detail
