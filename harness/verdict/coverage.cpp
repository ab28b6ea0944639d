// Coverage of a run: planned pairs against recorded results.
#include "harness/verdict/coverage.hpp"

#include "harness/io/json_input.hpp"
#include "harness/protocol/case_ids.hpp"
#include "harness/protocol/records.hpp"

#include <map>

namespace cuparity {
namespace {

/// An external suite's test, or a program's one case (its name alone): its suite's pair covers
/// it, and a resumed suite may record a test again (the latest record is the one judged), so its
/// records are not counted one by one.
bool under_planned_suite(const std::map<planned_pair, bool> &plan, const std::string &cell,
                         const std::string &id) {
  return plan.count({cell, suite_pair_id(id.substr(0, id.find('.')))}) > 0;
}

} // namespace

coverage check_coverage(const std::vector<planned_pair> &planned,
                        const std::vector<nlohmann::json> &records) {
  std::map<planned_pair, bool> plan;
  for (const auto &p : planned)
    plan[p] = true;
  std::map<planned_pair, std::size_t> seen;
  for (const auto &r : records)
    if (is_record(r, record_type::case_result)) {
      const std::string cell = r.value("cell", ""), id = r.value("case", "");
      if (!under_planned_suite(plan, cell, id))
        ++seen[{cell, id}];
    } else if (is_record(r, record_type::suite_end)) {
      ++seen[{r.value("cell", ""), suite_pair_id(r.value("suite", ""))}];
    }
  coverage out;
  out.planned = planned.size();
  for (const auto &p : planned) {
    const auto it = seen.find(p);
    const std::size_t n = it == seen.end() ? 0 : it->second;
    if (n == 0)
      out.missing.push_back(p);
    else if (n > 1)
      out.duplicated.push_back(p);
    else
      ++out.recorded;
  }
  for (const auto &[p, n] : seen)
    if (!plan.count(p))
      out.unplanned.push_back(p);
  return out;
}

namespace {

std::string first_of(const std::vector<planned_pair> &pairs) {
  return " (first: cell '" + pairs.front().first + "', case '" + pairs.front().second + "')";
}

} // namespace

std::string coverage_message(const coverage &c) {
  if (c.complete())
    return "";
  if (c.planned == 0)
    return "the plan holds no (cell, case) pair: the selection is empty, nothing was judged";
  std::string out;
  auto add = [&](const std::string &part) { out += (out.empty() ? "" : "; ") + part; };
  const std::string of = " of " + std::to_string(c.planned) + " planned pairs";
  if (!c.missing.empty())
    add(std::to_string(c.missing.size()) + of + " have no result" + first_of(c.missing));
  if (!c.duplicated.empty())
    add(std::to_string(c.duplicated.size()) + of +
        " have more than one result (a shard or run given twice, overlapping shards)" +
        first_of(c.duplicated));
  if (!c.unplanned.empty())
    add(std::to_string(c.unplanned.size()) + " results belong to no planned pair" +
        first_of(c.unplanned));
  return out;
}

namespace {

nlohmann::json pairs_json(const std::vector<planned_pair> &pairs, std::size_t listed) {
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t i = 0; i < pairs.size() && i < listed; ++i)
    out.push_back({{"cell", pairs[i].first}, {"case", pairs[i].second}});
  return out;
}

std::vector<planned_pair> pairs_from_json(const nlohmann::json &j, const std::string &path) {
  std::vector<planned_pair> out;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const std::string at = element_path(path, i);
    out.emplace_back(member(j[i], at, "cell", json_kind::string).get<std::string>(),
                     member(j[i], at, "case", json_kind::string).get<std::string>());
  }
  return out;
}

} // namespace

nlohmann::json coverage_json(const coverage &c, std::size_t listed) {
  return {{"complete", c.complete()},
          {"planned", c.planned},
          {"recorded", c.recorded},
          {"missing_count", c.missing.size()},
          {"duplicated_count", c.duplicated.size()},
          {"unplanned_count", c.unplanned.size()},
          {"missing", pairs_json(c.missing, listed)},
          {"duplicated", pairs_json(c.duplicated, listed)},
          {"unplanned", pairs_json(c.unplanned, listed)},
          {"message", coverage_message(c)}};
}

coverage coverage_from_json(const nlohmann::json &j, const std::string &path) {
  require_kind(j, path, json_kind::object);
  coverage c;
  auto count = [&](const char *name) {
    const auto &v = member(j, path, name, json_kind::number);
    if (!v.is_number_integer() || v.get<long long>() < 0)
      throw json_input_error(member_path(path, name), "expected a count, found " + v.dump());
    return v.get<std::size_t>();
  };
  c.planned = count("planned");
  c.recorded = count("recorded");
  auto list = [&](const char *name) {
    return pairs_from_json(member(j, path, name, json_kind::array), member_path(path, name));
  };
  c.missing = list("missing");
  c.duplicated = list("duplicated");
  c.unplanned = list("unplanned");
  // The lists are capped; the counts are not. Keep the lists' lengths honest for complete().
  auto pad = [&](std::vector<planned_pair> &v, const char *name) {
    const std::size_t n = count(name);
    if (n < v.size())
      throw json_input_error(member_path(path, name), "smaller than its list");
    v.resize(n, {"", ""});
  };
  pad(c.missing, "missing_count");
  pad(c.duplicated, "duplicated_count");
  pad(c.unplanned, "unplanned_count");
  return c;
}

} // namespace cuparity
