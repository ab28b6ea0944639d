// Column widths and padding for plain-text tables.
#include "harness/report/text_table.hpp"

#include "harness/report/terminal_text.hpp"

#include <algorithm>

namespace cuparity {
namespace {

void print_line(std::ostream &out, const text_row &cells, const std::vector<std::size_t> &widths) {
  std::string line;
  for (std::size_t i = 0; i < widths.size(); ++i) {
    const std::string cell = i < cells.size() ? cells[i] : "";
    line += cell + std::string(widths[i] - std::min(widths[i], cell.size()), ' ');
    if (i + 1 < widths.size())
      line += "  ";
  }
  line.erase(line.find_last_not_of(' ') + 1);
  out << line << "\n";
}

} // namespace

void print_text_table(std::ostream &out, const text_row &header,
                      const std::vector<text_row> &given) {
  // Cells come from records and summaries: escaped before they are measured, so widths hold.
  std::vector<text_row> rows = given;
  for (auto &r : rows)
    for (auto &cell : r)
      cell = terminal_text(cell);
  std::vector<std::size_t> widths;
  for (const auto &h : header)
    widths.push_back(h.size());
  for (const auto &r : rows)
    for (std::size_t i = 0; i < std::min(r.size(), widths.size()); ++i)
      widths[i] = std::max(widths[i], r[i].size());
  print_line(out, header, widths);
  text_row rule;
  for (auto w : widths)
    rule.push_back(std::string(w, '-'));
  print_line(out, rule, widths);
  for (const auto &r : rows)
    print_line(out, r, widths);
}

} // namespace cuparity
