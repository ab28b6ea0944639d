// Reading a matrix's TOML: typed reads at file:line:column, and one key's value through its row's
// type and bounds.
#include "harness/matrix/key_table.hpp"

#include "harness/matrix/text.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
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

namespace {

/// The shortest text that reads back as `d`: "2.5", "1e+30", "inf", "nan".
std::string number_text(double d) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(d);
}

std::string quoted_choices(const std::vector<std::string_view> &choices) {
  std::string out;
  for (std::size_t i = 0; i < choices.size(); ++i)
    out += std::string(i == 0                    ? ""
                       : i + 1 == choices.size() ? " or "
                                                 : ", ") +
           "\"" + std::string(choices[i]) + "\"";
  return out;
}

[[noreturn]] void out_of_bounds(const toml_reader &r, const toml::node &n, const std::string &key,
                                const std::string &what) {
  r.error(n, key + ": " + what);
}

std::string choice_of(const toml_reader &r, const toml::node &n, const std::string &key,
                      const value_type &t) {
  std::string s = r.string_of(n, key);
  if (std::find(t.choices.begin(), t.choices.end(), s) == t.choices.end())
    r.error(n, key + " must be " + quoted_choices(t.choices));
  return s;
}

/// A number within the type's bounds; never inf or nan.
double bounded_number(const toml_reader &r, const toml::node &n, const std::string &key,
                      const value_type &t) {
  const double d = r.number_of(n, key);
  const std::string text = number_text(d);
  if (!std::isfinite(d))
    out_of_bounds(r, n, key, "must be a finite number, not " + text);
  if (t.min_open && d <= t.min)
    out_of_bounds(r, n, key, "must be greater than " + number_text(t.min) + ", not " + text);
  if (!t.min_open && d < t.min)
    out_of_bounds(r, n, key, "must be at least " + number_text(t.min) + ", not " + text);
  if (d > t.max)
    out_of_bounds(r, n, key, "must be at most " + number_text(t.max) + ", not " + text);
  return d;
}

/// An integer within the type's bounds. A float is taken when it is a whole number (these keys
/// took any number before, so `rounds = 5.0` keeps working); 2.5 is refused, not truncated.
long long bounded_integer(const toml_reader &r, const toml::node &n, const std::string &key,
                          const value_type &t) {
  const double d = r.number_of(n, key);
  long long i = 0;
  std::string text;
  if (const auto *integer = n.as_integer()) {
    i = integer->get();
    text = std::to_string(i);
  } else {
    text = number_text(d);
    if (!std::isfinite(d))
      out_of_bounds(r, n, key, "must be a finite number, not " + text);
    if (std::trunc(d) != d)
      out_of_bounds(r, n, key, "must be a whole number, not " + text);
    // Outside [-2^63, 2^63) the cast below is undefined: such floats are beyond any bound.
    if (d < -0x1p63 || d >= 0x1p63)
      out_of_bounds(
          r, n, key,
          "must be at " +
              (d < 0 ? "least " + std::to_string(t.int_min) : "most " + std::to_string(t.int_max)) +
              ", not " + text);
    i = static_cast<long long>(d);
  }
  if (i < t.int_min)
    out_of_bounds(r, n, key, "must be at least " + std::to_string(t.int_min) + ", not " + text);
  if (i > t.int_max)
    out_of_bounds(r, n, key, "must be at most " + std::to_string(t.int_max) + ", not " + text);
  return i;
}

/// A table of bounded numbers; their keys are free ("latency.thresholds.<probe>").
std::map<std::string, double> bounded_numbers(const toml_reader &r, const toml::node &n,
                                              const std::string &key, const value_type &t) {
  std::map<std::string, double> out;
  for (const auto &[k, v] : r.table_of(n, key)) {
    (void)r.number_of(v, key + " value"); // the type first, named as before
    out[std::string(k.str())] = bounded_number(r, v, key + "." + std::string(k.str()), t);
  }
  return out;
}

value_type of_kind(value_kind kind) {
  value_type t;
  t.kind = kind;
  return t;
}

} // namespace

value_type value_type::needed() const {
  value_type t = *this;
  t.required = true;
  return t;
}

std::string value_type::name() const {
  switch (kind) {
  case value_kind::text:
    return "string";
  case value_kind::choice:
    return quoted_choices(choices);
  case value_kind::texts:
    return "string or array of strings";
  case value_kind::flag:
    return "boolean";
  case value_kind::integer:
    return "integer";
  case value_kind::number:
    return "number";
  case value_kind::table:
    return "table";
  case value_kind::tables:
    return "array of tables";
  case value_kind::numbers:
    return "table of numbers";
  }
  return "?";
}

std::string value_type::bounds() const {
  const value_type unbounded;
  std::vector<std::string> parts;
  if (kind == value_kind::integer) {
    if (int_min != unbounded.int_min)
      parts.push_back(">= " + std::to_string(int_min));
    if (int_max != unbounded.int_max)
      parts.push_back("<= " + std::to_string(int_max));
  } else if (kind == value_kind::number || kind == value_kind::numbers) {
    if (min != unbounded.min)
      parts.push_back((min_open ? "> " : ">= ") + number_text(min));
    if (max != unbounded.max)
      parts.push_back("<= " + number_text(max));
  }
  std::string out;
  for (const auto &p : parts)
    out += (out.empty() ? "" : ", ") + p;
  return out;
}

value_type text() {
  return of_kind(value_kind::text);
}
value_type texts() {
  return of_kind(value_kind::texts);
}
value_type flag() {
  return of_kind(value_kind::flag);
}
value_type table() {
  return of_kind(value_kind::table);
}
value_type tables() {
  return of_kind(value_kind::tables);
}

value_type choice(std::vector<std::string_view> values) {
  value_type t = of_kind(value_kind::choice);
  t.choices = std::move(values);
  return t;
}

value_type integer_in(long long min, long long max) {
  value_type t = of_kind(value_kind::integer);
  t.int_min = min;
  t.int_max = max;
  return t;
}

value_type number_above(double min, double max) {
  value_type t = number_in(min, max);
  t.min_open = true;
  return t;
}

value_type number_in(double min, double max) {
  value_type t = of_kind(value_kind::number);
  t.min = min;
  t.max = max;
  return t;
}

value_type numbers_above(double min, double max) {
  value_type t = number_above(min, max);
  t.kind = value_kind::numbers;
  return t;
}

value_type numbers_in(double min, double max) {
  value_type t = number_in(min, max);
  t.kind = value_kind::numbers;
  return t;
}

std::string qualified_key(std::string_view prefix, std::string_view name, value_kind kind) {
  if (prefix.empty())
    return kind == value_kind::table ? "[" + std::string(name) + "]" : std::string(name);
  return std::string(prefix) + "." + std::string(name);
}

key_value read_value(const read_context &ctx, const toml::node &n, std::string key,
                     const value_type &type) {
  const toml_reader &r = ctx.reader;
  auto data = [&]() -> value_data {
    switch (type.kind) {
    case value_kind::text:
      return r.string_of(n, key);
    case value_kind::choice:
      return choice_of(r, n, key, type);
    case value_kind::texts:
      return r.strings_of(n, key);
    case value_kind::flag:
      return r.bool_of(n, key);
    case value_kind::integer:
      return bounded_integer(r, n, key, type);
    case value_kind::number:
      return bounded_number(r, n, key, type);
    case value_kind::table:
      return &r.table_of(n, key);
    case value_kind::tables:
      return r.tables_of(n, key);
    case value_kind::numbers:
      return bounded_numbers(r, n, key, type);
    }
    return std::monostate{};
  }();
  return key_value(ctx, n, std::move(key), std::move(data));
}

void check_required_keys(const toml_reader &r, const toml::table &t, std::string_view section,
                         const std::vector<std::string_view> &required) {
  std::string list;
  bool missing = false;
  for (std::size_t i = 0; i < required.size(); ++i) {
    missing = missing || !t.contains(required[i]);
    list += std::string(i == 0                     ? ""
                        : i + 1 == required.size() ? " and "
                                                   : ", ") +
            std::string(required[i]);
  }
  if (missing)
    r.error(t, std::string(section) + " needs " + list);
}

} // namespace cuparity::matrix_detail
