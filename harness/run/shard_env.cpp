// Which shard a run is: --shard, or the index and count a CI engine or batch scheduler sets.
//
// The variables, as each engine documents them:
// - GoogleTest: GTEST_SHARD_INDEX (0-based) and GTEST_TOTAL_SHARDS, as test schedulers set them
//   (google/googletest docs/advanced.md, "Distributing Test Functions to Multiple Machines").
// - GitLab CI, a job with `parallel: N`: CI_NODE_INDEX, 1-based, and CI_NODE_TOTAL. Every other
//   job has CI_NODE_TOTAL=1 and no CI_NODE_INDEX
//   (docs.gitlab.com/ci/variables/predefined_variables/).
// - Buildkite, a step with `parallelism: N`: BUILDKITE_PARALLEL_JOB, 0-based, and
//   BUILDKITE_PARALLEL_JOB_COUNT (buildkite.com/docs/pipelines/environment-variables).
// - Kubernetes, a Job with completionMode: Indexed: JOB_COMPLETION_INDEX, 0-based, set by the
//   control plane from the pod's batch.kubernetes.io/job-completion-index annotation. The count
//   (spec.completions) is in no variable of the pod (kubernetes.io/docs/tasks/job/
//   indexed-parallel-processing-static/), so the Job's own env gives it: CUPARITY_TOTAL_SHARDS.
// - Slurm, a job array (sbatch --array): SLURM_ARRAY_TASK_ID, with SLURM_ARRAY_TASK_COUNT,
//   SLURM_ARRAY_TASK_MIN and SLURM_ARRAY_TASK_STEP (slurm.schedmd.com/job_array.html, sbatch(1)
//   OUTPUT ENVIRONMENT VARIABLES). Ids need not start at 0 (--array=1-8) nor be dense
//   (--array=0-14:2): the shard is (ID - MIN) / STEP.
#include "harness/run/shard_env.hpp"

#include <charconv>
#include <stdexcept>

namespace cuparity {

namespace {

/// One variable as it was set: "NAME=value".
struct env_setting {
  std::string name;
  std::optional<std::string> value;
  [[nodiscard]] std::string text() const { return name + "=" + value.value_or(""); }
};

env_setting read_setting(const env_reader &env, const std::string &name) {
  return {name, env(name)};
}

[[noreturn]] void refuse_shard(const std::string &message) {
  throw std::invalid_argument(message);
}

/// A whole number >= `least`: digits only (no sign, no blanks), within int.
int whole_of(const env_setting &s, int least, const std::string &engine) {
  const std::string &v = *s.value;
  int n = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (v.empty() || v.front() == '-' || v.front() == '+' || ec != std::errc() ||
      end != v.data() + v.size() || n < least)
    refuse_shard(s.text() + " (" + engine + ") is not a whole number" +
                 (least > 0 ? " of at least " + std::to_string(least) : std::string()));
  return n;
}

/// Index and count both set, or neither.
bool both_or_neither(const env_setting &index, const env_setting &count,
                     const std::string &engine) {
  if (index.value.has_value() != count.value.has_value())
    refuse_shard(engine + ": " + (index.value ? index.text() : count.text()) + " is set without " +
                 (index.value ? count.name : index.name) + "; set both or neither");
  return index.value.has_value();
}

std::string engine_source(const std::string &engine, const std::vector<env_setting> &vars) {
  std::string out = engine + " (";
  for (std::size_t i = 0; i < vars.size(); ++i)
    out += (i ? ", " : "") + vars[i].text();
  return out + ")";
}

/// `first` is the engine's first index (0 or 1).
shard_reading index_and_count(const env_setting &index, const env_setting &count, int first,
                              const std::string &engine) {
  const int k = whole_of(index, 0, engine);
  const int n = whole_of(count, 1, engine);
  if (k < first || k - first >= n)
    refuse_shard(engine + ": " + index.text() + " is out of range for " + count.text() + " (" +
                 engine + " numbers shards " + std::to_string(first) + " to " +
                 std::to_string(n - 1 + first) + ")");
  return {engine_source(engine, {index, count}), k - first, n};
}

/// An engine that names its shard by an index variable (numbered from `first`) and a count.
std::optional<shard_reading> index_pair(const env_reader &env, const char *index, const char *count,
                                        int first, const std::string &engine) {
  const env_setting k = read_setting(env, index), n = read_setting(env, count);
  if (!both_or_neither(k, n, engine))
    return std::nullopt;
  return index_and_count(k, n, first, engine);
}

std::optional<shard_reading> googletest(const env_reader &env) {
  return index_pair(env, "GTEST_SHARD_INDEX", "GTEST_TOTAL_SHARDS", 0, "GoogleTest");
}

std::optional<shard_reading> gitlab(const env_reader &env) {
  // GitLab sets CI_NODE_TOTAL=1 in every job that is not parallel: that is no shard.
  if (!read_setting(env, "CI_NODE_INDEX").value && read_setting(env, "CI_NODE_TOTAL").value == "1")
    return std::nullopt;
  return index_pair(env, "CI_NODE_INDEX", "CI_NODE_TOTAL", 1, "GitLab");
}

std::optional<shard_reading> buildkite(const env_reader &env) {
  return index_pair(env, "BUILDKITE_PARALLEL_JOB", "BUILDKITE_PARALLEL_JOB_COUNT", 0, "Buildkite");
}

std::optional<shard_reading> kubernetes(const env_reader &env) {
  const env_setting k = read_setting(env, "JOB_COMPLETION_INDEX"),
                    n = read_setting(env, "CUPARITY_TOTAL_SHARDS");
  if (!k.value && n.value)
    refuse_shard("Kubernetes: " + n.text() +
                 " is set without JOB_COMPLETION_INDEX (an Indexed Job's "
                 "index); set both or neither");
  if (!k.value)
    return std::nullopt;
  if (n.value)
    return index_and_count(k, n, 0, "Kubernetes");
  return shard_reading{engine_source("Kubernetes", {k}), whole_of(k, 0, "Kubernetes"),
                       std::nullopt};
}

std::optional<shard_reading> slurm(const env_reader &env) {
  const env_setting id = read_setting(env, "SLURM_ARRAY_TASK_ID"),
                    count = read_setting(env, "SLURM_ARRAY_TASK_COUNT"),
                    min = read_setting(env, "SLURM_ARRAY_TASK_MIN"),
                    step = read_setting(env, "SLURM_ARRAY_TASK_STEP");
  if (!id.value)
    return std::nullopt;
  for (const env_setting *s : {&count, &min})
    if (!s->value)
      refuse_shard("Slurm: " + id.text() + " is set without " + s->name);
  const int i = whole_of(id, 0, "Slurm"), n = whole_of(count, 1, "Slurm"),
            lo = whole_of(min, 0, "Slurm");
  const int by = step.value ? whole_of(step, 1, "Slurm") : 1;
  std::vector<env_setting> vars{id, count, min};
  if (step.value)
    vars.push_back(step);
  const int k = (i - lo) / by;
  if (i < lo || (i - lo) % by != 0 || k >= n)
    refuse_shard(engine_source("Slurm", vars) +
                 " is no shard: (ID - MIN) / STEP must be a whole number below " +
                 "the count; give the array as a range (sbatch --array=0-" + std::to_string(n - 1) +
                 ")");
  return shard_reading{engine_source("Slurm", vars), k, n};
}

std::string shard_named(const shard_reading &r, int count) {
  return std::to_string(r.index) + "/" + std::to_string(r.count.value_or(count));
}

} // namespace

std::vector<shard_reading> engine_shard_readings(const env_reader &env) {
  std::vector<shard_reading> out;
  for (const auto &engine : {googletest, gitlab, buildkite, kubernetes, slurm})
    if (auto r = engine(env))
      out.push_back(std::move(*r));
  return out;
}

decided_shard decide_shard(const std::optional<std::string> &option, const env_reader &env) {
  std::vector<shard_reading> readings;
  if (option) {
    shard_spec s;
    try {
      s = parse_shard(*option);
    } catch (const std::invalid_argument &e) {
      refuse_shard(std::string("--shard: ") + e.what());
    }
    readings.push_back({"--shard " + *option, s.index, s.count});
  }
  for (auto &r : engine_shard_readings(env))
    readings.push_back(std::move(r));
  if (readings.empty())
    return {};
  const shard_reading *first = nullptr; // the first reading that has a count
  for (const auto &r : readings)
    if (!first && r.count)
      first = &r;
  if (!first)
    refuse_shard(
        readings.front().source + " gives no shard count: a Kubernetes Indexed Job does not " +
        "put spec.completions in its pods' environment; set CUPARITY_TOTAL_SHARDS to it in " +
        "the Job's env, or pass --shard K/N");
  decided_shard out{shard_spec{first->index, *first->count}, ""};
  for (const auto &r : readings) {
    if (r.index != first->index || (r.count && *r.count != *first->count))
      refuse_shard("the shard's sources disagree: " + first->source + " is shard " +
                   shard_named(*first, *first->count) + ", " + r.source + " is shard " +
                   shard_named(r, *first->count));
    out.source += (out.source.empty() ? "" : " = ") + r.source;
  }
  return out;
}

} // namespace cuparity
