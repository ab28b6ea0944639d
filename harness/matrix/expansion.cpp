// Cells from [axes], [[exclude]] and [[include]] (GitHub Actions semantics), with their ids.
#include "harness/matrix/expansion.hpp"

#include <algorithm>
#include <set>

namespace cuparity::matrix_detail {
namespace {

struct axis {
  std::string var;
  std::vector<env_value> values;
};

struct labelled_env {
  cell_env env;
  std::string label;
};

bool is_axis(const std::vector<std::string> &axes, const std::string &var) {
  return std::find(axes.begin(), axes.end(), var) != axes.end();
}

axis read_axis(const toml_reader &r, const toml::key &k, const toml::node &v) {
  axis out{std::string(k.str()), {}};
  check_variable_name(r, k, out.var);
  const toml::array *values = v.as_array();
  if (!values)
    r.error(v, "axis " + out.var + " must be an array of values, not " + toml_reader::type_name(v));
  if (values->empty())
    r.error(v, "axis " + out.var + " has no values: the product would be empty");
  for (const auto &e : *values) {
    auto val = variable_value(r, e, out.var);
    if (std::find(out.values.begin(), out.values.end(), val) != out.values.end())
      r.error(e, "axis " + out.var + " lists a value twice");
    out.values.push_back(val);
  }
  return out;
}

/// The axes in file order.
std::vector<axis> read_axes(const toml_reader &r, const toml::table *t) {
  std::vector<axis> out;
  if (t)
    for (const auto &[k, v] : toml_reader::in_file_order(*t))
      out.push_back(read_axis(r, *k, *v));
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

/// Extends every cell whose axis values agree with the rule's (without overwriting them) and
/// labels it; whether any did.
bool extend_compatible(const rule &inc, const std::vector<std::string> &axes,
                       std::vector<labelled_env> &cells) {
  // A rule of axis values alone that matches an existing cell adds nothing (but may label it);
  // otherwise its other variables extend the cell.
  const bool adds = std::any_of(inc.env.begin(), inc.env.end(),
                                [&](const auto &kv) { return !is_axis(axes, kv.first); });
  bool extended = false;
  for (auto &[env, label] : cells) {
    bool compatible = true;
    for (const auto &[k, v] : inc.env)
      if (is_axis(axes, k)) {
        auto it = env.find(k);
        compatible = compatible && it != env.end() && it->second == v;
      }
    if (!compatible)
      continue;
    if (adds)
      for (const auto &[k, v] : inc.env)
        env[k] = v;
    if (!inc.label.empty())
      label = inc.label;
    extended = true;
  }
  return extended;
}

/// After exclude, never excluded: extends compatible cells, or adds a new cell when none is.
void apply_include(const read_context &ctx, const toml::table &t,
                   const std::vector<std::string> &axes, std::vector<labelled_env> &cells) {
  const auto &keys = include_keys();
  rule inc = read_rule(ctx.reader, t, keys.section, keys.names());
  apply_rows(ctx, t, keys, inc);
  if (inc.env.empty())
    ctx.reader.error(t, "an [[include]] rule needs at least one variable");
  if (!extend_compatible(inc, axes, cells))
    cells.push_back({inc.env, inc.label});
}

/// The variables the matrix controls: axes first, then others in first-seen order.
std::vector<std::string> controlled_variables(const std::vector<std::string> &axes,
                                              const std::vector<labelled_env> &cells) {
  std::vector<std::string> out = axes;
  for (const auto &[env, label] : cells)
    for (const auto &[k, v] : env)
      if (std::find(out.begin(), out.end(), k) == out.end())
        out.push_back(k);
  return out;
}

/// The cells, each naming every controlled variable (unset where it does not say), so the runner
/// can clean them; ids must be unique.
void make_cells(const toml_reader &r, const std::vector<labelled_env> &cells, matrix &m) {
  m.variables = controlled_variables(m.axes, cells);
  std::set<std::string> ids;
  for (const auto &[env, label] : cells) {
    cell c;
    for (const auto &v : m.variables)
      c.env[v] = env.count(v) ? env.at(v) : std::nullopt;
    c.label = label;
    c.id = label.empty() ? cell_id(m.variables, env) : label;
    if (!ids.insert(c.id).second)
      throw matrix_error(r.file() + ":1:1: two cells have the id '" + c.id +
                         "' (give the [[include]] a distinct label)");
    m.cells.push_back(std::move(c));
  }
}

} // namespace

void expand_cells(const read_context &ctx, const document_sections &s, matrix &m) {
  const std::vector<axis> axes = read_axes(ctx.reader, s.axes);
  for (const auto &a : axes)
    m.axes.push_back(a.var);
  std::vector<cell_env> product = product_of(axes);
  for (const toml::table *t : s.exclude)
    apply_exclude(ctx.reader, *t, m.axes, product);
  std::vector<labelled_env> cells;
  for (auto &e : product)
    cells.push_back({std::move(e), ""});
  for (const toml::table *t : s.include)
    apply_include(ctx, *t, m.axes, cells);
  if (cells.empty())
    throw matrix_error(ctx.reader.file() +
                       ":1:1: the matrix has no cells (no axes, or every cell excluded, "
                       "and no [[include]])");
  make_cells(ctx.reader, cells, m);
}

} // namespace cuparity::matrix_detail
