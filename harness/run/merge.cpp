// `cuparity merge`: the verdict of recorded results, from one directory or several shards.
#include "harness/run/merge.hpp"

#include "harness/protocol/exit_codes.hpp"
#include "harness/protocol/records.hpp"
#include "harness/run/out_lock.hpp"
#include "harness/run/outputs.hpp"
#include "harness/run/plan.hpp"
#include "harness/run/plan_identity.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <stdexcept>

namespace cuparity {
namespace fs = std::filesystem;

namespace {

/// Every run record must be of `m`'s plan: the same cells with the same environment and the
/// same case selection, and all of them of one driver and one binary.
void check_plans(const matrix &m, const std::vector<nlohmann::json> &records) {
  const nlohmann::json own = plan_description(m, {}, nlohmann::json::object());
  const nlohmann::json *first = nullptr;
  for (const auto &r : records) {
    if (!is_record(r, record_type::run))
      continue;
    if (r["matrix"] != m.name)
      throw std::runtime_error("results of matrix '" + r["matrix"].get<std::string>() +
                               "' cannot be summarised with matrix '" + m.name + "'");
    if (!r.contains("plan"))
      continue; // an older cuparity: coverage still checks every pair
    if (auto d = plan_difference(r["plan"], own, {"matrix", "cells", "cases"}); !d.empty())
      throw std::runtime_error("results of another plan than " + m.path + ": " + d);
    if (!first)
      first = &r["plan"];
    else if (auto d2 = plan_difference(*first, r["plan"], {"driver", "binary"}); !d2.empty())
      throw std::runtime_error("the result directories come from different runs: " + d2);
  }
}

/// The run's facts from its records: the first run record's provenance and start.
run_facts facts_of(const matrix &m, const recorded_results &recorded) {
  check_plans(m, recorded.records);
  run_facts facts;
  for (const auto &r : recorded.records)
    if (is_record(r, record_type::run)) {
      facts.provenance = r["provenance"];
      facts.started = r["started"].get<std::string>();
      break;
    }
  if (facts.provenance.is_null())
    throw std::runtime_error("no run record in the given result directories");
  facts.functional_wall_s = recorded.functional_wall_s;
  return facts;
}

/// Merged shards get one results.jsonl too, so the merged directory reads like a single run.
void write_merged_results(const std::vector<std::string> &result_dirs, const std::string &out_dir,
                          const std::vector<nlohmann::json> &records) {
  if (result_dirs.size() == 1 &&
      fs::weakly_canonical(result_dirs[0]) == fs::weakly_canonical(out_dir))
    return;
  std::ofstream merged(out_dir + "/results.jsonl");
  for (const auto &r : records)
    merged << r.dump() << "\n";
}

} // namespace

int summarize_results(const std::string &matrix_path, const std::vector<std::string> &result_dirs,
                      const std::string &out_dir, const std::optional<std::string> &baseline_path,
                      const std::vector<std::string> &argv,
                      const std::optional<std::string> &latency_baseline,
                      const merge_scope &scope) {
  auto bad = [](const std::string &message) {
    std::cerr << "cuparity: " << message << "\n";
    return exit_code::bad_input;
  };
  nlohmann::json latency_base;
  try {
    if (latency_baseline)
      latency_base = read_summary(*latency_baseline);
  } catch (const std::exception &e) {
    return bad(e.what());
  }
  const auto loaded = load_known_matrix(matrix_path, "");
  if (!loaded)
    return exit_code::bad_input;
  if (auto id = unknown_cell(*loaded, scope.cells))
    return bad("--cell '" + *id + "' is not a cell of " + matrix_path);
  recorded_results recorded;
  std::vector<baseline_entry> baseline;
  run_facts facts;
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  std::unique_ptr<out_lock> lock;
  try {
    lock = std::make_unique<out_lock>(out_dir);
    recorded = read_all(result_dirs);
    if (auto path = baseline_path ? baseline_path : loaded->baseline)
      baseline = read_baseline(*path);
    facts = facts_of(*loaded, recorded);
  } catch (const std::exception &e) {
    return bad(e.what());
  }
  facts.provenance["argv"] = argv;
  write_merged_results(result_dirs, out_dir, recorded.records);
  const auto planned = planned_pairs(*loaded, {scope.cases, scope.cells, std::nullopt, {}});
  return write_verdict(
      *loaded, recorded.records, facts, out_dir,
      {planned, baseline, std::nullopt, latency_base.is_null() ? nullptr : &latency_base});
}

} // namespace cuparity
