// The case registry: suites are open, so a user's own suite registers beside the seven.
#include "harness/framework/case_registry.hpp"

#include <algorithm>
#include <catch2/catch.hpp>

using namespace cuparity;

TEST_CASE("a case of a suite of the user's own registers, selects by suite name and reports "
          "after the built-in suites",
          "[registry]") {
  case_registry &r = case_registry::instance();
  r.add({"zz_user.group.second", "a user's case", nullptr});
  r.add({"aa_user.group.first", "another user's case", nullptr});
  r.add({"context.registry_test.open", "a built-in suite's case", nullptr});
  REQUIRE(r.find("zz_user.group.second"));
  const auto selected = r.select({"zz_user"});
  REQUIRE(selected.size() == 1);
  CHECK(selected[0]->id == "zz_user.group.second");
  const auto suites = r.suites();
  const auto at = [&suites](const std::string &s) {
    return std::find(suites.begin(), suites.end(), s) - suites.begin();
  };
  REQUIRE(at("zz_user") < static_cast<long>(suites.size()));
  CHECK(at("context") < at("aa_user")); // built-in suites first, in their order
  CHECK(at("aa_user") < at("zz_user")); // then the others by name
  CHECK(builtin_suites().size() == 7);
}
