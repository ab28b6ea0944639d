// TOML value readers with positions: typed reads that throw matrix_error at file:line:column.
#include "harness/matrix/toml_reader.hpp"

#include "harness/matrix/text.hpp"

#include <algorithm>
#include <filesystem>

namespace cuparity::matrix_detail {

toml_reader::toml_reader(std::string file) : m_file(std::move(file)) {
  m_dir = std::filesystem::absolute(m_file).parent_path().string();
}

source_position toml_reader::at(const toml::source_region &r) const {
  return {m_file, static_cast<int>(r.begin.line), static_cast<int>(r.begin.column)};
}

void toml_reader::error(const toml::node &n, const std::string &what) const {
  throw matrix_error(at(n).text() + ": " + what);
}

void toml_reader::error(const toml::key &k, const std::string &what) const {
  throw matrix_error(at(k.source()).text() + ": " + what);
}

std::string join(const std::vector<std::string_view> &names) {
  std::string list;
  for (std::string_view n : names)
    list += std::string(list.empty() ? "" : ", ") + std::string(n);
  return list;
}

void toml_reader::check_keys(const toml::table &t, std::string_view where,
                             const std::vector<std::string_view> &known) const {
  for (const auto &[k, v] : t)
    if (std::find(known.begin(), known.end(), k.str()) == known.end())
      error(k, "unknown key " + in_quotes(k.str()) + " in " + std::string(where) +
                   " (known: " + join(known) + ")");
}

std::string toml_reader::string_of(const toml::node &n, const std::string &what) const {
  const auto s = n.value<std::string>();
  if (!s || !n.is_string())
    error(n, what + " must be a string, not " + type_name(n));
  // Every string ends up in a C string somewhere (an environment, a glob, a path), where a NUL
  // would silently cut it short.
  if (s->find('\0') != std::string::npos)
    error(n, what + " must not contain a NUL character: " + in_quotes(*s));
  return *s;
}

bool toml_reader::bool_of(const toml::node &n, const std::string &what) const {
  if (n.is_boolean())
    return *n.value<bool>();
  error(n, what + " must be true or false, not " + type_name(n));
}

double toml_reader::number_of(const toml::node &n, const std::string &what) const {
  if (const auto *i = n.as_integer())
    return static_cast<double>(i->get());
  if (const auto *f = n.as_floating_point())
    return f->get();
  error(n, what + " must be a number, not " + type_name(n));
}

std::vector<std::string> toml_reader::strings_of(const toml::node &n,
                                                 const std::string &what) const {
  if (n.is_string())
    return {string_of(n, what)};
  const toml::array *a = n.as_array();
  if (!a)
    error(n, what + " must be a string or an array of strings, not " + type_name(n));
  std::vector<std::string> out;
  for (const auto &e : *a)
    out.push_back(string_of(e, what + " element"));
  return out;
}

const toml::table &toml_reader::table_of(const toml::node &n, const std::string &what) const {
  if (const auto *t = n.as_table())
    return *t;
  error(n, what + " must be a table, not " + type_name(n));
}

std::vector<const toml::table *> toml_reader::tables_of(const toml::node &n,
                                                        const std::string &what) const {
  const toml::array *a = n.as_array();
  if (!a)
    error(n, what + " must be an array of tables ([[" + what + "]]), not " + type_name(n));
  std::vector<const toml::table *> out;
  for (const auto &e : *a)
    out.push_back(&table_of(e, what + " element"));
  return out;
}

std::vector<std::pair<const toml::key *, const toml::node *>>
toml_reader::in_file_order(const toml::table &t) {
  std::vector<std::pair<const toml::key *, const toml::node *>> out;
  for (const auto &[k, v] : t)
    out.emplace_back(&k, &v);
  std::sort(out.begin(), out.end(), [](const auto &a, const auto &b) {
    const auto &x = a.first->source().begin, &y = b.first->source().begin;
    return x.line != y.line ? x.line < y.line : x.column < y.column;
  });
  return out;
}

std::string toml_reader::type_name(const toml::node &n) {
  switch (n.type()) {
  case toml::node_type::string:
    return "a string";
  case toml::node_type::integer:
    return "an integer";
  case toml::node_type::floating_point:
    return "a float";
  case toml::node_type::boolean:
    return "a boolean";
  case toml::node_type::array:
    return "an array";
  case toml::node_type::table:
    return "a table";
  default:
    return "a date or time";
  }
}

} // namespace cuparity::matrix_detail
