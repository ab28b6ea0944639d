// Reading summary.json back: one function per section, every member checked where it is read.
#include "harness/report/summary_reader.hpp"

#include "harness/io/gzip_input.hpp"
#include "harness/io/input_file.hpp"
#include "harness/io/json_input.hpp"
#include "harness/protocol/results.hpp"
#include "harness/report/summary.hpp"
#include "harness/verdict/changes.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

namespace cuparity {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

/// The versions of each schema this reader reads, exactly (the reports' KNOWN_SCHEMAS): a newer
/// one, minor or major, is refused. The latency block /1 (before paired blocks) is still read: its
/// samples, which is all a run-vs-run comparison takes, have the same shape.
const std::vector<std::string> summary_versions = {summary_schema};
const std::vector<std::string> latency_versions = {"cuparity.latency/2", "cuparity.latency/1"};

std::string optional_string(const json &parent, const std::string &path, const char *name) {
  const auto *v = optional_member(parent, path, name, json_kind::string);
  return v ? v->get<std::string>() : "";
}

/// What a message says a member held: its JSON text, or "nothing" when it is absent.
std::string got(const json &parent, const char *name) {
  return parent.contains(name) ? parent[name].dump() : "nothing";
}

void check_schema(const json &parent, const std::string &path,
                  const std::vector<std::string> &versions) {
  const auto where = member_path(path, "schema");
  const auto schema = member(parent, path, "schema", json_kind::string).get<std::string>();
  if (std::find(versions.begin(), versions.end(), schema) != versions.end())
    return;
  const auto &expected = versions.front();
  const auto family = expected.substr(0, expected.find('/') + 1);
  if (schema.rfind(family, 0) != 0 || schema.find('/', family.size()) != std::string::npos)
    throw json_input_error(where, "'" + schema + "' where " + expected + " was expected");
  std::string reads;
  for (const auto &v : versions)
    reads += (reads.empty() ? "" : " or ") + v;
  throw json_input_error(
      where, "'" + schema + "' is a version this reader does not read (it reads " + reads + ")");
}

/// A count (0, 1, ...): a whole number, never null, a fraction, a negative number or a boolean.
std::size_t count_member(const json &parent, const std::string &path, const char *name) {
  const auto it = parent.find(name);
  if (it == parent.end() || !it->is_number_integer() || it->get<long long>() < 0)
    throw json_input_error(member_path(path, name),
                           "expected a count (0, 1, ...), got " + got(parent, name));
  return it->get<std::size_t>();
}

/// latency.settings: the thresholds the run used (each member checked; absent in older runs).
std::optional<latency_settings> read_settings(const json &lat) {
  const auto *st = optional_member(lat, "latency", "settings", json_kind::object);
  if (!st)
    return std::nullopt;
  const std::string path = "latency.settings";
  latency_settings l;
  l.regression_threshold =
      member(*st, path, "regression_threshold", json_kind::number).get<double>();
  l.paired_threshold = member(*st, path, "paired_threshold", json_kind::number).get<double>();
  const auto &per_probe = member(*st, path, "thresholds", json_kind::object);
  for (const auto &[probe, value] : per_probe.items()) {
    require_kind(value, member_path(path + ".thresholds", probe), json_kind::number);
    l.thresholds[probe] = value.get<double>();
  }
  return l;
}

run_header read_header(const json &s, const std::string &source) {
  run_header h;
  h.source = source;
  h.verdict = member(s, "", "verdict", json_kind::string).get<std::string>();
  // The names verdict_name() writes (harness/report/summary.hpp).
  if (h.verdict != "environment" && h.verdict != "incomplete" && h.verdict != "failed" &&
      h.verdict != "equivalent")
    throw json_input_error("verdict", "'" + h.verdict +
                                          "' is no verdict (environment, incomplete, failed, "
                                          "equivalent)");
  if (const auto *counts = optional_member(s, "", "counts", json_kind::object))
    for (const auto &item : counts->items())
      (void)count_member(*counts, "counts", item.key().c_str());
  // get<int>() of 1e300 is -2147483648: an exit code is a whole number a process can return.
  const auto code = s.find("exit_code");
  if (code == s.end() || !code->is_number_integer() || code->get<long long>() < 0 ||
      code->get<long long>() > 255)
    throw json_input_error("exit_code",
                           "expected an exit code (0-255), got " + got(s, "exit_code"));
  h.exit_code = code->get<int>();
  h.started = optional_string(s, "", "started");
  if (const auto *p = optional_member(s, "", "provenance", json_kind::object)) {
    h.provenance = *p;
    h.git_revision = optional_string(*p, "provenance", "git_revision");
    if (const auto *sim = optional_member(*p, "provenance", "simulated", json_kind::boolean))
      h.simulated = sim->get<bool>();
  }
  return h;
}

run_result read_result(const json &r, const std::string &path) {
  require_kind(r, path, json_kind::object);
  run_result out;
  out.cell = member(r, path, "cell", json_kind::string).get<std::string>();
  out.case_id = member(r, path, "case", json_kind::string).get<std::string>();
  const auto name = member(r, path, "outcome", json_kind::string).get<std::string>();
  const auto o = parse_outcome(name);
  if (!o)
    throw json_input_error(member_path(path, "outcome"), "unknown outcome '" + name + "'");
  out.result = *o;
  out.message = optional_string(r, path, "message");
  if (const auto obs = r.find("observations"); obs != r.end() && !obs->is_null()) {
    require_kind(*obs, member_path(path, "observations"), json_kind::object);
    out.observations = *obs;
  }
  return out;
}

divergence read_divergence(const json &d, const std::string &path) {
  require_kind(d, path, json_kind::object);
  divergence out;
  out.group = member(d, path, "group", json_kind::string).get<std::string>();
  out.case_id = member(d, path, "case", json_kind::string).get<std::string>();
  out.key = member(d, path, "key", json_kind::string).get<std::string>();
  for (const auto &[cell, value] : member(d, path, "values", json_kind::object).items())
    out.values[cell] = value;
  return out;
}

/// The pairs of one coverage list: objects of a cell and a case (coverage_from_json reads them).
std::size_t check_pairs(const json &cov, const char *name) {
  const std::string path = member_path("coverage", name);
  const auto &pairs = member(cov, "coverage", name, json_kind::array);
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const auto at = element_path(path, i);
    require_kind(pairs[i], at, json_kind::object);
    (void)member(pairs[i], at, "cell", json_kind::string);
    (void)member(pairs[i], at, "case", json_kind::string);
  }
  return pairs.size();
}

/// summary.json's coverage, by the reports' rules (summary_rules.check_coverage, in the same
/// words; tests/summaries/ holds both to it): counts that are counts, lists no longer than their
/// counts, planned = recorded + missing + duplicated, and a `complete` and a verdict the counts do
/// not contradict. A contradiction is garbled input, never a verdict of this reader's own.
void check_coverage_section(const json &cov, const std::string &verdict) {
  const bool complete = member(cov, "coverage", "complete", json_kind::boolean).get<bool>();
  const auto planned = count_member(cov, "coverage", "planned");
  const auto recorded = count_member(cov, "coverage", "recorded");
  std::map<std::string, std::size_t> counts;
  std::string first_found;
  for (const char *name : {"missing", "duplicated", "unplanned"}) {
    const auto listed = check_pairs(cov, name);
    const std::string count_name = std::string(name) + "_count";
    const auto n = count_member(cov, "coverage", count_name.c_str());
    if (n < listed)
      throw json_input_error(member_path("coverage", count_name),
                             std::to_string(n) + ", fewer than the " + std::to_string(listed) +
                                 " pairs listed in '" + name + "'");
    counts[name] = n;
    if (n > 0 && first_found.empty())
      first_found = name;
  }
  const auto sum = recorded + counts["missing"] + counts["duplicated"];
  if (planned != sum)
    throw json_input_error(
        "coverage.planned",
        std::to_string(planned) + ", but recorded + missing_count + duplicated_count is " +
            std::to_string(sum) + " (" + std::to_string(recorded) + " + " +
            std::to_string(counts["missing"]) + " + " + std::to_string(counts["duplicated"]) + ")");
  if (complete != (planned > 0 && first_found.empty())) {
    const std::string why = planned == 0 ? "planned is 0"
                            : !first_found.empty()
                                ? first_found + "_count is " + std::to_string(counts[first_found])
                                : "planned is " + std::to_string(planned) +
                                      " and no pair is missing, duplicated or unplanned";
    throw json_input_error("coverage.complete",
                           std::string(complete ? "true" : "false") + " where " + why);
  }
  if (!complete && verdict != "environment" && verdict != "incomplete")
    throw json_input_error("verdict", "'" + verdict +
                                          "' where coverage.complete is false (a run that is "
                                          "not complete is 'incomplete' or 'environment')");
}

recorded_run read_sections(const json &s, const std::string &source) {
  require_kind(s, "", json_kind::object);
  check_schema(s, "", summary_versions);
  recorded_run run;
  run.header = read_header(s, source);
  const auto &results = member(s, "", "results", json_kind::array);
  for (std::size_t i = 0; i < results.size(); ++i)
    run.results.push_back(read_result(results[i], element_path("results", i)));
  const auto &divergences = member(s, "", "divergences", json_kind::array);
  for (std::size_t i = 0; i < divergences.size(); ++i)
    run.divergences.push_back(read_divergence(divergences[i], element_path("divergences", i)));
  if (const auto *lat = optional_member(s, "", "latency", json_kind::object)) {
    check_schema(*lat, "latency", latency_versions);
    run.has_latency = true;
    run.latency = read_recorded_latency(*lat, "latency");
    run.latency_settings_used = read_settings(*lat);
  }
  if (const auto *cov = optional_member(s, "", "coverage", json_kind::object)) {
    check_coverage_section(*cov, run.header.verdict);
    run.coverage = coverage_from_json(*cov, "coverage");
  }
  return run;
}

} // namespace

summary_input_error::summary_input_error(std::string file, std::string member,
                                         const std::string &problem)
    : std::runtime_error(file + ": " + (member.empty() ? "" : member + ": ") + problem),
      m_file(std::move(file)), m_member(std::move(member)) {}

recorded_run recorded_run_from_json(const json &summary, const std::string &source) {
  try {
    return read_sections(summary, source);
  } catch (const json_input_error &e) {
    const std::string what = e.what();
    const auto path = e.path().empty() ? std::string("(top level)") : e.path();
    throw summary_input_error(source, path, what.substr(e.path().size() + 2));
  }
}

recorded_run read_recorded_run(const std::string &path) {
  std::error_code ec;
  if (!fs::exists(path, ec))
    throw summary_input_error(path, "", "no such file or directory");
  std::string file = path;
  if (fs::is_directory(path, ec)) {
    file = stored_run_file(path, "summary.json");
    if (!fs::exists(file, ec))
      throw summary_input_error(path, "",
                                "no summary.json (nor summary.json.gz) in this run directory (a "
                                "run without one: `cuparity merge MATRIX DIR -o DIR` writes it "
                                "from results.jsonl)");
  }
  json j;
  try {
    j = read_json_file(file);
  } catch (const bad_input_error &e) {
    // what() names the file already: "<file>: <problem>".
    throw summary_input_error(file, "", std::string(e.what()).substr(file.size() + 2));
  }
  recorded_run run = recorded_run_from_json(j, file);
  run.results_path = stored_run_file(fs::path(file).parent_path().string(), "results.jsonl");
  if (fs::exists(run.results_path, ec)) {
    try {
      run.binding_maps = latest_binding_maps(read_results(run.results_path).records);
    } catch (const std::runtime_error &e) {
      throw summary_input_error(run.results_path, "", e.what());
    }
  }
  return run;
}

} // namespace cuparity
