// Reading recorded results and writing the verdict's files.
#include "harness/run/outputs.hpp"

#include "harness/latency/latency_phase.hpp"
#include "harness/latency/recorded_latency.hpp"
#include "harness/protocol/json_input.hpp"
#include "harness/protocol/records.hpp"
#include "harness/protocol/results.hpp"
#include "harness/run/provenance.hpp"
#include "harness/suite/case_registry.hpp"
#include "harness/verdict/compare.hpp"

#include <fstream>
#include <iostream>
#include <stdexcept>

namespace cuparity {

std::vector<nlohmann::json> read_all(const std::vector<std::string> &dirs) {
  std::vector<nlohmann::json> records;
  for (const auto &d : dirs) {
    auto f = read_results(d + "/results.jsonl");
    if (f.truncated_tail)
      std::cerr << "cuparity: " << d << "/results.jsonl ends in a cut-off record (a killed run); "
                << "it is ignored\n";
    records.insert(records.end(), f.records.begin(), f.records.end());
  }
  return records;
}

nlohmann::json read_summary(const std::string &path) {
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error(path + ": cannot read the latency baseline (a summary.json)");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception &e) {
    throw std::runtime_error(path + ": not JSON: " + e.what());
  }
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
  comparison c = compare_results(m, records, inputs.baseline, [](const std::string &id) {
    return case_registry::instance().find(id) != nullptr;
  });
  facts.finished = utc_now();
  facts.latency = latency_summary(m, records, inputs.latency_baseline, facts.latency_failed);
  auto summary = make_summary(m, records, c, facts);
  {
    std::ofstream out(out_dir + "/summary.json");
    out << summary.dump(2) << "\n";
  }
  write_junit(out_dir + "/junit.xml", m, records, c);
  print_console(std::cout, m, records, c, facts);
  std::cout << "cuparity: wrote " << out_dir << "/summary.json, junit.xml, results.jsonl\n";
  if (inputs.write_baseline)
    write_case_baseline(*inputs.write_baseline, m, records, facts, out_dir);
  return verdict_exit_code(c, facts);
}

} // namespace cuparity
