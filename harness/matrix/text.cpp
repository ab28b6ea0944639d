// Text checks for matrix strings: control characters, and strings shown safely in messages.
#include "harness/matrix/text.hpp"

#include <cstdio>

namespace cuparity::matrix_detail {
namespace {

/// The length in bytes of the control character at `s[i]`, or 0: C0 and DEL are one byte, C1
/// (U+0080-U+009F) is 0xC2 0x80-0x9F in UTF-8 (toml++ has checked the file is UTF-8).
std::size_t control_at(std::string_view s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x20 || c == 0x7f)
    return 1;
  if (c == 0xc2 && i + 1 < s.size()) {
    const auto next = static_cast<unsigned char>(s[i + 1]);
    if (next >= 0x80 && next <= 0x9f)
      return 2;
  }
  return 0;
}

std::string escape_of(std::string_view control) {
  if (control.size() == 1)
    switch (control[0]) {
    case '\n':
      return "\\n";
    case '\t':
      return "\\t";
    case '\r':
      return "\\r";
    default:
      break;
    }
  const unsigned code = control.size() == 1 ? static_cast<unsigned char>(control[0])
                                            : static_cast<unsigned char>(control[1]);
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\u%04X", code);
  return buf;
}

} // namespace

std::optional<std::size_t> first_control(std::string_view s) {
  for (std::size_t i = 0; i < s.size(); ++i)
    if (control_at(s, i))
      return i;
  return std::nullopt;
}

std::string escape_controls(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    if (const std::size_t n = control_at(s, i)) {
      out += escape_of(s.substr(i, n));
      i += n;
    } else {
      out += s[i++];
    }
  }
  return out;
}

std::optional<std::string> unsafe_component(std::string_view name, std::size_t max_bytes) {
  if (name.empty())
    return "is empty";
  if (name == "." || name == "..")
    return "names a folder that exists already";
  if (name.find('/') != std::string_view::npos)
    return "holds a '/' (it must be one path component)";
  if (first_control(name))
    return "holds a control character";
  if (name.size() > max_bytes)
    return "is longer than " + std::to_string(max_bytes) + " bytes";
  return std::nullopt;
}

std::string in_quotes(std::string_view s, std::size_t max_chars) {
  if (s.size() <= max_chars)
    return "'" + escape_controls(s) + "'";
  std::size_t cut = max_chars;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xc0) == 0x80)
    --cut; // not inside a UTF-8 sequence
  return "'" + escape_controls(s.substr(0, cut)) + "...' (" + std::to_string(s.size()) + " bytes)";
}

} // namespace cuparity::matrix_detail
