// Escaping by character class: a code point is kept, blanked or backslash-escaped, never parsed.
#include "harness/report/markdown_text.hpp"

#include <cstdint>

namespace cuparity {
namespace {

/// ASCII that starts inline or block Markdown, raw HTML or an entity (< > &), a GFM table column
/// (|), GitHub's math ($) or a mention (@). Blanks, letters, digits and the rest (, . : ; / = ' "
/// ? % - +) are inert in the middle of a line, and every line this escapes into starts with
/// cuparity's own text.
constexpr std::string_view escaped = "\\`*_{}[]()#!|<>&~$@^";

/// The length of the UTF-8 sequence that starts with `lead`; 0 for a byte no sequence starts with.
std::size_t sequence_length(unsigned char lead) {
  if (lead < 0x80)
    return 1;
  if (lead >= 0xC2 && lead <= 0xDF)
    return 2;
  if (lead >= 0xE0 && lead <= 0xEF)
    return 3;
  if (lead >= 0xF0 && lead <= 0xF4)
    return 4;
  return 0;
}

/// The code point at text[at] (`len` bytes), or -1 when the bytes are no valid UTF-8 (overlong
/// forms, surrogates and values past U+10FFFF included).
long decode(std::string_view text, std::size_t at, std::size_t len) {
  if (len == 0 || at + len > text.size())
    return -1;
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[at + i]); };
  if (len == 1)
    return byte(0);
  long cp = byte(0) & (0x7F >> len);
  for (std::size_t i = 1; i < len; ++i) {
    if ((byte(i) & 0xC0) != 0x80)
      return -1;
    cp = (cp << 6) | (byte(i) & 0x3F);
  }
  static constexpr long smallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < smallest[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
    return -1;
  return cp;
}

/// Appends one code point's text: control characters (C0, DEL, C1) as a blank.
void append(std::string &out, std::string_view text, std::size_t at, std::size_t len, long cp) {
  if (cp < 0) {
    out += "\xEF\xBF\xBD"; // U+FFFD
  } else if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F)) {
    out += ' ';
  } else if (cp < 0x80 && escaped.find(static_cast<char>(cp)) != std::string_view::npos) {
    out += '\\';
    out += static_cast<char>(cp);
  } else {
    out.append(text.substr(at, len));
  }
}

} // namespace

std::string markdown_inline(std::string_view text, std::size_t max_chars) {
  std::string out;
  out.reserve(text.size() < max_chars * 2 ? text.size() + 16 : max_chars * 2);
  std::size_t chars = 0;
  for (std::size_t at = 0; at < text.size();) {
    if (chars == max_chars) {
      out += "\xE2\x80\xA6"; // U+2026: the rest is in summary.json and junit.xml
      break;
    }
    std::size_t len = sequence_length(static_cast<unsigned char>(text[at]));
    const long cp = decode(text, at, len);
    if (cp < 0)
      len = 1; // one byte replaced, and the next one read afresh
    append(out, text, at, len, cp);
    at += len;
    ++chars;
  }
  return out;
}

} // namespace cuparity
