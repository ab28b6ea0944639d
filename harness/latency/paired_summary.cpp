// Paired blocks: the sequences of per-pair ratios and differences, their intervals, the verdicts.
#include "harness/latency/paired_summary.hpp"

#include "harness/latency/latency_stats.hpp"
#include "harness/protocol/records.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

namespace cuparity {
namespace {

using json = nlohmann::json;

/// Enough resamples for p-values down to 1e-3 (the gate asks for p < 0.01) in a summary that
/// holds dozens of comparisons of thousands of pairs each.
constexpr int resamples = 1000;

/// One cell's probe: its series block by block over all rounds, in the order they ran.
struct pair_sequences {
  std::string own, other, missing;
  std::string requested; ///< the binding the cell asked for, where the process says (Python)
  bool fallback = false; ///< the process fell back from it: `own` is what it really used
  bool same_address = true;
  std::vector<double> facade, direct, theirs;
};

void append(std::vector<double> &to, const json &times, const char *series, std::size_t n) {
  if (!times.contains(series) || !times[series].is_array())
    return;
  const auto &values = times[series];
  for (std::size_t i = 0; i < n; ++i)
    to.push_back(values[i].is_number() ? values[i].get<double>() : 0.0);
}

/// cell -> probe -> sequences. A round's three arrays are cut to the shortest, so index i is one
/// triple in every series.
std::map<std::string, std::map<std::string, pair_sequences>>
index_pairs(const std::vector<json> &records) {
  std::map<std::string, std::map<std::string, pair_sequences>> out;
  for (const auto &r : records) {
    if (!is_record(r, record_type::latency_pairs) || !r.contains("per_call_ns") ||
        !r["per_call_ns"].is_object())
      continue;
    auto &seq = out[r.value("cell", "")][r.value("probe", "")];
    seq.own = r.value("own", "");
    seq.other = r.value("other", "");
    if (r.contains("other_missing") && r["other_missing"].is_string())
      seq.missing = r["other_missing"];
    seq.requested = r.value("requested", "");
    seq.fallback = r.value("fallback", false);
    const json &t = r["per_call_ns"];
    const bool has_other = t.contains("other");
    seq.same_address = seq.same_address && has_other && r.value("same_address", false);
    std::size_t n = SIZE_MAX;
    for (const char *s : {"facade", "direct", "other"})
      if (t.contains(s) && t[s].is_array())
        n = std::min(n, t[s].size());
    if (n == SIZE_MAX || !t.contains("direct"))
      continue;
    append(seq.facade, t, "facade", t.contains("facade") ? n : 0);
    append(seq.direct, t, "direct", n);
    append(seq.theirs, t, "other", has_other ? n : 0);
  }
  return out;
}

std::vector<double> ratios(const std::vector<double> &num, const std::vector<double> &den) {
  std::vector<double> out;
  for (std::size_t i = 0; i < std::min(num.size(), den.size()); ++i)
    if (den[i] > 0 && num[i] > 0)
      out.push_back(num[i] / den[i]);
  return out;
}

json overhead_entry(const std::string &cell, const std::string &probe, const pair_sequences &s,
                    double confidence) {
  std::vector<double> deltas;
  for (std::size_t i = 0; i < std::min(s.facade.size(), s.direct.size()); ++i)
    deltas.push_back(s.facade[i] - s.direct[i]);
  const auto r = block_bootstrap_median(ratios(s.facade, s.direct), 1, confidence, resamples);
  const auto d = block_bootstrap_median(deltas, 0, confidence, resamples);
  return {{"probe", probe},
          {"cell", cell},
          {"backend", s.own},
          {"ratio", r.estimate},
          {"ci_low", r.low},
          {"ci_high", r.high},
          {"delta_ns", d.estimate},
          {"delta_low", d.low},
          {"delta_high", d.high},
          {"pairs", r.n},
          {"block_length", r.block_length}};
}

/// One cell's backend comparison before its verdict: the interval of nvidia / internal.
struct backend_pairs {
  std::string cell, probe;
  const pair_sequences *seq = nullptr;
  median_interval m;
  double direct_ns = 0; ///< median per-call time of this backend's raw pointer
};

backend_pairs measure(const std::string &cell, const std::string &probe, const pair_sequences &s,
                      double confidence) {
  backend_pairs b{cell, probe, &s, {}, 0};
  if (s.theirs.empty())
    return b;
  const bool own_is_nvidia = s.own == "nvidia";
  const auto seq = own_is_nvidia ? ratios(s.direct, s.theirs) : ratios(s.theirs, s.direct);
  b.m = block_bootstrap_median(seq, 1, confidence, resamples);
  b.direct_ns = median(s.direct);
  return b;
}

/// How far from 1 a ratio lies, relative, either way.
double distance(const median_interval &m) {
  if (m.estimate <= 0 || m.n == 0)
    return 0;
  return std::max(m.estimate, 1 / m.estimate) - 1;
}

/// The run's method floor per probe: the farthest any same-address control's ratio lay from 1.
/// Two pointers to one address can differ only by the method, so no verdict's interval may claim
/// a change inside that; its own noise is already in its interval.
struct method_floor {
  double floor = 0, floor_ns = 0;
  std::vector<std::string> cells;
  std::vector<double> distances; ///< each control's, in the order of `cells`

  /// The floor without `cell`'s own control: what a control must clear. A run's controls are
  /// many (16 a run in latency-floor.toml), so each judged at p < 0.01 alone would let about
  /// one in six runs have an A/A speak (5 of 320 on the H200 at 6f47a6a, each interval clearing
  /// 1 by under 0.05 %); a control now speaks only when it stands out from the others.
  [[nodiscard]] double without(const std::string &cell) const {
    double out = 0;
    for (std::size_t i = 0; i < cells.size(); ++i)
      if (cells[i] != cell)
        out = std::max(out, distances[i]);
    return out;
  }
};

std::map<std::string, method_floor> method_floors(const std::vector<backend_pairs> &all) {
  std::map<std::string, method_floor> out;
  for (const auto &b : all) {
    if (!b.seq->same_address || b.m.n == 0)
      continue;
    auto &f = out[b.probe];
    const double r = distance(b.m);
    if (f.cells.empty() || r > f.floor)
      f.floor = r, f.floor_ns = r * b.direct_ns;
    f.cells.push_back(b.cell);
    f.distances.push_back(r);
  }
  return out;
}

/// The other backend against this one, always as nvidia over internal so that the two cells of
/// one null-stream mode read alike. A same-address control is judged against the floor of the
/// run's other controls (its own would hide it); every other comparison must clear its probe's
/// floor where the run has one.
json backend_entry(const backend_pairs &b, const std::map<std::string, method_floor> &floors,
                   comparison_rule rule) {
  const pair_sequences &s = *b.seq;
  json e = {{"probe", b.probe}, {"cell", b.cell},  {"own", s.own},
            {"other", s.other}, {"a", "internal"}, {"b", "nvidia"}};
  if (s.fallback) // asked for `requested`, got `own`: labelled, never read as the one asked for
    e.update({{"fallback", true}, {"requested", s.requested}});
  if (s.theirs.empty()) {
    e["verdict"] = "not_measured";
    e["reason"] = s.missing.empty() ? "no other backend in the probe process" : s.missing;
    return e;
  }
  const auto f = floors.find(b.probe);
  const bool control = s.same_address;
  rule.floor = f == floors.end() ? -1.0 : control ? f->second.without(b.cell) : f->second.floor;
  const ratio_interval ri{b.m.estimate, b.m.low, b.m.high};
  e.update({{"ratio", b.m.estimate},
            {"ci_low", b.m.low},
            {"ci_high", b.m.high},
            {"p_value", b.m.p_value},
            {"mde", minimum_detectable_effect(ri)},
            {"threshold", rule.threshold},
            {"floor", f == floors.end() ? json(nullptr) : json(rule.floor)},
            {"control", control},
            {"verdict", decide(ri, b.m.p_value, rule)},
            {"same_address", s.same_address},
            {"pairs", b.m.n},
            {"block_length", b.m.block_length}});
  return e;
}

json floors_json(const std::map<std::string, method_floor> &floors, double threshold) {
  json out = json::array();
  for (const auto &[probe, f] : floors)
    out.push_back({{"probe", probe},
                   {"floor", f.floor},
                   {"floor_ns", f.floor_ns},
                   {"within_threshold", f.floor <= threshold},
                   {"controls", f.cells}});
  return out;
}

} // namespace

paired_blocks paired_summary(const latency_settings &l, const std::vector<json> &records) {
  paired_blocks out;
  comparison_rule rule;
  rule.threshold = l.paired_threshold;
  rule.beyond = 0.5;
  const auto index = index_pairs(records);
  std::vector<backend_pairs> measured;
  for (const auto &[cell, probes] : index)
    for (const auto &[probe, seq] : probes) {
      if (seq.direct.empty())
        continue;
      if (!seq.facade.empty())
        out.overhead.push_back(overhead_entry(cell, probe, seq, 1 - rule.alpha));
      measured.push_back(measure(cell, probe, seq, 1 - rule.alpha));
    }
  const auto floors = method_floors(measured);
  for (const auto &b : measured) {
    json e = backend_entry(b, floors, rule);
    const std::string v = e["verdict"];
    out.differs = out.differs || v == "slower" || v == "faster";
    out.paired.push_back(std::move(e));
  }
  out.floors = floors_json(floors, rule.threshold);
  return out;
}

} // namespace cuparity
