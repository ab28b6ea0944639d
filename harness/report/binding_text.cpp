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

namespace {

std::string symbols_text(const std::vector<std::string> &symbols) {
  std::string shown;
  for (const auto &s : symbols)
    shown += (shown.empty() ? "" : ", ") + s;
  return shown.empty() ? "nothing" : shown;
}

std::string value_text(const env_value &v) {
  return v ? "\"" + *v + "\"" : "unset";
}

std::string head_line(const variable_effect &e) {
  const std::string of = std::to_string(e.pairs) + " pair" + (e.pairs == 1 ? "" : "s") +
                         " of cells that differ in it alone";
  if (e.pairs == 0)
    return e.variable + ": no two cells that differ in it alone both ran a suite or program to "
                        "its end (nothing to tell)";
  std::string line = e.bindings.empty() ? e.variable + " changed no binding in " + of
                                        : e.variable + " changed the bindings of " +
                                              std::to_string(e.bindings.size()) + " function" +
                                              (e.bindings.size() == 1 ? "" : "s") + " in " + of;
  if (e.outcome_pairs)
    line += "; cases ended otherwise in " + std::to_string(e.outcome_pairs);
  if (e.inert)
    line += " (inert: " + *e.inert + ")";
  return line;
}

} // namespace

std::vector<std::string> variable_effect_lines(const variable_effect &e, std::size_t most) {
  std::vector<std::string> lines{head_line(e)};
  std::size_t shown = 0, other = 0;
  std::string same;
  std::size_t same_count = 0;
  for (const auto &c : e.bindings) {
    if (c.same_symbols) {
      // One line for them all: the cells reach the same symbols, only by another path.
      same += (same_count++ ? ", " : "") + c.suite + " " + c.function;
      continue;
    }
    if (shown++ >= most) {
      ++other;
      continue;
    }
    lines.push_back(c.suite + " " + c.function + ": " + symbols_text(c.a) + " in '" + c.cell_a +
                    "' (" + value_text(c.value_a) + ") -> " + symbols_text(c.b) + " in '" +
                    c.cell_b + "' (" + value_text(c.value_b) + "), " + std::to_string(c.pairs) +
                    " pair" + (c.pairs == 1 ? "" : "s"));
  }
  if (other)
    lines.push_back("... and " + std::to_string(other) + " more in summary.json");
  if (same_count)
    lines.push_back(std::to_string(same_count) +
                    " more bound the same symbols another way (dlsym, plt or cuGetProcAddress): " +
                    same);
  return lines;
}

} // namespace cuparity
