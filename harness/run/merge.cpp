// `cuparity merge`: the verdict of recorded results, from one directory or several shards.
#include "harness/run/merge.hpp"

#include "harness/io/gzip_input.hpp"
#include "harness/io/output_file.hpp"
#include "harness/protocol/exit_codes.hpp"
#include "harness/protocol/records.hpp"
#include "harness/run/out_dir.hpp"
#include "harness/run/out_lock.hpp"
#include "harness/run/outputs.hpp"
#include "harness/run/plan.hpp"
#include "harness/run/plan_identity.hpp"

#include <algorithm>
#include <filesystem>
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

bool same_dir(const std::string &a, const std::string &b) {
  std::error_code ec;
  return fs::equivalent(a, b, ec);
}

/// Why the result directories or --out cannot be used, before anything is written (empty: fine).
std::string merge_dirs_problem(const std::vector<std::string> &dirs, const std::string &out) {
  if (out.empty())
    return "--out: an empty path; name the directory to write";
  std::error_code ec;
  for (const auto &d : dirs) {
    if (!fs::is_directory(d, ec))
      return d + ": " + (fs::exists(d, ec) ? "not a directory" : "no such directory") +
             "; name the result directory of each shard";
    const fs::path results = stored_run_file(d, "results.jsonl");
    if (!fs::exists(fs::symlink_status(results, ec)))
      return d + ": holds no results.jsonl (nor results.jsonl.gz); is it the result directory of "
                 "a run?";
    if (!fs::is_regular_file(results, ec))
      return results.string() + ": not a regular file (a FIFO, device or directory)";
  }
  if (fs::exists(out, ec) && !fs::is_directory(out, ec))
    return "--out " + out + ": not a directory";
  if (dirs.size() > 1)
    for (const auto &d : dirs)
      if (same_dir(d, out))
        return "--out " + out + " is one of the shards; the merged results.jsonl would replace " +
               "that shard's own: name another directory";
  return {};
}

/// --out, locked: a directory that holds another run (not the one re-summarised) is refused
/// unless --force, which moves that run's files aside first.
void claim_out_dir(const std::vector<std::string> &dirs, const std::string &out, bool force) {
  if (dirs.size() == 1 && same_dir(dirs[0], out))
    return; // re-summarising one run in place: its summary is this run's to rewrite
  std::error_code ec;
  for (const char *file : {"results.jsonl", "summary.json", "junit.xml"})
    if (fs::exists(fs::symlink_status(fs::path(out) / file, ec))) {
      if (!force)
        throw std::runtime_error("--out " + out + " holds another run (" + file +
                                 "); name an empty directory, or --force to move its files "
                                 "aside");
      set_aside_run_files(out, "merge");
      return;
    }
}

/// Merged shards get one results.jsonl too, so the merged directory reads like a single run.
void write_merged_results(const std::vector<std::string> &result_dirs, const std::string &out_dir,
                          const std::vector<nlohmann::json> &records) {
  if (result_dirs.size() == 1 &&
      fs::weakly_canonical(result_dirs[0]) == fs::weakly_canonical(out_dir))
    return;
  std::string text;
  for (const auto &r : records)
    text += r.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  write_output_file(out_dir + "/results.jsonl", text);
}

} // namespace

int summarize_results(const std::string &matrix_path, const std::vector<std::string> &result_dirs,
                      const std::string &out_dir, const std::optional<std::string> &baseline_path,
                      const std::vector<std::string> &argv,
                      const std::optional<std::string> &latency_baseline,
                      const merge_scope &scope) {
  auto bad = [](const std::string &message) {
    std::cerr << "cuparity merge: " << message << "\n";
    return exit_code::bad_input;
  };
  if (const std::string problem = merge_dirs_problem(result_dirs, out_dir); !problem.empty())
    return bad(problem);
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
    claim_out_dir(result_dirs, out_dir, scope.force);
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
