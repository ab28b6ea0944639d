// Escaping control characters for console output.
#include "harness/report/terminal_text.hpp"

#include <cstdio>

namespace cuparity {

std::string terminal_text(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  char buf[8];
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) {
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else if (c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(s[i + 1]) <= 0x9f) {
      // UTF-8 for U+0080..U+009F, the C1 controls (CSI among them).
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(s[++i]));
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

} // namespace cuparity
