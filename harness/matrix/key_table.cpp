// Key tables: reading one key's value through its row's type and bounds, and describing types.
#include "harness/matrix/key_table.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace cuparity::matrix_detail {
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
