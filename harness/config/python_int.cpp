// Python 3's int(str) on an environment value: what Numba's _readenv(name, int, default) accepts.
//
// CPython first maps every non-ASCII whitespace character to ' ' and every non-ASCII decimal digit
// to its ASCII digit (any other non-ASCII character ends the number), then parses the ASCII text:
// ASCII whitespace, a sign, digits with single underscores between them, ASCII whitespace.
#include "harness/config/python_int.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>

namespace cuparity {
namespace {

/// The digit zero of every run of ten Unicode decimal digits beyond ASCII, from Python's
/// unicodedata (Unicode 14.0, Python 3.11) plus Unicode 15.0's Kawi and Nag Mundari digits
/// (Python 3.12 and 3.13), ascending.
constexpr char32_t digit_zeros[] = {
    0x660,   0x6F0,   0x7C0,   0x966,   0x9E6,   0xA66,   0xAE6,   0xB66,   0xBE6,   0xC66,
    0xCE6,   0xD66,   0xDE6,   0xE50,   0xED0,   0xF20,   0x1040,  0x1090,  0x17E0,  0x1810,
    0x1946,  0x19D0,  0x1A80,  0x1A90,  0x1B50,  0x1BB0,  0x1C40,  0x1C50,  0xA620,  0xA8D0,
    0xA900,  0xA9D0,  0xA9F0,  0xAA50,  0xABF0,  0xFF10,  0x104A0, 0x10D30, 0x11066, 0x110F0,
    0x11136, 0x111D0, 0x112F0, 0x11450, 0x114D0, 0x11650, 0x116C0, 0x11730, 0x118E0, 0x11950,
    0x11C50, 0x11D50, 0x11DA0, 0x11F50, 0x16A60, 0x16AC0, 0x16B50, 0x1D7CE, 0x1D7D8, 0x1D7E2,
    0x1D7EC, 0x1D7F6, 0x1E140, 0x1E2F0, 0x1E4F0, 0x1E950, 0x1FBF0};

/// Python's str.isspace() beyond ASCII, ascending.
constexpr char32_t wide_spaces[] = {0x85,   0xA0,   0x1680, 0x2000, 0x2001, 0x2002, 0x2003,
                                    0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200A,
                                    0x2028, 0x2029, 0x202F, 0x205F, 0x3000};

/// The decimal value of a non-ASCII code point, or -1.
int wide_digit(char32_t c) {
  const auto *it = std::upper_bound(std::begin(digit_zeros), std::end(digit_zeros), c);
  if (it == std::begin(digit_zeros) || c - *(it - 1) > 9)
    return -1;
  return static_cast<int>(c - *(it - 1));
}

/// The next code point of UTF-8 text at `i` (advancing it), or std::nullopt when the bytes are no
/// valid UTF-8 (Python decodes them to lone surrogates, which are no digits).
std::optional<char32_t> next_code_point(std::string_view s, std::size_t &i) {
  const auto lead = static_cast<unsigned char>(s[i]);
  const int extra = lead < 0x80 ? 0 : lead >= 0xF0 ? 3 : lead >= 0xE0 ? 2 : lead >= 0xC2 ? 1 : -1;
  if (extra < 0 || lead > 0xF4 || i + static_cast<std::size_t>(extra) >= s.size())
    return std::nullopt;
  char32_t c = extra == 0 ? lead : lead & (0x3F >> extra);
  for (int k = 1; k <= extra; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80)
      return std::nullopt;
    c = (c << 6) | (b & 0x3F);
  }
  constexpr char32_t least[] = {0, 0x80, 0x800, 0x10000};
  if (c < least[extra] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
    return std::nullopt; // overlong, beyond Unicode, or a surrogate
  i += static_cast<std::size_t>(extra) + 1;
  return c;
}

/// The text as CPython's int() sees it after its first step: ASCII only, or std::nullopt.
std::optional<std::string> to_ascii(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    const auto c = next_code_point(s, i);
    if (!c)
      return std::nullopt;
    if (*c < 0x80)
      out += static_cast<char>(*c);
    else if (std::binary_search(std::begin(wide_spaces), std::end(wide_spaces), *c))
      out += ' ';
    else if (const int d = wide_digit(*c); d >= 0)
      out += static_cast<char>('0' + d);
    else
      return std::nullopt;
  }
  return out;
}

/// CPython's Py_ISSPACE: the ASCII whitespace int() strips (not \x1c-\x1f, which str.strip does).
bool ascii_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

/// The magnitude of decimal digits with single underscores between them ("1_0" is 10; "_1",
/// "1_", "1__0" are no number), saturated at UINT64_MAX; std::nullopt when they are no number or
/// more than python_int_max_str_digits digits.
std::optional<std::uint64_t> magnitude_of(std::string_view s) {
  std::uint64_t magnitude = 0;
  bool saturated = false;
  std::size_t digits = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '_' && i > 0 && i + 1 < s.size() && s[i - 1] != '_' && s[i + 1] != '_')
      continue;
    if (s[i] < '0' || s[i] > '9')
      return std::nullopt;
    ++digits;
    saturated = saturated || __builtin_mul_overflow(magnitude, 10u, &magnitude) ||
                __builtin_add_overflow(magnitude, static_cast<unsigned>(s[i] - '0'), &magnitude);
  }
  if (digits == 0 || digits > python_int_max_str_digits)
    return std::nullopt;
  return saturated ? UINT64_MAX : magnitude;
}

} // namespace

std::optional<long long> parse_python_int(std::string_view text) {
  const auto ascii = to_ascii(text);
  if (!ascii)
    return std::nullopt;
  std::string_view s = *ascii;
  while (!s.empty() && ascii_space(s.front()))
    s.remove_prefix(1);
  while (!s.empty() && ascii_space(s.back()))
    s.remove_suffix(1);
  const bool negative = !s.empty() && s.front() == '-';
  if (!s.empty() && (s.front() == '+' || s.front() == '-'))
    s.remove_prefix(1);
  const auto magnitude = magnitude_of(s);
  if (!magnitude)
    return std::nullopt;
  constexpr auto most = static_cast<std::uint64_t>(LLONG_MAX);
  if (negative)
    return *magnitude > most ? LLONG_MIN : -static_cast<long long>(*magnitude);
  return *magnitude > most ? LLONG_MAX : static_cast<long long>(*magnitude);
}

} // namespace cuparity
