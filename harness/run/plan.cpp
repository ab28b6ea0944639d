// Planning a run: case selection, shards and the resume skip set.
#include "harness/run/plan.hpp"

#include "harness/config/shipped_matrices.hpp"
#include "harness/framework/case_registry.hpp"
#include "harness/platform/self_exe.hpp"
#include "harness/probes/probe_registry.hpp"
#include "harness/protocol/case_ids.hpp"
#include "harness/protocol/records.hpp"
#include "harness/run/shard_env.hpp"
#include "harness/run/shard_timing.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <stdexcept>

namespace cuparity {

shard_spec parse_shard(const std::string &text) {
  auto slash = text.find('/');
  try {
    if (slash != std::string::npos) {
      std::size_t a = 0, b = 0;
      int k = std::stoi(text.substr(0, slash), &a);
      int n = std::stoi(text.substr(slash + 1), &b);
      if (a == slash && b == text.size() - slash - 1 && n >= 1 && k >= 0 && k < n)
        return {k, n};
    }
  } catch (const std::exception &) {
  }
  throw std::invalid_argument("shard '" + text + "' is not K/N with 0 <= K < N (e.g. 0/4)");
}

std::optional<shard_spec> shard_from_environment() {
  return decide_shard(std::nullopt, process_environment()).shard;
}

std::string shard_text(const std::optional<shard_spec> &shard) {
  if (!shard)
    return "";
  const std::string k_of_n = std::to_string(shard->index) + "/" + std::to_string(shard->count);
  return shard->by_time ? k_of_n + " by time " + shard->by_time->id : k_of_n;
}

bool known_case_glob(const std::string &glob) {
  for (const auto &c : case_registry::instance().all())
    if (case_matches(c.id, glob))
      return true;
  return false;
}

std::optional<matrix> load_known_matrix(const std::string &path, std::string_view command) {
  const auto known_probe = [](const std::string &g) {
    return probe_registry::instance().matches_any(g);
  };
  // A shipped matrix may be named without its path ("smoke"): an installed cuparity has no clone.
  const std::string exe_dir = std::filesystem::path(self_executable()).parent_path().string();
  return load_matrix_reporting(resolve_matrix_argument(path, exe_dir), known_case_glob, known_probe,
                               std::cerr, command);
}

std::optional<std::string> unknown_cell(const matrix &m, const std::vector<std::string> &ids) {
  for (const auto &id : ids)
    if (std::none_of(m.cells.begin(), m.cells.end(), [&](const cell &c) { return c.id == id; }))
      return id;
  return std::nullopt;
}

std::set<case_key> recorded_cases(const std::vector<nlohmann::json> &records) {
  std::set<case_key> done;
  for (const auto &r : records)
    if (is_record(r, record_type::case_result))
      done.insert({r.value("cell", ""), r.value("case", "")});
    else if (is_record(r, record_type::suite_end)) // a suite is done once it ended, not per test
      done.insert({r.value("cell", ""), suite_pair_id(r.value("suite", ""))});
  return done;
}

namespace {

/// The matrix's case selection, narrowed to `globs` when there are any.
std::vector<const case_def *> selected_cases(const matrix &m,
                                             const std::vector<std::string> &globs) {
  auto selected = case_registry::instance().select(m.cases, m.exclude_cases);
  if (!globs.empty()) {
    std::erase_if(selected, [&](const case_def *d) {
      return std::none_of(globs.begin(), globs.end(),
                          [&](const std::string &g) { return case_matches(d->id, g); });
    });
  }
  return selected;
}

bool wanted_cell(const plan_filter &filter, const cell &c) {
  return filter.cells.empty() ||
         std::find(filter.cells.begin(), filter.cells.end(), c.id) != filter.cells.end();
}

} // namespace

namespace {

/// Calls `f(cell, case id)` for every pair of the plan in order, done or not.
template <typename F> void for_each_planned(const matrix &m, const plan_filter &filter, F &&f) {
  // Every pair is numbered, whether its cell is wanted or not, so that --cell keeps each pair in
  // its shard. With suites, a suite's tests are known only once it runs: the plan holds one pair
  // per (cell, suite).
  std::vector<std::pair<const cell *, std::string>> all;
  if (!m.suites.empty()) {
    for (const auto &c : m.cells)
      for (const auto &x : m.suites)
        all.emplace_back(&c, suite_pair_id(x.name));
  } else {
    const auto selected = selected_cases(m, filter.cases);
    for (const auto &c : m.cells)
      for (const case_def *d : selected)
        all.emplace_back(&c, d->id);
  }
  std::vector<int> owner;
  if (filter.shard) {
    std::vector<case_key> keys;
    keys.reserve(all.size());
    for (const auto &[c, id] : all)
      keys.emplace_back(c->id, id);
    owner = shard_owners(keys, *filter.shard);
  }
  for (std::size_t i = 0; i < all.size(); ++i)
    if (wanted_cell(filter, *all[i].first) && (!filter.shard || owner[i] == filter.shard->index))
      f(*all[i].first, all[i].second);
}

} // namespace

std::vector<work_cell> plan_work(const matrix &m, const plan_filter &filter) {
  std::vector<work_cell> work;
  for_each_planned(m, filter, [&](const cell &c, const std::string &case_id) {
    if (filter.done.count({c.id, case_id}))
      return;
    if (work.empty() || work.back().c != &c)
      work.push_back({&c, {}});
    work.back().cases.push_back(case_id);
  });
  return work;
}

double work_cost(const work_cell &w) {
  double cost = 0;
  for (const auto &id : w.cases) {
    const case_def *d = case_registry::instance().find(id);
    cost += d ? d->cost_s : case_def{}.cost_s;
  }
  return cost;
}

void order_by_cost(std::vector<work_cell> &work) {
  std::vector<std::pair<double, work_cell>> costed;
  costed.reserve(work.size());
  for (auto &w : work)
    costed.emplace_back(work_cost(w), std::move(w));
  std::stable_sort(costed.begin(), costed.end(),
                   [](const auto &a, const auto &b) { return a.first > b.first; });
  for (std::size_t i = 0; i < work.size(); ++i)
    work[i] = std::move(costed[i].second);
}

std::vector<planned_pair> planned_pairs(const matrix &m, const plan_filter &filter) {
  std::vector<planned_pair> out;
  for_each_planned(m, filter, [&](const cell &c, const std::string &case_id) {
    out.emplace_back(c.id, case_id);
  });
  return out;
}

std::size_t planned_cases(const std::vector<work_cell> &work) {
  std::size_t n = 0;
  for (const auto &w : work)
    n += w.cases.size();
  return n;
}

} // namespace cuparity
