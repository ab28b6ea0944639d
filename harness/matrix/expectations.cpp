// Expectations: reading [[expect]] rules, checking each matches a cell, attaching them to cells.
#include "harness/matrix/expectations.hpp"

#include "harness/config/known_variables.hpp"

#include <algorithm>
#include <iterator>

namespace cuparity::matrix_detail {
namespace {

bool applies(const expectation &x, const cell &c) {
  return (!x.label || *x.label == c.label) && env_matches(x.when, c.env);
}

/// Why a rule matches no cell when its `when` asks a value no cell has: often a name misspelt on
/// one side, so the matrix's closest other variable is shown, with where it was written.
std::string no_cell_has(const matrix &m, const expectation &x) {
  for (const auto &[var, value] : x.when) {
    const auto has = [&](const cell &c) {
      const auto it = c.env.find(var);
      return it != c.env.end() && it->second == value;
    };
    if (!value || std::any_of(m.cells.begin(), m.cells.end(), has))
      continue;
    std::string text = ": its `when` asks " + var + " = \"" + *value + "\", which no cell has";
    std::vector<std::string> others;
    std::copy_if(m.variables.begin(), m.variables.end(), std::back_inserter(others),
                 [&](const std::string &v) { return v != var; });
    const std::string closest = closest_name(var, others);
    if (!closest.empty())
      text += " (the matrix's closest other variable is " + closest + ", written at " +
              m.variable_at.at(closest).text() + ")";
    return text;
  }
  return "";
}

} // namespace

void read_expectations(const read_context &ctx, const std::vector<const toml::table *> &tables,
                       matrix &m) {
  for (const toml::table *t : tables) {
    expectation x;
    x.where = ctx.reader.at(*t);
    read_keys(ctx, *t, expect_keys(), x);
    m.expectations.push_back(std::move(x));
  }
  for (const auto &x : m.expectations)
    if (std::none_of(m.cells.begin(), m.cells.end(), [&](const cell &c) { return applies(x, c); }))
      throw matrix_error(x.where.text() + ": this [[expect]] rule matches no cell" +
                         no_cell_has(m, x));
  // m.expectations is complete: the pointers stay valid.
  for (auto &c : m.cells)
    for (const auto &x : m.expectations)
      if (applies(x, c))
        c.expectations.push_back(&x);
}

} // namespace cuparity::matrix_detail
