// Reading a matrix's TOML: typed reads with file:line:column positions (toml_reader), and key
// tables: a section's keys as rows (name, type with bounds, target, doc), read through them.
#pragma once

#include "harness/matrix/matrix.hpp"

#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <toml++/toml.h>
#include <type_traits>
#include <utility>
#include <variant>
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

enum class value_kind { text, choice, texts, flag, integer, number, table, tables, numbers };

/// A key's type and, for integers and numbers, its bounds (inclusive, unless min_open). Numbers
/// are always finite.
struct value_type {
  value_kind kind = value_kind::text;
  std::vector<std::string_view> choices;                     ///< choice
  long long int_min = std::numeric_limits<long long>::min(), ///< integer
      int_max = std::numeric_limits<long long>::max();
  double min = -std::numeric_limits<double>::max(), ///< number, numbers
      max = std::numeric_limits<double>::max();
  bool min_open = false;
  bool required = false;

  /// The same type, for a key that must be present.
  [[nodiscard]] value_type needed() const;
  [[nodiscard]] std::string name() const;   ///< "integer", "string or array of strings", ...
  [[nodiscard]] std::string bounds() const; ///< ">= 1, <= 2147483647"; empty when unbounded
};

[[nodiscard]] value_type text();                                       ///< a string
[[nodiscard]] value_type choice(std::vector<std::string_view> values); ///< one of these strings
[[nodiscard]] value_type texts(); ///< a string or an array of strings
[[nodiscard]] value_type flag();  ///< true or false
/// An integer in [min, max]; a float is taken only when it is a whole number.
[[nodiscard]] value_type integer_in(long long min, long long max);
[[nodiscard]] value_type number_above(double min, double max); ///< a number in (min, max]
[[nodiscard]] value_type number_in(double min, double max);    ///< a number in [min, max]
[[nodiscard]] value_type table();                              ///< a table
[[nodiscard]] value_type tables();                             ///< an array of tables
/// A table of numbers in (min, max].
[[nodiscard]] value_type numbers_above(double min, double max);
[[nodiscard]] value_type numbers_in(double min, double max);

/// What setters may need besides the value.
struct read_context {
  const toml_reader &reader;
  const name_check &known_case;
  const name_check &known_probe;
};

using value_data = std::variant<std::monostate, std::string, std::vector<std::string>, bool,
                                long long, double, const toml::table *,
                                std::vector<const toml::table *>, std::map<std::string, double>>;

template <class> inline constexpr bool is_optional = false;
template <class V> inline constexpr bool is_optional<std::optional<V>> = true;

/// A key's value once its row's type and bounds were checked, with what a setter needs to check
/// more and to report where.
class key_value {
public:
  key_value(const read_context &ctx, const toml::node &node, std::string key, value_data data)
      : m_ctx(ctx), m_node(node), m_key(std::move(key)), m_data(std::move(data)) {}

  [[nodiscard]] const read_context &context() const { return m_ctx; }
  [[nodiscard]] const toml::node &node() const { return m_node; }
  /// As messages name it: "latency.rounds".
  [[nodiscard]] const std::string &key() const { return m_key; }
  /// Throws "file:line:column: <key>: <what>" at the value.
  [[noreturn]] void fail(const std::string &what) const {
    m_ctx.reader.error(m_node, m_key + ": " + what);
  }

  /// The value as a field of type F (std::optional<V> takes a V; integers must fit F).
  template <class F> [[nodiscard]] F get() const {
    if constexpr (is_optional<F>) {
      return F(get<typename F::value_type>());
    } else if constexpr (std::is_integral_v<F> && !std::is_same_v<F, bool>) {
      const long long n = std::get<long long>(m_data);
      if (!std::in_range<F>(n)) // a row whose bounds are wider than its field: still refused
        fail("must be from " + std::to_string(std::numeric_limits<F>::min()) + " to " +
             std::to_string(std::numeric_limits<F>::max()) + ", not " + std::to_string(n));
      return static_cast<F>(n);
    } else {
      return std::get<F>(m_data);
    }
  }

private:
  const read_context &m_ctx;
  const toml::node &m_node;
  std::string m_key;
  value_data m_data;
};

/// One key: name, type (with bounds), target, one line of doc.
template <class T> struct key_row {
  std::string_view name;
  value_type type;
  void (*set)(T &, const key_value &);
  std::string_view doc;
};

/// A section's keys, read in row order.
template <class T> struct key_table {
  std::string_view section; ///< as messages name it: "[latency]"
  std::string_view prefix;  ///< of its keys in messages: "latency" for "latency.rounds"
  std::vector<key_row<T>> rows;

  [[nodiscard]] std::vector<std::string_view> names() const {
    std::vector<std::string_view> out;
    for (const auto &r : rows)
      out.push_back(r.name);
    return out;
  }
  [[nodiscard]] std::vector<std::string_view> required_names() const {
    std::vector<std::string_view> out;
    for (const auto &r : rows)
      if (r.type.required)
        out.push_back(r.name);
    return out;
  }
};

template <class C, class F> C owner_of(F C::*);

/// The setter that stores a key's value in `Member`: assign<&latency_settings::rounds>.
template <auto Member> void assign(decltype(owner_of(Member)) &out, const key_value &v) {
  using field = std::remove_cvref_t<decltype(out.*Member)>;
  out.*Member = v.get<field>();
}

/// How messages name a key: "latency.rounds"; a section's own tables are "[matrix]".
[[nodiscard]] std::string qualified_key(std::string_view prefix, std::string_view name,
                                        value_kind kind);

/// Reads `n` as `type` (type first, then bounds), or throws at its position.
[[nodiscard]] key_value read_value(const read_context &ctx, const toml::node &n, std::string key,
                                   const value_type &type);

/// Throws at `t` unless it has every `required` key ("<section> needs a, b and c").
void check_required_keys(const toml_reader &r, const toml::table &t, std::string_view section,
                         const std::vector<std::string_view> &required);

/// Reads the keys of `t` that `keys` has a row for, in row order, into `out`.
template <class T>
void apply_rows(const read_context &ctx, const toml::table &t, const key_table<T> &keys, T &out) {
  for (const auto &row : keys.rows)
    if (const toml::node *n = t.get(row.name))
      row.set(out,
              read_value(ctx, *n, qualified_key(keys.prefix, row.name, row.type.kind), row.type));
}

/// Reads a section: no unknown keys, every required one, then the rows.
template <class T>
void read_keys(const read_context &ctx, const toml::table &t, const key_table<T> &keys, T &out) {
  ctx.reader.check_keys(t, keys.section, keys.names());
  check_required_keys(ctx.reader, t, keys.section, keys.required_names());
  apply_rows(ctx, t, keys, out);
}

/// The table as the public API describes it.
template <class T> [[nodiscard]] matrix_section_doc doc_of(const key_table<T> &keys) {
  matrix_section_doc out{std::string(keys.section), std::string(keys.prefix), {}};
  for (const auto &r : keys.rows) {
    matrix_key_doc k{std::string(r.name), r.type.name(),     r.type.bounds(), {}, {}, false,
                     r.type.required,     std::string(r.doc)};
    const value_type unbounded;
    if (r.type.kind == value_kind::integer) {
      if (r.type.int_min != unbounded.int_min)
        k.min = static_cast<double>(r.type.int_min);
      if (r.type.int_max != unbounded.int_max)
        k.max = static_cast<double>(r.type.int_max);
    } else if (r.type.kind == value_kind::number || r.type.kind == value_kind::numbers) {
      if (r.type.min != unbounded.min)
        k.min = r.type.min;
      if (r.type.max != unbounded.max)
        k.max = r.type.max;
      k.min_exclusive = r.type.min_open;
    }
    out.keys.push_back(std::move(k));
  }
  return out;
}

} // namespace cuparity::matrix_detail
