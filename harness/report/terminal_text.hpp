// Text from records and summaries made safe for a terminal: control characters escaped.
#pragma once

#include <string>
#include <string_view>

namespace cuparity {

/// `s` with every C0 control character (newline and tab too), DEL and every C1 control
/// (U+0080..U+009F) written as \xNN (\u00NN for C1): a case message or a summary from elsewhere
/// can neither move the cursor, recolour the terminal nor fake a line of the report.
[[nodiscard]] std::string terminal_text(std::string_view s);

} // namespace cuparity
