// Rendering a divergence's binding differences as text.
#include "harness/report/binding_text.hpp"

namespace cuparity {

std::vector<std::string> binding_difference_lines(const divergence &d) {
  std::vector<std::string> lines;
  std::string same;
  std::size_t same_count = 0;
  for (const auto &b : d.bindings) {
    if (b.same_symbols) {
      // One line for them all: the cells reach the same symbols, only by another path.
      same += (same_count++ ? ", " : "") + b.function;
      continue;
    }
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
  if (same_count)
    lines.push_back(std::to_string(same_count) +
                    " more bound the same symbols another way (dlsym, " +
                    "plt or cuGetProcAddress): " + same);
  return lines;
}

} // namespace cuparity
