// `cuparity merge`: the verdict of recorded results, from one directory or several shards.
#include "harness/run/merge.hpp"

#include "harness/protocol/exit_codes.hpp"
#include "harness/protocol/records.hpp"
#include "harness/run/outputs.hpp"
#include "harness/run/plan.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>

namespace cuparity {
namespace fs = std::filesystem;

namespace {

/// The run's facts from its records: the first run record's provenance and start, the longest
/// functional phase (shards run side by side). Every run record must be of matrix `m`.
run_facts facts_of(const matrix &m, const std::vector<nlohmann::json> &records) {
  run_facts facts;
  double wall = 0;
  for (const auto &r : records) {
    if (is_record(r, record_type::run)) {
      if (facts.provenance.is_null()) {
        facts.provenance = r.value("provenance", nlohmann::json::object());
        facts.started = r.value("started", "");
      }
      if (r.value("matrix", "") != m.name)
        throw std::runtime_error("results of matrix '" + r.value("matrix", "") +
                                 "' cannot be summarised with matrix '" + m.name + "'");
    }
    if (is_record(r, record_type::functional_phase))
      wall = std::max(wall, r.value("wall_s", 0.0));
  }
  if (facts.provenance.is_null())
    throw std::runtime_error("no run record in the given result directories");
  facts.functional_wall_s = wall;
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
                      const std::optional<std::string> &latency_baseline) {
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
  std::vector<nlohmann::json> records;
  std::vector<baseline_entry> baseline;
  run_facts facts;
  try {
    records = read_all(result_dirs);
    if (auto path = baseline_path ? baseline_path : loaded->baseline)
      baseline = read_baseline(*path);
    facts = facts_of(*loaded, records);
  } catch (const std::exception &e) {
    return bad(e.what());
  }
  facts.provenance["argv"] = argv;
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  write_merged_results(result_dirs, out_dir, records);
  return write_verdict(*loaded, records, facts, out_dir,
                       {baseline, std::nullopt, latency_base.is_null() ? nullptr : &latency_base});
}

} // namespace cuparity
