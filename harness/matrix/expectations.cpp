// Expectations: reading [[expect]] rules, checking each matches a cell, attaching them to cells.
#include "harness/matrix/expectations.hpp"

#include <algorithm>

namespace cuparity::matrix_detail {
namespace {

bool applies(const expectation &x, const cell &c) {
  return (!x.label || *x.label == c.label) && env_matches(x.when, c.env);
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
      throw matrix_error(x.where.text() + ": this [[expect]] rule matches no cell");
  // m.expectations is complete: the pointers stay valid.
  for (auto &c : m.cells)
    for (const auto &x : m.expectations)
      if (applies(x, c))
        c.expectations.push_back(&x);
}

} // namespace cuparity::matrix_detail
