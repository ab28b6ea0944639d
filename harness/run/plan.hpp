// The plan of a run: which (cell, case) pairs it runs, over shards, less what is recorded.
#pragma once

#include "harness/matrix/matrix.hpp"
#include "harness/verdict/coverage.hpp"

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cuparity {

/// (cell id, case id)
using case_key = std::pair<std::string, std::string>;

/// Each pair's duration in a previous run, in milliseconds (shard_timing.hpp reads them).
struct pair_durations {
  std::map<case_key, double> ms;
  std::string id; ///< a digest of `ms`: shards dealt by other timings are other shards
};

struct shard_spec {
  int index = 0; ///< K, 0-based
  int count = 1; ///< N
  /// --shard-by-time: pairs are dealt by these durations (shard_timing.hpp), not round-robin.
  std::shared_ptr<const pair_durations> by_time;
};

/// Parses "K/N" (0 <= K < N); throws std::invalid_argument with a message naming the text.
[[nodiscard]] shard_spec parse_shard(const std::string &text);

/// The shard the environment's engine variables name (GoogleTest, GitLab, Buildkite, Kubernetes,
/// Slurm: shard_env.hpp); none when none is set. Throws std::invalid_argument when they are no
/// valid shard or disagree.
[[nodiscard]] std::optional<shard_spec> shard_from_environment();

/// "K/N" ("K/N by time <digest>" when dealt by time), or "" without a shard: the shard as
/// results.jsonl and the plan name it.
[[nodiscard]] std::string shard_text(const std::optional<shard_spec> &shard);

/// Whether a glob names any registered case.
[[nodiscard]] bool known_case_glob(const std::string &glob);

/// Loads a matrix whose case and probe globs must name registered ones. When it cannot, prints
/// "cuparity <command>: <error>" to stderr and returns std::nullopt (the caller's exit is bad
/// input).
[[nodiscard]] std::optional<matrix> load_known_matrix(const std::string &path,
                                                      std::string_view command);

/// The first of `ids` that is no cell of `m`, if any.
[[nodiscard]] std::optional<std::string> unknown_cell(const matrix &m,
                                                      const std::vector<std::string> &ids);

/// The pairs that have a case record among `records`: what --resume does not run again.
[[nodiscard]] std::set<case_key> recorded_cases(const std::vector<nlohmann::json> &records);

/// One cell's share of the plan.
struct work_cell {
  const cell *c = nullptr;
  std::vector<std::string> cases;
};

/// What narrows the plan besides the matrix.
struct plan_filter {
  std::vector<std::string> cases; ///< case globs; empty = the matrix's selection
  std::vector<std::string> cells; ///< cell ids; empty = every cell
  std::optional<shard_spec> shard;
  std::set<case_key> done; ///< already recorded
};

/// Cells x selected cases, numbered in that order; pair i belongs to shard i % N, so every shard
/// gets a share of every cell (or to the shard the time deal gives it: shard_timing.hpp). Pairs
/// filtered out, or already done, are dropped, then cells left without a case.
[[nodiscard]] std::vector<work_cell> plan_work(const matrix &m, const plan_filter &filter);

/// The summed cost of a cell's cases (case_def::cost_s; a case the registry lacks costs as little
/// as an ordinary one).
[[nodiscard]] double work_cost(const work_cell &w);

/// Puts the costliest cells first (stable: equal costs keep the matrix's order), so that with
/// fewer jobs than cells the run does not end waiting on one long cell started last.
void order_by_cost(std::vector<work_cell> &work);

/// Every pair the plan holds, recorded or not (`filter.done` is ignored): what the run must
/// cover for its verdict to be complete.
[[nodiscard]] std::vector<planned_pair> planned_pairs(const matrix &m, const plan_filter &filter);

/// How many (cell, case) pairs the plan holds.
[[nodiscard]] std::size_t planned_cases(const std::vector<work_cell> &work);

} // namespace cuparity
