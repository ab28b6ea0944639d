// Changes against a reference: outcomes, observations and binding maps, cell against cell.
#include "harness/verdict/changes.hpp"

#include "harness/protocol/records.hpp"
#include "harness/verdict/compare.hpp"

#include <map>
#include <set>

namespace cuparity {
namespace {

using json = nlohmann::json;

json member_or_null(const json &object, const std::string &key) {
  if (!object.is_object())
    return nullptr;
  const auto it = object.find(key);
  return it == object.end() ? json(nullptr) : *it;
}

/// What a binding map says of one entry, reduced to what a change is about.
json binding_fact(const json &row) {
  return {{"symbol", member_or_null(row, "symbol")},
          {"abi", member_or_null(row, "abi")},
          {"missing", member_or_null(row, "missing")}};
}

std::map<std::string, json> binding_facts(const json &map) {
  std::map<std::string, json> out;
  if (!map.is_array())
    return out;
  for (const auto &row : map)
    if (row.is_object() && row.contains("entry") && row["entry"].is_string())
      out[row["entry"].get<std::string>()] = binding_fact(row);
  return out;
}

/// The latest binding map of each cell.
} // namespace

std::vector<reference_change> case_changes(const std::string &cell, const std::string &reference,
                                           const json &before, const json &after) {
  std::vector<reference_change> out;
  const std::string case_id = after.value("case", before.value("case", ""));
  const json outcome_before = member_or_null(before, "outcome");
  const json outcome_after = member_or_null(after, "outcome");
  if (outcome_before != outcome_after)
    out.push_back({cell, reference, case_id, "outcome", outcome_before, outcome_after});
  const json obs_before = member_or_null(before, "observations");
  const json obs_after = member_or_null(after, "observations");
  std::set<std::string> keys;
  for (const json *o : {&obs_before, &obs_after})
    if (o->is_object())
      for (const auto &[k, v] : o->items())
        keys.insert(k);
  for (const auto &k : keys) {
    const json b = member_or_null(obs_before, k);
    const json a = member_or_null(obs_after, k);
    if (b != a)
      out.push_back({cell, reference, case_id, "observations." + k, b, a});
  }
  return out;
}

std::vector<reference_change> binding_changes(const std::string &cell, const std::string &reference,
                                              const json &before, const json &after) {
  std::vector<reference_change> out;
  const auto b = binding_facts(before);
  const auto a = binding_facts(after);
  std::set<std::string> entries;
  for (const auto *m : {&b, &a})
    for (const auto &[entry, fact] : *m)
      entries.insert(entry);
  for (const auto &entry : entries) {
    const auto ib = b.find(entry);
    const auto ia = a.find(entry);
    const json vb = ib == b.end() ? json(nullptr) : ib->second;
    const json va = ia == a.end() ? json(nullptr) : ia->second;
    if (vb != va)
      out.push_back({cell, reference, "", "binding." + entry, vb, va});
  }
  return out;
}

std::vector<reference_change> changes_against_reference(const matrix &m,
                                                        const verdict::record_index &index,
                                                        const std::vector<json> &records) {
  std::vector<reference_change> out;
  const auto maps = latest_binding_maps(records);
  for (const auto &[c, r] : reference_pairs(m)) {
    for (auto it = index.cases.lower_bound({c->id, ""});
         it != index.cases.end() && it->first.first == c->id; ++it) {
      const std::string &case_id = it->first.second;
      const auto ref = index.cases.find({r->id, case_id});
      if (ref == index.cases.end() || is_configuration_case(case_id))
        continue;
      for (auto &change : case_changes(c->id, r->id, ref->second, it->second))
        out.push_back(std::move(change));
    }
    const auto mc = maps.find(c->id);
    const auto mr = maps.find(r->id);
    if (mc != maps.end() && mr != maps.end())
      for (auto &change : binding_changes(c->id, r->id, mr->second, mc->second))
        out.push_back(std::move(change));
  }
  return out;
}

std::vector<known_change> apply_known_changes(std::vector<reference_change> &changes,
                                              const std::vector<known_change> &known) {
  std::vector<known_change> stale;
  for (const auto &k : known) {
    bool used = false;
    for (auto &c : changes) {
      if (c.case_id != k.case_id || c.key != k.key || (k.cell && *k.cell != c.cell) ||
          (k.after && *k.after != c.after))
        continue;
      used = true;
      if (c.known.empty()) // the first entry that matches gives the reason
        c.known = k.reason;
    }
    if (!used)
      stale.push_back(k);
  }
  return stale;
}

std::string stale_known_text(const known_change &k) {
  return k.where.text() + ": known change " + (k.case_id.empty() ? "" : k.case_id + " ") + k.key +
         (k.cell ? " in " + *k.cell : std::string()) + " matched no change (" + k.reason + ")";
}

std::map<std::string, json> latest_binding_maps(const std::vector<json> &records) {
  std::map<std::string, json> out;
  // External suites' cells have no cuparity process: what their processes bound (suite_end
  // records, every suite of the cell together) is their map, one row per function whose symbol is
  // every symbol bound for it with how ("cuMemGetInfo_v2 (dlsym)"), so a run against a run (a new
  // driver, say) names what a package bound differently.
  std::map<std::string, std::map<std::string, std::set<std::string>>> suites;
  for (const auto &r : records)
    if (is_record(r, record_type::binding_map)) {
      out[r.value("cell", "")] = r.value("map", json::array());
    } else if (is_record(r, record_type::suite_end)) {
      const json bindings = r.value("bindings", json::object()); // items() needs it alive
      auto &cell = suites[r.value("cell", "")];
      for (const auto &[function, symbols] : bindings.items())
        for (const auto &s : symbols)
          if (s.is_string())
            cell[function].insert(s.get<std::string>());
    }
  for (const auto &[cell, functions] : suites) {
    json rows = json::array();
    for (const auto &[function, symbols] : functions) {
      std::string joined;
      for (const auto &s : symbols)
        joined += (joined.empty() ? "" : ", ") + s;
      rows.push_back({{"entry", function}, {"symbol", joined}});
    }
    out.try_emplace(cell, std::move(rows));
  }
  return out;
}

bool is_lost_capability(const reference_change &c) {
  return c.key == "outcome" && c.before == "pass" && c.after != "pass";
}

std::string change_text(const reference_change &c) {
  return c.cell + " vs " + c.reference + ": " + (c.case_id.empty() ? "" : c.case_id + " ") + c.key +
         ": " + c.before.dump() + " -> " + c.after.dump();
}

} // namespace cuparity
