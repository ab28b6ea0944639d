// A plain-text table: columns padded to their widest cell, a rule under the header.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace cuparity {

using text_row = std::vector<std::string>;

/// Writes `header`, a line of dashes per column, then `rows`; columns are separated by two
/// spaces and trailing blanks are trimmed. Rows shorter than the header leave cells empty. Cells
/// are written through terminal_text (terminal_text.hpp).
void print_text_table(std::ostream &out, const text_row &header, const std::vector<text_row> &rows);

} // namespace cuparity
