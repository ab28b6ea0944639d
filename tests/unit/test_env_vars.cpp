// Numba's _readenv semantics for integer variables.
#include "harness/config/env_vars.hpp"
#include "test_support.hpp"

#include <catch2/catch.hpp>
#include <climits>
#include <optional>
#include <string>
#include <utility>

using namespace cuparity;

TEST_CASE("parse_python_int follows Python's int()", "[env]") {
  // Each expectation is what CPython 3.11 printed for int(text) (std::nullopt: ValueError).
  const std::pair<const char *, std::optional<long long>> cases[] = {
      {"0", 0},
      {"1", 1},
      {" 1 ", 1},
      {"+2", 2},
      {"-1", -1},
      {"1_0", 10},
      {"007", 7},
      {"+5", 5},
      {" 7 ", 7},
      {"1_000", 1000},
      {"0_0", 0},
      {"-0", 0},
      {"\t1\n", 1},
      {"\v7\f", 7},
      {"\r-3\r", -3},
      {"9223372036854775807", LLONG_MAX},
      {"-9223372036854775808", LLONG_MIN},
      // Unicode whitespace around the number, Unicode decimal digits in it.
      {"\u00a05", 5},
      {"5\u3000", 5},
      {"\u2028-5\u3000", -5},
      {"\u0085 1", 1},
      {"\u0663", 3},
      {"\u0661_\u0662", 12},
      {"\uff11\uff10", 10},
      {"\u0e51\u0e50", 10},
      {"\U0001d7ce", 0},
      {"\U00011f51", 1}, // a Kawi digit: Unicode 15.0, Python 3.12 and later
      // Not integers.
      {"", std::nullopt},
      {"  ", std::nullopt},
      {"0x10", std::nullopt},
      {"1e3", std::nullopt},
      {"1.0", std::nullopt},
      {"- 1", std::nullopt},
      {"+ 1", std::nullopt},
      {"+_1", std::nullopt},
      {"_1", std::nullopt},
      {"1_", std::nullopt},
      {"1__0", std::nullopt},
      {"1 2", std::nullopt},
      {"--1", std::nullopt},
      {"+-1", std::nullopt},
      {"abc", std::nullopt},
      {"true", std::nullopt},
      {"\x1c"
       "5",
       std::nullopt}, // str.strip() takes \x1c-\x1f, int() does not
      {"5\x1f", std::nullopt},
      {"+\u00a01", std::nullopt}, // no space between the sign and the digits
      {"\u00b2", std::nullopt},   // superscript two: a digit, but no decimal digit
      {"\u2155", std::nullopt},
      {"1\u200b", std::nullopt}, // zero-width space is no whitespace
      {"\xff"
       "1",
       std::nullopt},                 // not UTF-8: Python decodes it to a lone surrogate
      {"\xc0\xb1", std::nullopt},     // an overlong '1'
      {"\xe0\x80\xb1", std::nullopt}, // a three-byte overlong '1'
      {"\xed\xa0\x80", std::nullopt}, // an encoded surrogate
      {"\xd9\xa1", 1},                // U+0661, Arabic-Indic one
      {"\xd9!", std::nullopt},        // its lead byte, then no continuation byte
  };
  for (const auto &[text, expected] : cases) {
    INFO("'" << text << "'");
    CHECK(parse_python_int(text) == expected);
  }
  CHECK_FALSE(parse_python_int(std::string_view("1\0", 2)).has_value());
}

TEST_CASE("parse_python_int: an integer beyond long long is an integer, of the right sign",
          "[env]") {
  // Python: int("99999999999999999999") is 99999999999999999999, so Numba switches the binding
  // on; cuparity gives the nearest long long, which is as nonzero.
  CHECK(parse_python_int("99999999999999999999") == LLONG_MAX);
  CHECK(parse_python_int("9223372036854775808") == LLONG_MAX);
  CHECK(parse_python_int(" -99999999999999999999 ") == LLONG_MIN);
  CHECK(parse_python_int("-9223372036854775809") == LLONG_MIN);
  CHECK(parse_python_int("18446744073709551616") == LLONG_MAX); // beyond 64 bits
  CHECK(parse_python_int("000000000000000000000000000001") == 1);
  // Python 3.11+ refuses more than 4300 digits (underscores not counted, leading zeros counted).
  CHECK(parse_python_int(std::string(4300, '7')) == LLONG_MAX);
  CHECK(parse_python_int("-" + std::string(4300, '0')) == 0);
  CHECK_FALSE(parse_python_int(std::string(4301, '0')).has_value());
  std::string underscored = "1";
  for (int i = 1; i < 4300; ++i)
    underscored += "_1";
  CHECK(parse_python_int(underscored) == LLONG_MAX);
  CHECK_FALSE(parse_python_int(underscored + "_1").has_value());
}

TEST_CASE("read_int_variable: a big integer is nonzero, not garbage", "[env]") {
  std::vector<std::string> warnings;
  auto env = test::lookup({{"BIG", "99999999999999999999"}, {"NEG", "-1_000_000_000_000_000_000"}});
  CHECK(read_int_variable(env, "BIG", 0, warnings) != 0);
  CHECK(read_int_variable(env, "NEG", 0, warnings) < 0);
  CHECK(warnings.empty());
}

TEST_CASE("read_int_variable: unset is the default, garbage warns and is the default", "[env]") {
  std::vector<std::string> warnings;
  auto env = test::lookup({{"A", "1"}, {"B", "yes"}, {"C", "0"}, {"D", ""}});
  CHECK(read_int_variable(env, "A", 0, warnings) == 1);
  CHECK(read_int_variable(env, "C", 1, warnings) == 0);
  CHECK(read_int_variable(env, "UNSET", 5, warnings) == 5);
  CHECK(warnings.empty());
  CHECK(read_int_variable(env, "B", 0, warnings) == 0);
  REQUIRE(warnings.size() == 1);
  CHECK_THAT(warnings[0], Catch::Contains("B='yes'") && Catch::Contains("default 0"));
  CHECK(read_int_variable(env, "D", 0, warnings) == 0); // "" is not an integer either
  CHECK(warnings.size() == 2);
}
