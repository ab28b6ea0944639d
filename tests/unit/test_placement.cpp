// Placing cells on GPUs: balance by cost, determinism, the workers each GPU gets.
#include "harness/run/placement.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <numeric>
#include <random>

using namespace cuparity;

namespace {

using placement = std::vector<std::vector<std::size_t>>;

std::vector<placement::value_type> queues(const std::vector<gpu_share> &shares) {
  std::vector<std::vector<std::size_t>> out;
  for (const auto &s : shares)
    out.push_back(s.cells);
  return out;
}

std::vector<double> loads(const placement &p, const std::vector<double> &costs) {
  std::vector<double> out;
  for (const auto &q : p) {
    double sum = 0;
    for (std::size_t i : q)
      sum += costs[i];
    out.push_back(sum);
  }
  return out;
}

/// Every index of `n` cells in exactly one queue.
bool each_placed_once(const placement &p, std::size_t n) {
  std::vector<std::size_t> all;
  for (const auto &q : p)
    all.insert(all.end(), q.begin(), q.end());
  std::sort(all.begin(), all.end());
  std::vector<std::size_t> expected(n);
  std::iota(expected.begin(), expected.end(), std::size_t{0});
  return all == expected;
}

} // namespace

TEST_CASE("placement balances GPUs by cost where round-robin would not", "[placement]") {
  // Sorted, these are 4 3 3 2 2 2: dealt out in turn they give 9 and 7; by load, 8 and 8.
  const std::vector<double> costs{2, 3, 2, 4, 2, 3};
  const placement p = place_by_cost(costs, {1, 1});
  CHECK(loads(p, costs) == std::vector<double>{8, 8});
  CHECK(p == placement{{3, 0, 2}, {1, 5, 4}});
  CHECK(each_placed_once(p, costs.size()));
  // One long cell: it gets a GPU to itself, the rest share the other.
  const std::vector<double> skewed{1, 1, 10, 1, 1, 1};
  CHECK(place_by_cost(skewed, {1, 1}) == placement{{2}, {0, 1, 3, 4, 5}});
}

TEST_CASE("each GPU's queue runs its costliest cells first", "[placement]") {
  const std::vector<double> costs{0.5, 3, 1, 2, 0.25, 2, 4, 1};
  for (const auto &q : place_by_cost(costs, {1, 1, 1})) {
    INFO("queue of " << q.size());
    CHECK(std::is_sorted(q.begin(), q.end(),
                         [&](std::size_t a, std::size_t b) { return costs[a] > costs[b]; }));
  }
}

TEST_CASE("placement is deterministic: equal costs alternate, ties to the lowest GPU",
          "[placement]") {
  // More cells than an insertion sort handles, so an unstable sort would show.
  const std::vector<double> equal(40, 0.05);
  placement expected(2);
  for (std::size_t i = 0; i < equal.size(); ++i)
    expected[i % 2].push_back(i);
  CHECK(place_by_cost(equal, {1, 1}) == expected);
  CHECK(place_by_cost(std::vector<double>(3, 1.0), {1, 1, 1}) == placement{{0}, {1}, {2}});
  CHECK(place_by_cost({1.0}, {1, 1, 1}) == placement{{0}, {}, {}});
  // The same costs always give the same placement.
  std::mt19937 gen(7);
  std::uniform_real_distribution<double> cost(0.05, 3.0);
  std::vector<double> random(25);
  for (auto &c : random)
    c = cost(gen);
  CHECK(place_by_cost(random, {2, 2}) == place_by_cost(random, {2, 2}));
}

TEST_CASE("every cell is placed exactly once, on any number of GPUs", "[placement]") {
  std::mt19937 gen(11);
  std::uniform_real_distribution<double> cost(0.05, 3.0);
  for (std::size_t n : {0, 1, 2, 5, 18, 37})
    for (std::size_t gpus : {1, 2, 3, 8}) {
      std::vector<double> costs(n);
      for (auto &c : costs)
        c = cost(gen);
      INFO(n << " cells on " << gpus << " GPUs");
      const auto shares = place_cells(costs, gpus, 12);
      CHECK(shares.size() == gpus);
      CHECK(each_placed_once(queues(shares), n));
      // Longest processing time first on GPUs with equal workers: no GPU ends up more than one
      // cell's cost above another.
      if (gpus > 1 && n > 0 && 12 % gpus == 0) {
        const auto l = loads(queues(shares), costs);
        CHECK(*std::max_element(l.begin(), l.end()) - *std::min_element(l.begin(), l.end()) <=
              *std::max_element(costs.begin(), costs.end()) + 1e-9);
      }
    }
}

TEST_CASE("-j is split over the GPUs as evenly as possible, at least one worker each",
          "[placement]") {
  CHECK(split_workers(12, 2) == std::vector<int>{6, 6});
  CHECK(split_workers(5, 2) == std::vector<int>{3, 2});
  CHECK(split_workers(7, 3) == std::vector<int>{3, 2, 2});
  CHECK(split_workers(1, 2) == std::vector<int>{1, 1});
  CHECK(split_workers(2, 3) == std::vector<int>{1, 1, 1});
  CHECK(split_workers(4, 1) == std::vector<int>{4});
  CHECK(split_workers(4, 0) == std::vector<int>{4}); // no GPU named: one queue
  CHECK(split_workers(0, 2) == std::vector<int>{1, 1});
  const auto shares = place_cells(std::vector<double>(4, 1.0), 3, 2);
  REQUIRE(shares.size() == 3);
  CHECK(shares[0].workers == 1);
  CHECK(shares[1].workers == 1);
  CHECK(shares[2].workers == 1);
}

TEST_CASE("a GPU with fewer workers gets proportionally less to do", "[placement]") {
  // -j 3 over two GPUs: 2 workers and 1, so 4 equal cells and 2.
  const std::vector<double> equal(6, 1.0);
  const auto shares = place_cells(equal, 2, 3);
  REQUIRE(shares.size() == 2);
  CHECK(shares[0].workers == 2);
  CHECK(shares[1].workers == 1);
  CHECK(shares[0].cells == std::vector<std::size_t>{0, 1, 3, 4});
  CHECK(shares[1].cells == std::vector<std::size_t>{2, 5});
}

TEST_CASE("one GPU or none: every cell in the order given, with all the workers", "[placement]") {
  const std::vector<double> unsorted{1, 3, 2, 0.5};
  for (std::size_t gpus : {0, 1}) {
    const auto shares = place_cells(unsorted, gpus, 5);
    REQUIRE(shares.size() == 1);
    CHECK(shares[0].cells == std::vector<std::size_t>{0, 1, 2, 3});
    CHECK(shares[0].workers == 5);
  }
  CHECK(place_cells({}, 1, 0)[0].workers == 1);
}

TEST_CASE("place_work costs a cell by its cases", "[placement]") {
  // The registry of this test binary is empty: each case costs as an ordinary one.
  cell a, b, c;
  const std::vector<work_cell> work{
      {&a, {"x.a.one"}}, {&b, {"x.a.one", "x.a.two", "x.a.three"}}, {&c, {"x.a.one", "x.a.two"}}};
  const auto shares = place_work(work, 2, 2);
  REQUIRE(shares.size() == 2);
  CHECK(shares[0].cells == std::vector<std::size_t>{1});
  CHECK(shares[1].cells == std::vector<std::size_t>{2, 0});
}
