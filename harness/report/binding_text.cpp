// Rendering a divergence's binding differences as text.
#include "harness/report/binding_text.hpp"

namespace cuparity {

std::vector<std::string> binding_difference_lines(const divergence &d) {
  std::vector<std::string> lines;
  for (const auto &b : d.bindings) {
    std::string line = b.function + ":";
    bool first = true;
    for (const auto &[cell, symbols] : b.cells) {
      std::string shown;
      for (const auto &s : symbols)
        shown += (shown.empty() ? "" : ", ") + s;
      line += std::string(first ? " " : " -> ") + (shown.empty() ? "nothing" : shown) + " in '" +
              cell + "'";
      first = false;
    }
    lines.push_back(line);
  }
  return lines;
}

} // namespace cuparity
