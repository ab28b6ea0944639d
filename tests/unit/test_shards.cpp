// Shards: every CI engine's index and count variables, their refusals, and the time deal.
#include "harness/protocol/records.hpp"
#include "harness/protocol/results.hpp"
#include "harness/run/shard_env.hpp"
#include "harness/run/shard_timing.hpp"
#include "test_support.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>

using namespace cuparity;
namespace fs = std::filesystem;

namespace {

env_reader env_of(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const std::string &name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

decided_shard decide(std::map<std::string, std::string> vars,
                     std::optional<std::string> option = std::nullopt) {
  return decide_shard(option, env_of(std::move(vars)));
}

/// The message decide_shard refuses with ("" when it does not).
std::string refusal(std::map<std::string, std::string> vars,
                    std::optional<std::string> option = std::nullopt) {
  try {
    (void)decide(std::move(vars), std::move(option));
  } catch (const std::invalid_argument &e) {
    return e.what();
  }
  return "";
}

void check_shard(const decided_shard &d, int k, int n) {
  REQUIRE(d.shard);
  CHECK(d.shard->index == k);
  CHECK(d.shard->count == n);
}

} // namespace

TEST_CASE("each engine's variables name the same shard, in its own base", "[shards]") {
  CHECK_FALSE(decide({}).shard);
  check_shard(decide({{"GTEST_SHARD_INDEX", "2"}, {"GTEST_TOTAL_SHARDS", "4"}}), 2, 4);
  // GitLab counts from 1.
  check_shard(decide({{"CI_NODE_INDEX", "3"}, {"CI_NODE_TOTAL", "4"}}), 2, 4);
  check_shard(decide({{"CI_NODE_INDEX", "1"}, {"CI_NODE_TOTAL", "1"}}), 0, 1);
  check_shard(decide({{"BUILDKITE_PARALLEL_JOB", "2"}, {"BUILDKITE_PARALLEL_JOB_COUNT", "4"}}), 2,
              4);
  check_shard(decide({{"JOB_COMPLETION_INDEX", "2"}, {"CUPARITY_TOTAL_SHARDS", "4"}}), 2, 4);
  // Slurm ids start where the array does, and step as it steps.
  check_shard(decide({{"SLURM_ARRAY_TASK_ID", "2"},
                      {"SLURM_ARRAY_TASK_COUNT", "4"},
                      {"SLURM_ARRAY_TASK_MIN", "0"}}),
              2, 4);
  check_shard(decide({{"SLURM_ARRAY_TASK_ID", "3"},
                      {"SLURM_ARRAY_TASK_COUNT", "4"},
                      {"SLURM_ARRAY_TASK_MIN", "1"}}),
              2, 4);
  check_shard(decide({{"SLURM_ARRAY_TASK_ID", "9"},
                      {"SLURM_ARRAY_TASK_COUNT", "4"},
                      {"SLURM_ARRAY_TASK_MIN", "5"},
                      {"SLURM_ARRAY_TASK_STEP", "2"}}),
              2, 4);
  // The source says which variables decided it.
  const auto gitlab = decide({{"CI_NODE_INDEX", "3"}, {"CI_NODE_TOTAL", "4"}});
  CHECK(gitlab.source == "GitLab (CI_NODE_INDEX=3, CI_NODE_TOTAL=4)");
}

TEST_CASE("a job that is not parallel is no shard", "[shards]") {
  // GitLab sets CI_NODE_TOTAL=1 in every job without `parallel:`.
  CHECK_FALSE(decide({{"CI_NODE_TOTAL", "1"}}).shard);
  CHECK_THAT(refusal({{"CI_NODE_TOTAL", "3"}}),
             Catch::Contains("CI_NODE_TOTAL=3 is set without CI_NODE_INDEX"));
}

TEST_CASE("sources that agree are one shard, and both are named", "[shards]") {
  const auto d = decide({{"CI_NODE_INDEX", "2"},
                         {"CI_NODE_TOTAL", "3"},
                         {"BUILDKITE_PARALLEL_JOB", "1"},
                         {"BUILDKITE_PARALLEL_JOB_COUNT", "3"}},
                        "1/3");
  check_shard(d, 1, 3);
  CHECK(d.source == "--shard 1/3 = GitLab (CI_NODE_INDEX=2, CI_NODE_TOTAL=3) = Buildkite "
                    "(BUILDKITE_PARALLEL_JOB=1, BUILDKITE_PARALLEL_JOB_COUNT=3)");
  // A Kubernetes index takes its count from another source that agrees.
  check_shard(decide({{"JOB_COMPLETION_INDEX", "1"}}, "1/3"), 1, 3);
}

TEST_CASE("sources that disagree are refused naming both", "[shards]") {
  const auto both = refusal({{"CI_NODE_INDEX", "1"},
                             {"CI_NODE_TOTAL", "3"},
                             {"BUILDKITE_PARALLEL_JOB", "1"},
                             {"BUILDKITE_PARALLEL_JOB_COUNT", "3"}});
  CHECK_THAT(both, Catch::Contains("GitLab (CI_NODE_INDEX=1, CI_NODE_TOTAL=3) is shard 0/3"));
  CHECK_THAT(both, Catch::Contains("Buildkite (BUILDKITE_PARALLEL_JOB=1, "
                                   "BUILDKITE_PARALLEL_JOB_COUNT=3) is shard 1/3"));
  const auto counts = refusal({{"GTEST_SHARD_INDEX", "0"}, {"GTEST_TOTAL_SHARDS", "2"}}, "0/3");
  CHECK_THAT(counts, Catch::Contains("--shard 0/3 is shard 0/3"));
  CHECK_THAT(counts, Catch::Contains("GTEST_SHARD_INDEX=0, GTEST_TOTAL_SHARDS=2) is shard 0/2"));
  CHECK_THAT(refusal({{"JOB_COMPLETION_INDEX", "2"}}, "1/3"),
             Catch::Contains("Kubernetes (JOB_COMPLETION_INDEX=2) is shard 2/3"));
  CHECK_THAT(refusal({{"SLURM_ARRAY_TASK_ID", "1"},
                      {"SLURM_ARRAY_TASK_COUNT", "2"},
                      {"SLURM_ARRAY_TASK_MIN", "0"},
                      {"JOB_COMPLETION_INDEX", "0"},
                      {"CUPARITY_TOTAL_SHARDS", "2"}}),
             Catch::Contains("disagree"));
}

TEST_CASE("an index out of range, a count that is no positive number, a half are refused",
          "[shards]") {
  CHECK_THAT(refusal({{"CI_NODE_INDEX", "0"}, {"CI_NODE_TOTAL", "4"}}),
             Catch::Contains("CI_NODE_INDEX=0 is out of range for CI_NODE_TOTAL=4"));
  CHECK_THAT(refusal({{"CI_NODE_INDEX", "5"}, {"CI_NODE_TOTAL", "4"}}),
             Catch::Contains("GitLab numbers shards 1 to 4"));
  CHECK_THAT(refusal({{"BUILDKITE_PARALLEL_JOB", "4"}, {"BUILDKITE_PARALLEL_JOB_COUNT", "4"}}),
             Catch::Contains("BUILDKITE_PARALLEL_JOB=4 is out of range"));
  CHECK_THAT(
      refusal({{"GTEST_SHARD_INDEX", "0"}, {"GTEST_TOTAL_SHARDS", "0"}}),
      Catch::Contains("GTEST_TOTAL_SHARDS=0 (GoogleTest) is not a whole number of at least 1"));
  for (const std::string bad : {"-1", "+2", "2x", "", " 2", "99999999999"})
    CHECK_THAT(refusal({{"BUILDKITE_PARALLEL_JOB", "0"}, {"BUILDKITE_PARALLEL_JOB_COUNT", bad}}),
               Catch::Contains("BUILDKITE_PARALLEL_JOB_COUNT=" + bad + " (Buildkite) is not"));
  CHECK_THAT(refusal({{"GTEST_SHARD_INDEX", "1"}}),
             Catch::Contains("GTEST_SHARD_INDEX=1 is set without GTEST_TOTAL_SHARDS"));
  CHECK_THAT(refusal({{"BUILDKITE_PARALLEL_JOB_COUNT", "2"}}),
             Catch::Contains("is set without BUILDKITE_PARALLEL_JOB"));
  CHECK_THAT(refusal({{"CUPARITY_TOTAL_SHARDS", "2"}}),
             Catch::Contains("CUPARITY_TOTAL_SHARDS=2 is set without JOB_COMPLETION_INDEX"));
  CHECK_THAT(refusal({{"JOB_COMPLETION_INDEX", "3"}, {"CUPARITY_TOTAL_SHARDS", "3"}}),
             Catch::Contains("JOB_COMPLETION_INDEX=3 is out of range for CUPARITY_TOTAL_SHARDS=3"));
  CHECK_THAT(refusal({{"JOB_COMPLETION_INDEX", "1"}}),
             Catch::Contains("set CUPARITY_TOTAL_SHARDS"));
  CHECK_THAT(refusal({{"SLURM_ARRAY_TASK_ID", "1"}, {"SLURM_ARRAY_TASK_MIN", "0"}}),
             Catch::Contains("SLURM_ARRAY_TASK_ID=1 is set without SLURM_ARRAY_TASK_COUNT"));
  CHECK_THAT(refusal({{"SLURM_ARRAY_TASK_ID", "4"},
                      {"SLURM_ARRAY_TASK_COUNT", "4"},
                      {"SLURM_ARRAY_TASK_MIN", "0"}}),
             Catch::Contains("is no shard"));
  CHECK_THAT(refusal({{"SLURM_ARRAY_TASK_ID", "2"},
                      {"SLURM_ARRAY_TASK_COUNT", "4"},
                      {"SLURM_ARRAY_TASK_MIN", "1"},
                      {"SLURM_ARRAY_TASK_STEP", "2"}}),
             Catch::Contains("SLURM_ARRAY_TASK_STEP=2) is no shard"));
  CHECK_THAT(refusal({{"SLURM_ARRAY_TASK_ID", "0"},
                      {"SLURM_ARRAY_TASK_COUNT", "4"},
                      {"SLURM_ARRAY_TASK_MIN", "1"}}),
             Catch::Contains("is no shard"));
  CHECK_THAT(refusal({}, "2/2"), Catch::Contains("--shard: shard '2/2' is not K/N"));
}

namespace {

/// Durations with ties and a spread like a real run's: a few long cases among many short.
std::vector<double> sample_durations(std::size_t n) {
  std::vector<double> d;
  unsigned x = 12345;
  for (std::size_t i = 0; i < n; ++i) {
    x = x * 1103515245u + 12345u;
    d.push_back(i % 17 == 0 ? 900.0 + (x >> 16) % 400 : static_cast<double>((x >> 16) % 60));
  }
  return d;
}

double spread(const std::vector<double> &loads) {
  const auto [lo, hi] = std::minmax_element(loads.begin(), loads.end());
  return *lo > 0 ? *hi / *lo : 0;
}

} // namespace

TEST_CASE("the time deal gives every pair one shard, the same in every process", "[shards]") {
  for (const std::size_t pairs : {1u, 7u, 64u, 301u})
    for (int n : {1, 2, 3, 4, 5, 8, 9}) {
      INFO(pairs << " pairs over " << n << " shards");
      const auto d = sample_durations(pairs);
      const auto owner = deal_by_time(d, n);
      REQUIRE(owner.size() == pairs);
      for (int k : owner)
        CHECK((k >= 0 && k < n));
      CHECK(deal_by_time(d, n) == owner); // deterministic
      // Shards selected one by one, as each shard's process does, cover every pair once.
      std::vector<int> seen(pairs, 0);
      for (int k = 0; k < n; ++k)
        for (std::size_t i = 0; i < pairs; ++i)
          seen[i] += owner[i] == k;
      CHECK(std::all_of(seen.begin(), seen.end(), [](int s) { return s == 1; }));
      if (pairs >= 301)
        CHECK(spread(shard_loads(d, owner, n)) <= 1.10);
    }
  // Ties go in pair order, onto the lowest shard.
  CHECK(deal_by_time({5, 5, 5, 5}, 2) == std::vector<int>{0, 1, 0, 1});
  CHECK(deal_by_time({1, 9, 1, 1}, 2) == std::vector<int>{1, 0, 1, 1});
}

TEST_CASE("a pair the previous run lacks costs its median", "[shards]") {
  pair_durations known;
  known.ms = {{{"a", "x"}, 10}, {{"a", "y"}, 30}, {{"b", "x"}, 1000}};
  CHECK(planned_durations({{"a", "x"}, {"c", "new"}, {"b", "x"}}, known) ==
        std::vector<double>{10, 30, 1000});
  shard_spec round_robin{1, 3, nullptr};
  CHECK(shard_owners({{"a", "x"}, {"a", "y"}, {"b", "x"}, {"c", "z"}}, round_robin) ==
        std::vector<int>{0, 1, 2, 0});
}

namespace {

const std::string committed_run =
    std::string(CUPARITY_SOURCE_DIR) + "/reports/runs/2026-12-06-h200-cd9f781";

/// The run's plan as its header names it: cells x cases, in that order.
std::vector<case_key> committed_plan() {
  const auto file = read_results(committed_run + "/results.jsonl.gz");
  REQUIRE_FALSE(file.records.empty());
  const auto &plan = file.records.front().at("plan");
  std::vector<case_key> pairs;
  for (const auto &c : plan.at("cells"))
    for (const auto &id : plan.at("cases"))
      pairs.emplace_back(c.at("id").get<std::string>(), id.get<std::string>());
  return pairs;
}

} // namespace

TEST_CASE("by time, the shards of a committed H200 run are within 10 % of each other", "[shards]") {
  const auto pairs = committed_plan();
  REQUIRE(pairs.size() == 1080);
  auto known = std::make_shared<const pair_durations>(read_pair_durations(committed_run));
  const auto durations = planned_durations(pairs, *known);
  for (int n : {2, 4, 8}) {
    const auto round_robin = shard_loads(durations, shard_owners(pairs, {0, n, nullptr}), n);
    const auto by_time = shard_loads(durations, shard_owners(pairs, {0, n, known}), n);
    // What docs/commands.md#sharding-several-gpus-several-machines states.
    INFO("N=" << n << ": round-robin max/min " << spread(round_robin) << ", by time "
              << spread(by_time));
    CHECK(spread(by_time) <= 1.10);
    CHECK(spread(by_time) < spread(round_robin));
  }
}

TEST_CASE("--shard-by-time refuses a run it cannot read, naming it", "[shards]") {
  const fs::path dir = fs::temp_directory_path() / "cuparity-shard-tests";
  fs::remove_all(dir);
  fs::create_directories(dir / "empty");
  const auto message = [](const std::string &path) {
    try {
      (void)read_pair_durations(path);
    } catch (const std::invalid_argument &e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK_THAT(message((dir / "nope").string()), Catch::Contains((dir / "nope").string()));
  CHECK_THAT(message((dir / "empty").string()),
             Catch::Contains("holds no results.jsonl or results.jsonl.gz"));
  std::ofstream(dir / "empty" / "results.jsonl") << "not json\n";
  CHECK_THAT(message((dir / "empty").string()), Catch::Contains("results.jsonl:1"));
  // Refused on the command line too, before anything runs: exit 2, naming the path.
  const auto run =
      test::run_cuparity({"run", std::string(CUPARITY_SOURCE_DIR) + "/matrices/smoke.toml",
                          "--shard", "0/2", "--shard-by-time", (dir / "nope").string()},
                         {});
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.err, Catch::Contains("--shard-by-time " + (dir / "nope").string()));
  const auto unsharded =
      test::run_cuparity({"run", std::string(CUPARITY_SOURCE_DIR) + "/matrices/smoke.toml",
                          "--shard-by-time", committed_run},
                         {});
  CHECK(unsharded.exit_code == 2);
  CHECK_THAT(unsharded.err, Catch::Contains("needs a shard"));
  const auto disagree = test::run_cuparity(
      {"run", std::string(CUPARITY_SOURCE_DIR) + "/matrices/smoke.toml", "--shard", "0/2"},
      {{"CI_NODE_INDEX", "2"}, {"CI_NODE_TOTAL", "2"}});
  CHECK(disagree.exit_code == 2);
  CHECK_THAT(disagree.err, Catch::Contains("--shard 0/2 is shard 0/2, GitLab (CI_NODE_INDEX=2, "
                                           "CI_NODE_TOTAL=2) is shard 1/2"));
}
