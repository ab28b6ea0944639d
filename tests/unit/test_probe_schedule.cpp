// A probe's block schedule: every series takes every position equally, and `direct` and `other`
// call through one site, so an A/A pair differs in nothing but the address called.
#include "harness/driver/driver.hpp"
#include "harness/probes/probe_state.hpp"
#include "harness/probes/series_order.hpp"

#include <catch2/catch.hpp>
#include <map>
#include <set>

using namespace cuparity;

namespace {

int own_calls = 0, their_calls = 0;
CUresult CUDAAPI own_version(int *v) {
  ++own_calls;
  *v = 1;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI their_version(int *v) {
  ++their_calls;
  *v = 2;
  return CUDA_SUCCESS;
}

/// Binds cuDriverGetVersion to one function of this file; nothing else.
class one_entry_backend final : public backend {
public:
  explicit one_entry_backend(void *fn) : m_fn(fn) {}
  std::string_view name() const noexcept override { return m_fn == &own_version ? "a" : "b"; }
  const std::string &driver_path() const noexcept override { return m_path; }
  bool per_thread_default_stream() const noexcept override { return false; }
  resolution resolve(const entry_info &e) override {
    resolution r;
    if (e.name == "cuDriverGetVersion")
      r.address = m_fn, r.symbol = "version";
    else
      r.missing_reason = "no " + std::string(e.name);
    return r;
  }

private:
  void *m_fn;
  std::string m_path = "test";
};

/// Counts, per series, how often it took each position of a triple.
std::map<probe_series, std::map<std::size_t, int>> positions(const probe_state &s) {
  std::map<probe_series, std::map<std::size_t, int>> out;
  for (std::size_t i = 0; i < s.blocks().size(); ++i)
    out[s.blocks()[i].series][i % 3] += 1;
  return out;
}

} // namespace

TEST_CASE("balanced orders: a Williams design for 1 to 6 series", "[latency][schedule]") {
  for (std::size_t n = 1; n <= 6; ++n) {
    INFO("n = " << n);
    const auto rows = balanced_orders(n);
    REQUIRE(rows.size() == (n % 2 == 1 && n > 1 ? 2 * n : n));
    std::map<std::pair<std::size_t, std::size_t>, int> at, follows;
    for (const auto &row : rows) {
      REQUIRE(std::set<std::size_t>(row.begin(), row.end()).size() == n); // a permutation
      for (std::size_t p = 0; p < n; ++p) {
        at[{row[p], p}] += 1;
        if (p > 0)
          follows[{row[p - 1], row[p]}] += 1;
      }
    }
    const int per_position = static_cast<int>(rows.size() / n);
    for (std::size_t s = 0; s < n; ++s)
      for (std::size_t p = 0; p < n; ++p)
        CHECK(at[{s, p}] == per_position);
    if (n > 1) { // every ordered pair of neighbours equally often
      const int per_pair = static_cast<int>(rows.size() * (n - 1) / (n * (n - 1)));
      for (std::size_t a = 0; a < n; ++a)
        for (std::size_t b = 0; b < n; ++b)
          if (a != b)
            CHECK(follows[{a, b}] == per_pair);
    }
  }
}

TEST_CASE("a probe's three series take every position of a triple equally, in either round",
          "[latency][schedule]") {
  driver own(std::make_unique<one_entry_backend>(reinterpret_cast<void *>(&own_version)));
  driver theirs(std::make_unique<one_entry_backend>(reinterpret_cast<void *>(&their_version)));
  for (bool flip : {false, true}) {
    INFO("flip " << flip);
    probe_plan plan;
    plan.block_s = 2e-6;
    plan.budget_s = 1e-4;
    probe_state s(plan, &theirs);
    auto call = s.bind(own.cuDriverGetVersion);
    own_calls = their_calls = 0;
    int v = 0;
    for (auto _ : s)
      call(&v);
    REQUIRE(s.ran() == std::array<bool, probe_series_count>{true, true, true});
    CHECK_FALSE(s.same_address());
    // Whole cycles only: six triples each, so every series sat in every position equally.
    REQUIRE(s.blocks().size() % 18 == 0);
    REQUIRE(s.blocks().size() >= 18);
    const auto seen = positions(s);
    const int each = static_cast<int>(s.blocks().size() / 9);
    for (auto series : {probe_series::facade, probe_series::direct, probe_series::other})
      for (std::size_t p = 0; p < 3; ++p) {
        INFO(to_string(series) << " at position " << p);
        CHECK(seen.at(series).at(p) == each);
      }
    // The other series called the other backend's function, direct this backend's own.
    CHECK(their_calls > 0);
    CHECK(own_calls > their_calls);
  }
}

TEST_CASE("with the other backend missing, facade and direct alternate AB, BA",
          "[latency][schedule]") {
  driver own(std::make_unique<one_entry_backend>(reinterpret_cast<void *>(&own_version)));
  probe_plan plan;
  plan.block_s = 2e-6;
  plan.budget_s = 1e-4;
  probe_state s(plan, nullptr);
  auto call = s.bind(own.cuDriverGetVersion);
  int v = 0;
  for (auto _ : s)
    call(&v);
  CHECK(s.ran() == std::array<bool, probe_series_count>{true, true, false});
  CHECK(s.other_missing() == "no other backend in this process");
  REQUIRE(s.blocks().size() % 4 == 0);
  for (std::size_t i = 0; i + 1 < s.blocks().size(); i += 2)
    CHECK(s.blocks()[i].series != s.blocks()[i + 1].series);
  CHECK(s.blocks()[0].series != s.blocks()[2].series); // AB then BA
}
