// A cell's running order: registry order with exclusive cases last, and one lock hold over them.
#include "harness/framework/running_order.hpp"

#include <catch2/catch.hpp>

using namespace cuparity;

namespace {

case_def make(const std::string &id, bool exclusive) {
  case_def c;
  c.id = id;
  c.exclusive = exclusive;
  return c;
}

std::string describe(const std::vector<scheduled_case> &order) {
  std::string s;
  for (const auto &c : order)
    s += c.def->id + (c.keep_lock ? "+ " : " ");
  return s;
}

} // namespace

TEST_CASE("a cell runs exclusive cases last in registry order, and keeps the lock between them",
          "[runner][lock]") {
  const std::vector<case_def> defs = {make("a.one", false),  make("a.excl1", true),
                                      make("b.two", false),  make("b.excl2", true),
                                      make("c.excl3", true), make("c.three", false)};
  std::vector<const case_def *> selected;
  for (const auto &d : defs)
    selected.push_back(&d);
  // '+' marks a case after which the lock is kept: every exclusive case but the last.
  CHECK(describe(running_order(selected)) == "a.one b.two c.three a.excl1+ b.excl2+ c.excl3 ");
}

TEST_CASE("a cell with one exclusive case, or none, keeps no lock between cases",
          "[runner][lock]") {
  const std::vector<case_def> defs = {make("a.one", false), make("a.excl", true),
                                      make("b.two", false)};
  CHECK(describe(running_order({&defs[0], &defs[1], &defs[2]})) == "a.one b.two a.excl ");
  CHECK(describe(running_order({&defs[0], &defs[2]})) == "a.one b.two ");
  CHECK(running_order({}).empty());
}
