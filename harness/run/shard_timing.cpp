// Dealing (cell, case) pairs to shards: round-robin, or by a previous run's durations.
#include "harness/run/shard_timing.hpp"

#include "harness/io/gzip_input.hpp"
#include "harness/protocol/case_ids.hpp"
#include "harness/protocol/records.hpp"
#include "harness/protocol/results.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <stdexcept>

namespace cuparity {
namespace fs = std::filesystem;

namespace {

/// FNV-1a, 64 bits: a short name for a set of timings that is the same in every process.
std::string timing_digest(const std::map<case_key, double> &ms) {
  std::uint64_t h = 14695981039346656037ull;
  const auto mix = [&h](const std::string &s) {
    for (unsigned char c : s + '\n')
      h = (h ^ c) * 1099511628211ull;
  };
  for (const auto &[key, d] : ms) {
    mix(key.first);
    mix(key.second);
    mix(std::to_string(static_cast<long long>(d * 1000)));
  }
  char out[9];
  std::snprintf(out, sizeof out, "%08llx", static_cast<unsigned long long>(h >> 32));
  return out;
}

/// A record's duration member as a number of ms, if it has one.
std::optional<double> member_ms(const nlohmann::json &r, const char *key) {
  const auto it = r.find(key);
  if (it == r.end() || !it->is_number())
    return std::nullopt;
  return std::max(0.0, it->get<double>());
}

} // namespace

pair_durations read_pair_durations(const std::string &run) {
  const std::string where = "--shard-by-time " + run;
  std::error_code ec;
  if (!fs::exists(run, ec))
    throw std::invalid_argument(where + ": no such run folder");
  const std::string path = fs::is_directory(run, ec) ? stored_run_file(run, "results.jsonl") : run;
  if (!fs::exists(path, ec))
    throw std::invalid_argument(where + ": holds no results.jsonl or results.jsonl.gz");
  results_file file;
  try {
    file = read_results(path);
  } catch (const std::exception &e) {
    throw std::invalid_argument(where + ": " + e.what());
  }
  pair_durations out;
  for (const auto &r : file.records) {
    if (is_record(r, record_type::case_result)) {
      if (auto d = member_ms(r, "duration_ms"))
        out.ms[{r.value("cell", ""), r.value("case", "")}] = *d;
    } else if (is_record(r, record_type::suite_end)) {
      if (auto d = member_ms(r, "wall_ms"))
        out.ms[{r.value("cell", ""), suite_pair_id(r.value("suite", ""))}] = *d;
    }
  }
  if (out.ms.empty())
    throw std::invalid_argument(where + ": " + path + " records no case duration");
  out.id = timing_digest(out.ms);
  return out;
}

std::vector<int> deal_by_time(const std::vector<double> &durations, int count) {
  std::vector<std::size_t> order(durations.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return durations[a] > durations[b]; });
  std::vector<double> load(static_cast<std::size_t>(std::max(count, 1)), 0.0);
  std::vector<int> owner(durations.size(), 0);
  for (const std::size_t i : order) {
    const auto least = std::min_element(load.begin(), load.end()); // the first of equals
    *least += durations[i];
    owner[i] = static_cast<int>(least - load.begin());
  }
  return owner;
}

std::vector<double> planned_durations(const std::vector<case_key> &pairs,
                                      const pair_durations &known) {
  std::vector<double> all;
  all.reserve(known.ms.size());
  for (const auto &[key, d] : known.ms)
    all.push_back(d);
  std::sort(all.begin(), all.end());
  const double median =
      all.empty() ? 0.0
                  : (all.size() % 2 ? all[all.size() / 2]
                                    : (all[all.size() / 2 - 1] + all[all.size() / 2]) / 2);
  std::vector<double> out;
  out.reserve(pairs.size());
  for (const auto &p : pairs) {
    const auto it = known.ms.find(p);
    out.push_back(it == known.ms.end() ? median : it->second);
  }
  return out;
}

std::vector<int> shard_owners(const std::vector<case_key> &pairs, const shard_spec &shard) {
  if (shard.by_time)
    return deal_by_time(planned_durations(pairs, *shard.by_time), shard.count);
  std::vector<int> owner(pairs.size());
  for (std::size_t i = 0; i < pairs.size(); ++i)
    owner[i] = static_cast<int>(i % static_cast<std::size_t>(shard.count));
  return owner;
}

std::vector<double> shard_loads(const std::vector<double> &durations,
                                const std::vector<int> &owners, int count) {
  std::vector<double> load(static_cast<std::size_t>(std::max(count, 1)), 0.0);
  for (std::size_t i = 0; i < durations.size() && i < owners.size(); ++i)
    load[static_cast<std::size_t>(owners[i])] += durations[i];
  return load;
}

} // namespace cuparity
