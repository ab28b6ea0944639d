// Matrix variables: names, values (string, integer or false = unset), rule tables, cell ids.
#pragma once

#include "harness/matrix/key_table.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace cuparity::matrix_detail {

/// An [[include]], [[exclude]] or expect.when table: variables, plus an include's label.
struct rule {
  cell_env env;
  std::string label;
  source_position where;
};

/// Throws at `k` unless `name` is UPPER_CASE.
void check_variable_name(const toml_reader &r, const toml::key &k, const std::string &name);

/// A variable's value: a string (placeholders substituted), an integer (in decimal), or false
/// (unset).
[[nodiscard]] env_value variable_value(const toml_reader &r, const toml::node &n,
                                       const std::string &var);

/// A rule table's variables (UPPER_CASE keys, in file order); the lowercase keys must be in
/// `lowercase_keys` and are left to the caller.
[[nodiscard]] rule read_rule(const toml_reader &r, const toml::table &t, std::string_view what,
                             const std::vector<std::string_view> &lowercase_keys);

/// "nv=1,numba_ptds=0,cp_ptds=-" over `vars` ("default" when none is set).
[[nodiscard]] std::string cell_id(const std::vector<std::string> &vars, const cell_env &env);

} // namespace cuparity::matrix_detail
