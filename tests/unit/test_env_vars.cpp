// Numba's _readenv semantics for integer variables.
#include "harness/config/env_vars.hpp"
#include "test_support.hpp"

#include <catch2/catch.hpp>

using namespace cuparity;

TEST_CASE("parse_python_int follows Python's int()", "[env]") {
  CHECK(parse_python_int("0") == 0);
  CHECK(parse_python_int("1") == 1);
  CHECK(parse_python_int(" 1 ") == 1);
  CHECK(parse_python_int("+2") == 2);
  CHECK(parse_python_int("-1") == -1);
  CHECK(parse_python_int("1_0") == 10);
  CHECK(parse_python_int("007") == 7);
  for (const char *bad : {"", " ", "abc", "1.0", "0x1", "true", "1__0", "_1", "1_", "--1", "1 2",
                          "99999999999999999999999"}) {
    INFO("'" << bad << "'");
    CHECK_FALSE(parse_python_int(bad).has_value());
  }
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
