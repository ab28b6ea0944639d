// Dealing (cell, case) pairs to shards: round-robin, or by a previous run's durations.
#pragma once

#include "harness/run/plan.hpp"

#include <string>
#include <vector>

namespace cuparity {

/// Each pair's duration in the run at `run`: a run folder (its results.jsonl, or the stored
/// results.jsonl.gz) or a results file. A case record gives its duration_ms, a suite's end its
/// wall_ms for the pair (cell, "<suite>.*"); the last record of a pair counts. Throws
/// std::invalid_argument naming the path when it is missing or unreadable, or holds no duration.
[[nodiscard]] pair_durations read_pair_durations(const std::string &run);

/// Longest processing time first: pairs by duration, longest first (ties in pair order), each
/// onto the shard with the least summed duration so far (ties: the lowest shard). Element i is
/// the shard of pair i. The same input deals the same way in every shard's process.
[[nodiscard]] std::vector<int> deal_by_time(const std::vector<double> &durations, int count);

/// Each pair's duration from `known`; a pair it lacks gets the median of `known`'s durations.
[[nodiscard]] std::vector<double> planned_durations(const std::vector<case_key> &pairs,
                                                    const pair_durations &known);

/// The shard of each of `pairs` (in plan order): i % N, or the time deal when the shard has one.
[[nodiscard]] std::vector<int> shard_owners(const std::vector<case_key> &pairs,
                                            const shard_spec &shard);

/// Each shard's summed duration under `owners`.
[[nodiscard]] std::vector<double> shard_loads(const std::vector<double> &durations,
                                              const std::vector<int> &owners, int count);

} // namespace cuparity
