// The functional verdict: who may differ, who must agree, and what was expected.
#include "harness/verdict/compare.hpp"

#include "harness/protocol/case_ids.hpp"
#include "harness/protocol/records.hpp"

#include <set>

namespace cuparity {

std::string semantic_key(const nlohmann::json &config) {
  return "stream0=" + config.value("stream0", std::string("?")) +
         " driver=" + config.value("driver_path", std::string("?")) +
         " include=" + config.value("include_path", std::string("?"));
}

bool is_configuration_case(const std::string &case_id) {
  return case_id.rfind("binding.config.", 0) == 0;
}

namespace {

bool contains(const std::vector<outcome> &v, outcome o) {
  return std::find(v.begin(), v.end(), o) != v.end();
}

std::string join_outcomes(const std::vector<outcome> &v) {
  std::string s;
  for (auto o : v)
    s += (s.empty() ? "" : "/") + std::string(to_string(o));
  return s;
}

} // namespace

comparison compare_results(const matrix &m, const std::vector<nlohmann::json> &records,
                           const std::vector<baseline_entry> &baseline,
                           const std::function<bool(const std::string &)> &known_case) {
  comparison out;
  std::map<std::string, nlohmann::json> cells;                         // id -> cell record
  std::map<std::string, std::string> cell_errors;                      // id -> message
  std::map<std::pair<std::string, std::string>, nlohmann::json> cases; // (cell, case) -> record
  bool driver_error_everywhere = true;
  for (const auto &r : records) {
    const auto type = record_type_of(r);
    if (type == record_type::cell) {
      cells[r.value("cell", "")] = r;
      driver_error_everywhere = false;
    } else if (type == record_type::cell_error) {
      cell_errors[r.value("cell", "")] = r.value("message", "");
      if (r.value("kind", "") != "driver")
        driver_error_everywhere = false;
    } else if (type == record_type::case_result) {
      cases[{r.value("cell", ""), r.value("case", "")}] = r;
    }
  }
  out.results = cases.size();
  out.environment_problem = !cell_errors.empty() && driver_error_everywhere;

  const cell *by_id_missing = nullptr;
  auto find_cell = [&](const std::string &id) -> const cell * {
    for (const auto &c : m.cells)
      if (c.id == id)
        return &c;
    return by_id_missing;
  };

  // ---- semantic groups from what each cell's process decided
  for (const auto &[id, rec] : cells) {
    std::string key = semantic_key(rec.value("config", nlohmann::json::object()));
    out.groups[key].push_back(id);
    out.cell_group[id] = key;
  }
  for (const auto &[id, msg] : cell_errors) {
    if (!cells.count(id))
      out.problems.push_back({"cell_error", id, "", msg});
  }

  // ---- expectations about the configuration itself
  for (const auto &[id, rec] : cells) {
    const cell *c = find_cell(id);
    if (!c)
      continue;
    const auto &cfg = rec.value("config", nlohmann::json::object());
    for (const expectation *x : c->expectations) {
      auto check = [&](bool ok, const std::string &what) {
        if (!ok)
          out.problems.push_back(
              {"expectation", id, "", what + " (expected by " + x->where.text() + ")"});
      };
      if (x->binding)
        check(cfg.value("binding", "") == *x->binding,
              "binding is " + cfg.value("binding", std::string("?")) + ", expected " + *x->binding);
      if (x->stream0)
        check(cfg.value("stream0", "") == *x->stream0, "stream 0 is " +
                                                           cfg.value("stream0", std::string("?")) +
                                                           ", expected " + *x->stream0);
      if (x->fallback)
        check(cfg.value("fallback", false) == *x->fallback,
              std::string("fallback is ") + (cfg.value("fallback", false) ? "true" : "false") +
                  ", expected " + (*x->fallback ? "true" : "false"));
      const auto warnings = cfg.value("warnings", std::vector<std::string>{});
      for (const auto &w : x->warnings) {
        bool found = false;
        for (const auto &have : warnings)
          found = found || have.find(w) != std::string::npos;
        check(found, "no warning contains '" + w + "'");
      }
      if (x->warning_count)
        check(warnings.size() == *x->warning_count, std::to_string(warnings.size()) +
                                                        " warnings, expected " +
                                                        std::to_string(*x->warning_count));
    }
  }

  // ---- outcomes: every non-pass needs an allowance (matrix) or a baseline entry
  std::set<const allowance *> used, applicable;
  std::set<std::pair<std::string, std::string>> excused; // allowed pairs: skipped in equivalence
  std::vector<bool> baseline_used(baseline.size(), false);
  for (const auto &[key, rec] : cases) {
    const auto &[cell_id, case_id] = key;
    outcome o = parse_outcome(rec.value("outcome", "error")).value_or(outcome::error);
    ++out.outcome_counts[std::string(to_string(o))];
    std::vector<const allowance *> allows;
    if (const cell *c = find_cell(cell_id))
      for (const expectation *x : c->expectations)
        for (const auto &a : x->allow)
          for (const auto &g : a.cases)
            if (case_matches(case_id, g)) {
              allows.push_back(&a);
              applicable.insert(&a);
              break;
            }
    const baseline_entry *base = nullptr;
    for (std::size_t i = 0; i < baseline.size(); ++i)
      if (baseline[i].case_id == case_id && baseline[i].cell == cell_id) {
        base = &baseline[i];
        baseline_used[i] = true;
      }
    bool allowed = false;
    std::vector<outcome> expected_outcomes;
    for (const allowance *a : allows) {
      expected_outcomes.insert(expected_outcomes.end(), a->outcomes.begin(), a->outcomes.end());
      if (contains(a->outcomes, o)) {
        allowed = true;
        used.insert(a);
      }
    }
    if (base) {
      expected_outcomes.push_back(base->expected);
      allowed = allowed || base->expected == o;
    }
    const bool expected_non_pass = !expected_outcomes.empty();
    if (allowed) {
      excused.insert(key);
      if (!is_success(o))
        ++out.allowed;
      continue;
    }
    if (is_success(o)) {
      if (expected_non_pass && o == outcome::pass)
        out.problems.push_back({"unexpected_pass", cell_id, case_id,
                                "passed, but " + join_outcomes(expected_outcomes) +
                                    " is expected: update the matrix or baseline"});
      continue;
    }
    std::string msg = std::string(to_string(o)) + ": " + rec.value("message", "");
    if (expected_non_pass)
      msg += " (expected " + join_outcomes(expected_outcomes) + ")";
    out.problems.push_back({"failure", cell_id, case_id, msg});
  }
  for (const auto &x : m.expectations)
    for (const auto &a : x.allow)
      if (applicable.count(&a) && !used.count(&a))
        out.problems.push_back({"stale_expectation", "", "",
                                a.where.text() + ": allows " + join_outcomes(a.outcomes) +
                                    " but no matching case ended so (" + a.reason + ")"});
  for (std::size_t i = 0; i < baseline.size(); ++i) {
    const auto &b = baseline[i];
    if (baseline_used[i])
      continue;
    const bool cell_known = find_cell(b.cell) != nullptr;
    const bool case_known = known_case(b.case_id);
    if (!cell_known || !case_known)
      out.problems.push_back({"stale_expectation", b.cell, b.case_id,
                              "baseline line " + std::to_string(b.line) + " names a " +
                                  (cell_known ? "case" : "cell") + " that does not exist"});
  }

  // ---- equivalence inside each semantic group
  for (const auto &[group, members] : out.groups) {
    if (members.size() < 2)
      continue;
    std::set<std::string> case_ids;
    for (const auto &[key, rec] : cases)
      if (std::find(members.begin(), members.end(), key.first) != members.end())
        case_ids.insert(key.second);
    for (const auto &case_id : case_ids) {
      std::map<std::string, const nlohmann::json *> per_cell;
      for (const auto &c : members) {
        auto it = cases.find({c, case_id});
        if (it != cases.end() && !excused.count({c, case_id}))
          per_cell[c] = &it->second;
      }
      if (per_cell.size() < 2)
        continue;
      auto report = [&](const std::string &key, auto value_of) {
        std::map<std::string, nlohmann::json> values;
        std::set<std::string> distinct;
        for (const auto &[c, rec] : per_cell) {
          values[c] = value_of(*rec);
          distinct.insert(values[c].dump());
        }
        if (distinct.size() > 1)
          out.divergences.push_back({group, case_id, key, std::move(values)});
      };
      report("outcome", [](const nlohmann::json &r) { return r.value("outcome", "?"); });
      if (is_configuration_case(case_id))
        continue;
      std::set<std::string> keys;
      for (const auto &[c, rec] : per_cell) {
        const nlohmann::json obs = rec->value("observations", nlohmann::json::object());
        for (const auto &[k, v] : obs.items())
          keys.insert(k);
      }
      for (const auto &k : keys)
        report("observations." + k, [&](const nlohmann::json &r) {
          const auto obs = r.value("observations", nlohmann::json::object());
          return obs.contains(k) ? obs.at(k) : nlohmann::json();
        });
    }
  }
  return out;
}

} // namespace cuparity
