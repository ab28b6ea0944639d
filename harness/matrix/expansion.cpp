// Cells from [axes], [[exclude]] and [[include]] (GitHub Actions semantics), with their ids.
#include "harness/matrix/expansion.hpp"

#include "harness/matrix/limits.hpp"
#include "harness/matrix/package_keys.hpp"
#include "harness/matrix/text.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace cuparity::matrix_detail {
namespace {

struct axis {
  std::string var;
  std::vector<env_value> values;
};

/// A cell during expansion: where it came from (the [axes] table, or the [[include]] that added
/// it) and, once labelled, where its label was given; messages about it point there.
struct labelled_env {
  cell_env env;
  std::string label;
  source_position origin;
  std::optional<source_position> label_at;
};

/// An axis as written: its key and its array, before the values are read.
using axis_array = std::pair<const toml::key *, const toml::array *>;

bool is_axis(const std::vector<std::string> &axes, const std::string &var) {
  return std::find(axes.begin(), axes.end(), var) != axes.end();
}

/// The axis' values, each once (a set, not a scan: an axis may be long).
axis read_axis(const toml_reader &r, const toml::key &k, const toml::array &values) {
  axis out{std::string(k.str()), {}};
  std::set<env_value> seen;
  for (const auto &e : values) {
    auto val = out.var == package_axis ? package_value(r, e) : variable_value(r, e, out.var);
    if (!seen.insert(val).second)
      r.error(e, "axis " + out.var + " lists a value twice");
    out.values.push_back(std::move(val));
  }
  return out;
}

/// The arrays of [axes], type-checked, in file order.
std::vector<axis_array> axis_arrays(const toml_reader &r, const toml::table &t) {
  std::vector<axis_array> out;
  for (const auto &[k, v] : toml_reader::in_file_order(t)) {
    const std::string var(k->str());
    if (var != package_axis) // requirement lists, which the runner installs (package_keys.hpp)
      check_variable_name(r, *k, var);
    const toml::array *values = v->as_array();
    if (!values)
      r.error(*v, "axis " + var + " must be an array of values, not " + toml_reader::type_name(*v));
    if (values->empty())
      r.error(*v, "axis " + var + " has no values: the product would be empty");
    out.emplace_back(k, values);
  }
  return out;
}

/// Refuses a product over cells_max before it is built (its size computed without overflow),
/// naming each axis with its number of values; and more axes than variables_max.
void check_product_size(const toml_reader &r, const toml::table &t,
                        const std::vector<axis_array> &axes) {
  if (axes.size() > limits::variables_max)
    r.error(t, "[axes] has " + std::to_string(axes.size()) + " axes; a matrix controls at most " +
                   std::to_string(limits::variables_max) + " variables");
  std::size_t cells = 1;
  bool overflow = false;
  std::string sizes;
  for (const auto &[k, values] : axes) {
    overflow = overflow || __builtin_mul_overflow(cells, values->size(), &cells);
    sizes +=
        (sizes.empty() ? "" : " x ") + std::string(k->str()) + " " + std::to_string(values->size());
  }
  if (overflow || cells > limits::cells_max)
    r.error(t, "the axes make " + (overflow ? "more than 2^64" : std::to_string(cells)) +
                   " cells (" + sizes + " values); the most is " +
                   std::to_string(limits::cells_max));
}

/// The axes in file order.
std::vector<axis> read_axes(const toml_reader &r, const toml::table *t) {
  std::vector<axis> out;
  if (!t)
    return out;
  const auto arrays = axis_arrays(r, *t);
  check_product_size(r, *t, arrays);
  for (const auto &[k, values] : arrays)
    out.push_back(read_axis(r, *k, *values));
  return out;
}

/// The cartesian product, first axis varying slowest; no axes, no cells.
std::vector<cell_env> product_of(const std::vector<axis> &axes) {
  if (axes.empty())
    return {};
  std::vector<cell_env> product{cell_env{}};
  for (const auto &[var, vals] : axes) {
    std::vector<cell_env> next;
    for (const auto &partial : product)
      for (const auto &v : vals) {
        auto e = partial;
        e[var] = v;
        next.push_back(std::move(e));
      }
    product = std::move(next);
  }
  return product;
}

/// Drops every cell matching all the variables of an [[exclude]] (partial match).
void apply_exclude(const toml_reader &r, const toml::table &t, const std::vector<std::string> &axes,
                   std::vector<cell_env> &product) {
  rule x = read_rule(r, t, "[[exclude]]", {});
  if (x.env.empty())
    r.error(t, "an [[exclude]] rule with no variables would drop every cell");
  for (const auto &[k, v] : x.env)
    if (!is_axis(axes, k))
      r.error(t, "[[exclude]] names " + k + ", which is not an axis");
  auto before = product.size();
  std::erase_if(product, [&](const cell_env &e) { return env_matches(x.env, e); });
  if (product.size() == before)
    r.error(t, "this [[exclude]] rule matches no cell");
}

/// Whether the cell's axis values agree with every axis value of the rule.
bool compatible(const rule &inc, const std::vector<std::string> &axes, const cell_env &env) {
  for (const auto &[k, v] : inc.env)
    if (is_axis(axes, k)) {
      auto it = env.find(k);
      if (it == env.end() || it->second != v)
        return false;
    }
  return true;
}

/// Refuses a label that would replace another: the first would vanish with its expectations.
void check_relabel(const toml_reader &r, const toml::table &t, const rule &inc,
                   const labelled_env &cell) {
  if (inc.label.empty() || cell.label.empty() || cell.label == inc.label)
    return;
  r.error(t, "this [[include]] labels " + in_quotes(inc.label) + " the cell the [[include]] at " +
                 cell.label_at->text() + " labelled " + in_quotes(cell.label) +
                 ": one cell cannot have two labels (give the rules different values, or drop "
                 "one label)");
}

/// Extends every cell whose axis values agree with the rule's (without overwriting them) and
/// labels it; whether any did.
bool extend_compatible(const toml_reader &r, const toml::table &t, const rule &inc,
                       const std::vector<std::string> &axes, std::vector<labelled_env> &cells) {
  // A rule of axis values alone that matches an existing cell adds nothing (but may label it);
  // otherwise its other variables extend the cell.
  const bool adds = std::any_of(inc.env.begin(), inc.env.end(),
                                [&](const auto &kv) { return !is_axis(axes, kv.first); });
  bool extended = false;
  for (auto &cell : cells) {
    if (!compatible(inc, axes, cell.env))
      continue;
    check_relabel(r, t, inc, cell);
    if (adds)
      for (const auto &[k, v] : inc.env)
        cell.env[k] = v;
    if (!inc.label.empty()) {
      cell.label = inc.label;
      cell.label_at = inc.where;
    }
    extended = true;
  }
  return extended;
}

/// Counts the variables named so far (axes first), refusing one beyond variables_max at `t`.
void add_variables(const toml_reader &r, const toml::table &t, const rule &inc,
                   std::map<std::string, source_position> &named) {
  for (const auto &[k, v] : inc.env)
    if (named.try_emplace(k, inc.where).second && named.size() > limits::variables_max)
      r.error(t, "this [[include]] names " + k + ", variable number " +
                     std::to_string(named.size()) + " of the matrix; the most is " +
                     std::to_string(limits::variables_max));
}

/// After exclude, never excluded: extends compatible cells, or adds a new cell when none is.
void apply_include(const read_context &ctx, const toml::table &t,
                   const std::vector<std::string> &axes, std::vector<labelled_env> &cells,
                   std::map<std::string, source_position> &named) {
  const auto &keys = include_keys();
  rule inc = read_rule(ctx.reader, t, keys.section, keys.names());
  apply_rows(ctx, t, keys, inc);
  if (inc.env.empty())
    ctx.reader.error(t, "an [[include]] rule needs at least one variable");
  add_variables(ctx.reader, t, inc, named);
  if (extend_compatible(ctx.reader, t, inc, axes, cells))
    return;
  if (cells.size() >= limits::cells_max)
    ctx.reader.error(t, "this [[include]] adds a cell beyond the most a matrix may have (" +
                            std::to_string(limits::cells_max) + ")");
  std::optional<source_position> label_at;
  if (!inc.label.empty())
    label_at = inc.where;
  cells.push_back({inc.env, inc.label, inc.where, label_at});
}

/// The variables the matrix controls: axes first, then others in first-seen order (cell by cell,
/// each cell's in name order: cell ids depend on it).
std::vector<std::string> controlled_variables(const std::vector<std::string> &axes,
                                              const std::vector<labelled_env> &cells) {
  std::vector<std::string> out = axes;
  std::set<std::string> seen(axes.begin(), axes.end());
  for (const auto &c : cells)
    for (const auto &[k, v] : c.env)
      if (seen.insert(k).second)
        out.push_back(k);
  return out;
}

/// Refuses a cell whose variables would not fit in a process's environment.
void check_env_size(const labelled_env &c, const std::string &id) {
  std::size_t bytes = 0;
  for (const auto &[k, v] : c.env)
    if (v)
      bytes += k.size() + v->size() + 2; // "NAME=value\0"
  if (bytes > limits::cell_env_max_bytes)
    throw matrix_error(c.origin.text() + ": the variables of cell " + in_quotes(id) + " take " +
                       std::to_string(bytes) + " bytes of environment; the most is " +
                       std::to_string(limits::cell_env_max_bytes));
}

/// Refuses a second cell with the id of an earlier one, naming where each got it.
[[noreturn]] void duplicate_id(const std::string &file, const labelled_env &first,
                               const labelled_env &second, const std::string &id) {
  const source_position a = first.label_at.value_or(first.origin),
                        b = second.label_at.value_or(second.origin);
  if (first.label_at && second.label_at && a.text() == b.text())
    throw matrix_error(b.text() + ": this [[include]] labels several cells " + in_quotes(id) +
                       ": a label names one cell (give it the values of one cell)");
  throw matrix_error((b.line ? b.text() : file + ":1:1") + ": two cells have the id " +
                     in_quotes(id) + " (the other from " + a.text() +
                     "; give the [[include]] a distinct label)");
}

/// The cells, each naming every controlled variable (unset where it does not say), so the runner
/// can clean them; ids must be unique.
void make_cells(const toml_reader &r, const std::vector<labelled_env> &cells, matrix &m) {
  m.variables = controlled_variables(m.axes, cells);
  std::map<std::string, std::size_t> ids;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const labelled_env &from = cells[i];
    cell c;
    for (const auto &v : m.variables) {
      auto it = from.env.find(v);
      c.env[v] = it == from.env.end() ? std::nullopt : it->second;
    }
    c.label = from.label;
    c.id = from.label.empty() ? cell_id(m.variables, from.env) : from.label;
    if (auto [it, fresh] = ids.emplace(c.id, i); !fresh)
      duplicate_id(r.file(), cells[it->second], from, c.id);
    check_env_size(from, c.id);
    m.cells.push_back(std::move(c));
  }
}

} // namespace

void expand_cells(const read_context &ctx, const document_sections &s, matrix &m) {
  const std::vector<axis> axes = read_axes(ctx.reader, s.axes);
  for (const auto &a : axes)
    m.axes.push_back(a.var);
  // Where each variable was first named: its axis key, else the [[include]] naming it.
  std::map<std::string, source_position> &named = m.variable_at;
  if (s.axes)
    for (const auto &[k, v] : toml_reader::in_file_order(*s.axes))
      named.try_emplace(std::string(k->str()), ctx.reader.at(k->source()));
  std::vector<cell_env> product = product_of(axes);
  for (const toml::table *t : s.exclude)
    apply_exclude(ctx.reader, *t, m.axes, product);
  const source_position axes_at = s.axes ? ctx.reader.at(*s.axes) : source_position{};
  std::vector<labelled_env> cells;
  for (auto &e : product)
    cells.push_back({std::move(e), "", axes_at, std::nullopt});
  for (const toml::table *t : s.include)
    apply_include(ctx, *t, m.axes, cells, named);
  if (cells.empty())
    throw matrix_error(ctx.reader.file() +
                       ":1:1: the matrix has no cells (no axes, or every cell excluded, "
                       "and no [[include]])");
  make_cells(ctx.reader, cells, m);
  read_packages(ctx, s, m);
  check_reference(m);
}

/// Known changes are changes against the reference: without one there are none, and an entry's
/// cell must be one of those compared with a reference cell.
void check_known_changes(const matrix &m) {
  if (!m.known_changes_path)
    return;
  if (!m.reference)
    throw matrix_error(m.known_changes_where.text() +
                       ": known_changes: the matrix names no reference to change against");
  const auto pairs = reference_pairs(m);
  for (const auto &k : m.known_changes)
    if (k.cell && std::none_of(pairs.begin(), pairs.end(),
                               [&](const reference_pair &p) { return p.c->id == *k.cell; }))
      throw matrix_error(k.where.text() + ": cell " + in_quotes(*k.cell) +
                         " is no cell of this matrix that has a reference cell");
}

/// An inert variable the cells do not have is a misspelling of its own.
void check_inert(const matrix &m) {
  for (const auto &[var, reason] : m.inert)
    if (!m.variable_at.count(var))
      throw matrix_error(m.inert_where.text() + ": inert: " + in_quotes(var) +
                         " is no variable of this matrix's cells");
}

void check_reference(const matrix &m) {
  check_known_changes(m);
  check_inert(m);
  if (!m.reference)
    return;
  const std::string at = m.reference->where.text() + ": reference: ";
  for (const auto &[var, value] : m.reference->values)
    if (std::find(m.variables.begin(), m.variables.end(), var) == m.variables.end())
      throw matrix_error(at + in_quotes(var) + " is no variable of this matrix's cells");
  if (reference_pairs(m).empty())
    throw matrix_error(at + "no cell has a reference cell (one with these values and every " +
                       "other variable equal)");
}

} // namespace cuparity::matrix_detail

namespace cuparity {

std::vector<reference_pair> reference_pairs(const matrix &m) {
  std::vector<reference_pair> out;
  if (!m.reference)
    return out;
  const cell_env &wanted = m.reference->values;
  // A reference cell finds no partner: with the reference values set it is itself, and no two
  // cells have the same variables.
  for (const cell &c : m.cells) {
    cell_env as_reference = c.env;
    for (const auto &[var, value] : wanted)
      as_reference[var] = value;
    for (const cell &r : m.cells)
      if (&r != &c && r.env == as_reference) {
        out.push_back({&c, &r});
        break;
      }
  }
  return out;
}

} // namespace cuparity
