// External suites' captured bindings in the verdict: the functions bound otherwise beside each
// divergence.
#include "harness/verdict/compare_steps.hpp"

#include <algorithm>

namespace cuparity::verdict {

std::set<std::string> without_sources(const std::set<std::string> &bindings) {
  std::set<std::string> out;
  for (const auto &b : bindings)
    out.insert(b.substr(0, b.rfind(" (")));
  return out;
}

namespace {

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

} // namespace cuparity::verdict
