// Which shard a run is: --shard, or the index and count a CI engine or batch scheduler sets.
#pragma once

#include "harness/config/env_vars.hpp"
#include "harness/run/plan.hpp"

#include <optional>
#include <string>
#include <vector>

namespace cuparity {

/// The variables are read through an env_lookup (harness/config/env_vars.hpp): the process's
/// own environment, or a map in tests.
using env_reader = env_lookup;

/// One place that names a shard: --shard or one engine's variables.
struct shard_reading {
  std::string source;       ///< e.g. "GitLab (CI_NODE_INDEX=2, CI_NODE_TOTAL=4)"
  int index = 0;            ///< 0-based
  std::optional<int> count; ///< none where the engine does not say (a Kubernetes Indexed Job)
};

/// The shard of a run, and what decided it.
struct decided_shard {
  std::optional<shard_spec> shard;
  std::string source; ///< the readings that agree on it, joined; "" without a shard
};

/// Every engine's reading of `env` (GoogleTest, GitLab, Buildkite, Kubernetes, Slurm), in that
/// order. Throws std::invalid_argument naming the variables and their values when an engine's
/// variables are set but no shard: one without the other, not a whole number, a count below 1,
/// an index out of range.
[[nodiscard]] std::vector<shard_reading> engine_shard_readings(const env_reader &env);

/// The shard from `option` (--shard's text, when given) and every engine's variables. Readings
/// that agree are one shard; two that disagree are refused with std::invalid_argument naming
/// both (variables and values), as is a reading without a count when nothing else gives one.
[[nodiscard]] decided_shard decide_shard(const std::optional<std::string> &option,
                                         const env_reader &env);

} // namespace cuparity
