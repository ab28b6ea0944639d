// The plan record and its comparison: what --resume and merge refuse to mix.
#include "harness/run/plan_identity.hpp"

#include "harness/framework/case_registry.hpp"
#include "harness/platform/build_id.hpp"
#include "harness/run/run_layout.hpp"

#include <algorithm>
#include <map>

namespace cuparity {
namespace {

using json = nlohmann::json;

json cells_json(const matrix &m) {
  json out = json::array();
  for (const auto &c : m.cells) {
    json env = json::object();
    for (const auto &[k, v] : c.env)
      env[k] = v ? json(*v) : json(nullptr);
    out.push_back({{"id", c.id}, {"env", env}});
  }
  return out;
}

json selected_case_ids(const matrix &m) {
  json out = json::array();
  // A suite matrix's plan is its suites and their commands: a changed command is another plan.
  for (const auto &x : m.suites)
    out.push_back({{"suite", x.name}, {"command", x.command}, {"junit", x.junit}});
  if (!m.suites.empty())
    return out;
  for (const case_def *d : case_registry::instance().select(m.cases, m.exclude_cases))
    out.push_back(d->id);
  return out;
}

std::string shown(const json &v) {
  return v.is_null() ? "unset" : v.is_string() ? v.get<std::string>() : v.dump();
}

/// The cells part: cells present on one side only, then the first environment that differs.
std::string cells_difference(const json &was, const json &now) {
  std::map<std::string, json> before, after;
  for (const auto &c : was)
    before[c.value("id", "")] = c.value("env", json::object());
  for (const auto &c : now)
    after[c.value("id", "")] = c.value("env", json::object());
  for (const auto &[id, env] : after)
    if (!before.count(id))
      return "cell '" + id + "' is not in the recorded plan";
  for (const auto &[id, env] : before) {
    auto it = after.find(id);
    if (it == after.end())
      return "the recorded plan has cell '" + id + "', which the matrix no longer has";
    for (const auto &[k, v] : it->second.items()) {
      const json old = env.contains(k) ? env[k] : json(nullptr);
      if (old != v)
        return "cell '" + id + "' has " + k + "=" + shown(v) + ", the recorded plan " + shown(old);
    }
  }
  return was == now ? "" : "the cells are in another order";
}

/// A list part (cases, filters): the first item on one side only.
std::string list_difference(const std::string &part, const json &was, const json &now) {
  for (const auto &x : now)
    if (std::find(was.begin(), was.end(), x) == was.end())
      return part + ": '" + shown(x) + "' is not in the recorded plan";
  for (const auto &x : was)
    if (std::find(now.begin(), now.end(), x) == now.end())
      return part + ": the recorded plan has '" + shown(x) + "', this one does not";
  return was == now ? "" : part + " are in another order";
}

std::string part_difference(const std::string &part, const json &was, const json &now) {
  if (was == now)
    return "";
  if (part == "cells" && was.is_array() && now.is_array())
    return cells_difference(was, now);
  if (was.is_array() && now.is_array())
    return list_difference(part, was, now);
  return part + ": the recorded plan has " + shown(was) + ", this one " + shown(now);
}

} // namespace

json plan_description(const matrix &m, const plan_filter &filter, const json &identity) {
  const json driver = identity.value("driver", json::object());
  const json config = identity.value("config", json::object());
  json plan{
      {"matrix", m.name},
      {"cells", cells_json(m)},
      {"cases", selected_case_ids(m)},
      {"case_filter", filter.cases},
      {"cell_filter", filter.cells},
      {"shard", shard_text(filter.shard)},
      {"driver",
       {{"version", driver.value("driver_version", 0)}, {"path", config.value("driver_path", "")}}},
      {"binary", executable_build_id()},
      {"pairs", planned_pairs(m, {filter.cases, filter.cells, filter.shard, {}}).size()}};
  plan["fingerprint"] = digest_hex(plan.dump());
  return plan;
}

const std::vector<std::string> &resume_parts() {
  static const std::vector<std::string> parts{"matrix",      "cells", "cases",  "case_filter",
                                              "cell_filter", "shard", "driver", "binary"};
  return parts;
}

const std::vector<std::string> &merge_parts() {
  static const std::vector<std::string> parts{"matrix", "cells", "cases", "driver", "binary"};
  return parts;
}

std::string plan_difference(const json &recorded, const json &now,
                            const std::vector<std::string> &parts) {
  std::string out;
  for (const auto &part : parts) {
    const json was = recorded.contains(part) ? recorded[part] : json(nullptr);
    const json is = now.contains(part) ? now[part] : json(nullptr);
    if (auto d = part_difference(part, was, is); !d.empty())
      out += (out.empty() ? "" : "; ") + d;
  }
  return out;
}

} // namespace cuparity
