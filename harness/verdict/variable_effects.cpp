// What each variable of a suite or program matrix changed: the bindings of which functions, in
// which suite or program, and whether any case ended otherwise (docs/verdicts.md).
#include "harness/verdict/compare_steps.hpp"

#include <algorithm>
#include <optional>

namespace cuparity::verdict {
namespace {

using function_bindings = std::map<std::string, std::set<std::string>>;

/// A suite's or program's evidence in one cell: what its processes bound, how its cases ended and
/// what they observed.
struct unit_evidence {
  const function_bindings *bindings = nullptr;
  std::map<std::string, nlohmann::json> results;
};

/// None where it did not run to its end, or where a program could not run at all (its
/// skip_exit_code, a package missing): that cell says nothing of what a variable does.
std::optional<unit_evidence> evidence_of(const record_index &index, const std::string &cell,
                                         const external_suite &x) {
  const auto b = index.suite_bindings.find({cell, x.name});
  if (b == index.suite_bindings.end())
    return std::nullopt;
  unit_evidence e{&b->second, {}};
  for (auto it = index.cases.lower_bound({cell, x.name});
       it != index.cases.end() && it->first.first == cell; ++it) {
    const std::string &id = it->first.second;
    if (id.compare(0, x.name.size(), x.name) != 0)
      break; // past every id that starts with the name
    if (id != x.name && id[x.name.size()] != '.')
      continue; // another suite's ("simpkg-x" beside "simpkg")
    e.results[id] = {it->second.value("outcome", ""),
                     it->second.value("observations", nlohmann::json::object())};
  }
  if (x.program && e.results.count(x.name) && e.results[x.name][0] == "not_supported")
    return std::nullopt;
  return e;
}

std::vector<std::string> sorted(const function_bindings &b, const std::string &function) {
  const auto it = b.find(function);
  return it == b.end() ? std::vector<std::string>{}
                       : std::vector<std::string>(it->second.begin(), it->second.end());
}

/// Every function bound otherwise in `a` than in `b` (bound in one only counts too) joins the
/// effect, the first pair that shows it kept.
void add_binding_changes(const external_suite &x, const cell &a, const cell &b,
                         const unit_evidence &ea, const unit_evidence &eb, const std::string &var,
                         variable_effect &effect) {
  std::set<std::string> functions;
  for (const auto *side : {ea.bindings, eb.bindings})
    for (const auto &[f, _] : *side)
      functions.insert(f);
  for (const auto &f : functions) {
    std::vector<std::string> sa = sorted(*ea.bindings, f), sb = sorted(*eb.bindings, f);
    if (sa == sb)
      continue;
    auto it = std::find_if(effect.bindings.begin(), effect.bindings.end(),
                           [&](const auto &c) { return c.suite == x.name && c.function == f; });
    if (it == effect.bindings.end()) {
      const bool same =
          without_sources({sa.begin(), sa.end()}) == without_sources({sb.begin(), sb.end()});
      effect.bindings.push_back(
          {x.name, f, a.id, b.id, a.env.at(var), b.env.at(var), sa, sb, same, 0});
      it = std::prev(effect.bindings.end());
    }
    ++it->pairs;
  }
}

variable_effect effect_of(const matrix &m, const record_index &index, const std::string &var) {
  variable_effect effect;
  effect.variable = var;
  if (const auto it = m.inert.find(var); it != m.inert.end())
    effect.inert = it->second;
  for (std::size_t i = 0; i < m.cells.size(); ++i)
    for (std::size_t j = i + 1; j < m.cells.size(); ++j) {
      const cell &a = m.cells[i], &b = m.cells[j];
      if (!differ_only_in(a, b, var))
        continue;
      bool ran_in_both = false, ended_otherwise = false;
      for (const auto &x : m.suites) {
        const auto ea = evidence_of(index, a.id, x), eb = evidence_of(index, b.id, x);
        if (!ea || !eb)
          continue;
        ran_in_both = true;
        // A variable the driver reads (a fault to inject) changes outcomes or observations only.
        ended_otherwise = ended_otherwise || ea->results != eb->results;
        add_binding_changes(x, a, b, *ea, *eb, var, effect);
      }
      if (!ran_in_both)
        continue;
      if (effect.pairs++ == 0)
        effect.first_a = a.id, effect.first_b = b.id;
      effect.outcome_pairs += ended_otherwise ? 1 : 0;
    }
  // Other symbols first: what a result can differ by; another path to the same symbol after.
  std::stable_partition(effect.bindings.begin(), effect.bindings.end(),
                        [](const variable_binding_change &c) { return !c.same_symbols; });
  return effect;
}

} // namespace

std::vector<variable_effect> variable_effects_of(const matrix &m, const record_index &index) {
  std::vector<variable_effect> out;
  for (const auto &var : m.variables)
    out.push_back(effect_of(m, index, var));
  return out;
}

} // namespace cuparity::verdict
