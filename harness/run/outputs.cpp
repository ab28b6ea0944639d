// Reading recorded results and writing the verdict's files.
#include "harness/run/outputs.hpp"

#include "harness/framework/case_registry.hpp"
#include "harness/io/gzip_input.hpp"
#include "harness/io/input_file.hpp"
#include "harness/io/json_input.hpp"
#include "harness/io/output_file.hpp"
#include "harness/latency/latency_phase.hpp"
#include "harness/latency/recorded_latency.hpp"
#include "harness/protocol/records.hpp"
#include "harness/protocol/results.hpp"
#include "harness/run/provenance.hpp"
#include "harness/verdict/compare.hpp"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <stdexcept>

namespace cuparity {

namespace {

bool is_latency_record(const nlohmann::json &r) {
  const auto t = record_type_of(r);
  return t == record_type::latency_environment || t == record_type::latency_sample ||
         t == record_type::latency_pairs || t == record_type::latency_cell ||
         t == record_type::latency_error || t == record_type::latency_phase;
}

/// One file's records less the latency records of every attempt but the last one that has
/// any: an attempt starts at a run or resume record.
std::vector<nlohmann::json> latest_latency_attempt(std::vector<nlohmann::json> records) {
  std::size_t attempt_start = 0, latest = 0;
  bool any = false;
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (is_record(records[i], record_type::run) || is_record(records[i], record_type::resume))
      attempt_start = i;
    else if (is_latency_record(records[i]))
      latest = attempt_start, any = true;
  }
  if (!any)
    return records;
  std::vector<nlohmann::json> out;
  for (std::size_t i = 0; i < records.size(); ++i)
    if (i >= latest || !is_latency_record(records[i]))
      out.push_back(std::move(records[i]));
  return out;
}

} // namespace

recorded_results read_all(const std::vector<std::string> &dirs) {
  recorded_results out;
  for (const auto &d : dirs) {
    const std::string path = stored_run_file(d, "results.jsonl");
    auto f = read_results(path);
    if (f.truncated_tail)
      std::cerr << "cuparity: " << path << " ends in a cut-off record (a killed run); "
                << "it is ignored\n";
    double wall = 0;
    for (const auto &r : f.records)
      if (is_record(r, record_type::functional_phase))
        wall += r["wall_s"].get<double>();
    out.functional_wall_s = std::max(out.functional_wall_s, wall);
    auto kept = latest_latency_attempt(std::move(f.records));
    out.records.insert(out.records.end(), std::make_move_iterator(kept.begin()),
                       std::make_move_iterator(kept.end()));
  }
  return out;
}

nlohmann::json read_summary(const std::string &path) {
  const nlohmann::json j = read_json_file(path, "the latency baseline");
  if (j.value("schema", "") != summary_schema)
    throw std::runtime_error(path + ": schema '" + j.value("schema", "") + "' is not " +
                             summary_schema);
  // Checked now, before a run, rather than when the latency summary compares against it.
  try {
    (void)read_recorded_latency(j.contains("latency") ? j["latency"] : nlohmann::json());
  } catch (const json_input_error &e) {
    throw std::runtime_error(path + ": " + e.what());
  }
  return j;
}

namespace {

void write_case_baseline(const std::string &path, const matrix &m,
                         const std::vector<nlohmann::json> &records, const run_facts &facts,
                         const std::string &out_dir) {
  std::vector<nlohmann::json> cases;
  for (const auto &r : records)
    if (is_record(r, record_type::case_result))
      cases.push_back(r);
  write_baseline(path, cases,
                 "baseline of " + m.name + " written " + facts.finished + " from " + out_dir);
  std::cout << "cuparity: wrote baseline " << path << "\n";
}

} // namespace

int write_verdict(const matrix &m, const std::vector<nlohmann::json> &records, run_facts facts,
                  const std::string &out_dir, const verdict_inputs &inputs) {
  comparison c =
      compare_results(m, records, inputs.planned, inputs.baseline, [](const std::string &id) {
        return case_registry::instance().find(id) != nullptr;
      });
  facts.finished = utc_now();
  facts.latency = latency_summary(m, records, inputs.latency_baseline, facts.latency_failed);
  auto summary = make_summary(m, records, c, facts);
  write_output_file(out_dir + "/summary.json",
                    summary.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  write_junit(out_dir + "/junit.xml", m, records, c, facts); // provenance: packages per cell
  print_console(std::cout, m, records, c, facts);
  std::cout << "cuparity: wrote " << out_dir << "/summary.json, junit.xml, results.jsonl\n";
  if (inputs.write_baseline)
    write_case_baseline(*inputs.write_baseline, m, records, facts, out_dir);
  return verdict_exit_code(c, facts);
}

} // namespace cuparity
