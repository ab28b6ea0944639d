// Paired blocks: the sequences of per-pair ratios and differences, their intervals, the verdicts.
#include "harness/latency/paired_summary.hpp"

#include "harness/latency/latency_stats.hpp"
#include "harness/protocol/records.hpp"

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

/// The other backend against this one, always as nvidia over internal so that the two cells of
/// one null-stream mode read alike.
json backend_entry(const std::string &cell, const std::string &probe, const pair_sequences &s,
                   const comparison_rule &rule) {
  json e = {{"probe", probe},   {"cell", cell},    {"own", s.own},
            {"other", s.other}, {"a", "internal"}, {"b", "nvidia"}};
  if (s.theirs.empty()) {
    e["verdict"] = "not_measured";
    e["reason"] = s.missing.empty() ? "no other backend in the probe process" : s.missing;
    return e;
  }
  const bool own_is_nvidia = s.own == "nvidia";
  const auto seq = own_is_nvidia ? ratios(s.direct, s.theirs) : ratios(s.theirs, s.direct);
  const auto m = block_bootstrap_median(seq, 1, 1 - rule.alpha, resamples);
  const ratio_interval ri{m.estimate, m.low, m.high};
  e.update({{"ratio", m.estimate},
            {"ci_low", m.low},
            {"ci_high", m.high},
            {"p_value", m.p_value},
            {"mde", minimum_detectable_effect(ri)},
            {"threshold", rule.threshold},
            {"verdict", decide(ri, m.p_value, rule)},
            {"same_address", s.same_address},
            {"pairs", m.n},
            {"block_length", m.block_length}});
  return e;
}

} // namespace

paired_blocks paired_summary(const latency_settings &l, const std::vector<json> &records) {
  paired_blocks out;
  comparison_rule rule;
  rule.threshold = l.paired_threshold;
  for (const auto &[cell, probes] : index_pairs(records))
    for (const auto &[probe, seq] : probes) {
      if (seq.direct.empty())
        continue;
      if (!seq.facade.empty())
        out.overhead.push_back(overhead_entry(cell, probe, seq, 1 - rule.alpha));
      json e = backend_entry(cell, probe, seq, rule);
      const std::string v = e["verdict"];
      out.differs = out.differs || v == "slower" || v == "faster";
      out.paired.push_back(std::move(e));
    }
  return out;
}

} // namespace cuparity
