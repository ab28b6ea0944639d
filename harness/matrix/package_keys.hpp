// The packages axis: requirement lists as cell values, and the [packages] table that installs them.
#pragma once

#include "harness/matrix/matrix_keys.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace cuparity::matrix_detail {

/// The axis key whose values are requirement lists (lowercase: it is no environment variable).
inline constexpr std::string_view package_axis = "packages";

/// A value of the packages axis: a requirement ("cuda-bindings==13.3.1"), an array of them, or
/// false (nothing installed: the site's own packages). Requirements lose their blanks and are
/// joined by one space, the form the cell's env map, its id and the reference hold.
[[nodiscard]] env_value package_value(const toml_reader &r, const toml::node &n);

/// The requirements of a stored value, in order.
[[nodiscard]] std::vector<std::string> package_requirements(const std::string &value);

[[nodiscard]] const key_table<package_settings> &package_keys();

/// Reads [packages] (m.packages) and checks it against the cells: the table needs the axis (or an
/// [[include]] naming `packages`), and a packages value without the table gets the defaults.
void read_packages(const read_context &ctx, const document_sections &s, matrix &m);

} // namespace cuparity::matrix_detail
