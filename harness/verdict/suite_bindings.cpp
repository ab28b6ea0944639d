// External suites' captured bindings in the verdict: beside divergences, and no-op variables.
#include "harness/verdict/compare_steps.hpp"

#include <algorithm>

namespace cuparity::verdict {
namespace {

using bindings_of_cell = std::map<std::string, std::set<std::string>>;

/// "cuMemGetInfo_v2 (dlsym)" -> "cuMemGetInfo_v2": the symbol without how it was bound.
std::set<std::string> without_sources(const std::set<std::string> &bindings) {
  std::set<std::string> out;
  for (const auto &b : bindings)
    out.insert(b.substr(0, b.rfind(" (")));
  return out;
}

/// The functions whose symbols differ among `cells` (a function one cell did not bind at all
/// differs too, shown as an empty list there).
std::vector<binding_difference> differences(const record_index &index,
                                            const std::vector<std::string> &cells) {
  std::set<std::string> functions;
  for (const auto &c : cells)
    for (const auto &[f, _] : index.bindings.at(c))
      functions.insert(f);
  std::vector<binding_difference> out;
  for (const auto &f : functions) {
    binding_difference d{f, {}, false};
    std::set<std::set<std::string>> distinct, symbols_only;
    for (const auto &c : cells) {
      const auto &b = index.bindings.at(c);
      const auto it = b.find(f);
      const std::set<std::string> symbols = it == b.end() ? std::set<std::string>{} : it->second;
      distinct.insert(symbols);
      symbols_only.insert(without_sources(symbols));
      d.cells[c] = {symbols.begin(), symbols.end()};
    }
    d.same_symbols = symbols_only.size() == 1;
    if (distinct.size() > 1)
      out.push_back(std::move(d));
  }
  // Other symbols first: those are what a result can differ by; another path to the same symbol
  // is listed after them.
  std::stable_partition(out.begin(), out.end(),
                        [](const binding_difference &d) { return !d.same_symbols; });
  return out;
}

/// Whether `a` and `b` differ in `var` and in nothing else.
bool differ_only_in(const cell &a, const cell &b, const std::string &var) {
  for (const auto &[k, v] : a.env) {
    const auto it = b.env.find(k);
    const bool same = it != b.env.end() && it->second == v;
    if ((k == var) == same)
      return false;
  }
  return true;
}

/// Each recorded case of a cell and its outcome.
std::map<std::string, std::string> outcomes_of(const record_index &index, const std::string &cell) {
  std::map<std::string, std::string> out;
  for (auto it = index.cases.lower_bound({cell, ""});
       it != index.cases.end() && it->first.first == cell; ++it)
    out[it->first.second] = it->second.value("outcome", "");
  return out;
}

/// Whether two cells did anything differently: bound other symbols, or ended a test otherwise (a
/// variable the driver reads, say a fault to inject, changes outcomes and not the bindings).
bool cells_differ(const record_index &index, const cell &a, const cell &b) {
  return index.bindings.at(a.id) != index.bindings.at(b.id) ||
         outcomes_of(index, a.id) != outcomes_of(index, b.id);
}

std::string shown_value(const env_value &v) {
  return v ? "\"" + *v + "\"" : "unset";
}

} // namespace

void attach_binding_differences(const record_index &index, comparison &out) {
  for (auto &d : out.divergences) {
    std::vector<std::string> cells;
    for (const auto &[c, _] : d.values)
      if (index.bindings.count(c))
        cells.push_back(c);
    if (cells.size() >= 2)
      d.bindings = differences(index, cells);
  }
}

void report_noop_variables(const matrix &m, const record_index &index, comparison &out) {
  if (m.suites.empty())
    return;
  for (const auto &var : m.axes) {
    std::size_t pairs = 0;
    const cell *first_a = nullptr, *first_b = nullptr;
    bool changed = false;
    for (std::size_t i = 0; i < m.cells.size() && !changed; ++i)
      for (std::size_t j = i + 1; j < m.cells.size() && !changed; ++j) {
        const cell &a = m.cells[i], &b = m.cells[j];
        if (!index.bindings.count(a.id) || !index.bindings.count(b.id) ||
            !differ_only_in(a, b, var))
          continue;
        if (pairs++ == 0)
          first_a = &a, first_b = &b;
        changed = cells_differ(index, a, b);
      }
    if (pairs == 0 || changed)
      continue;
    out.problems.push_back(
        {"no_op_configuration", "", "",
         var + " changed nothing: the package does not read it. " + std::to_string(pairs) +
             " pair(s) of cells differ in it alone, bound the same symbols and ended every test "
             "alike (first: '" +
             first_a->id + "' with " + shown_value(first_a->env.at(var)) + " and '" + first_b->id +
             "' with " + shown_value(first_b->env.at(var)) + ", " +
             std::to_string(index.bindings.at(first_a->id).size()) + " functions each)"});
  }
}

} // namespace cuparity::verdict
