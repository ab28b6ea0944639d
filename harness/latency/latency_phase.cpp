// Latency rounds (processes, interleaving, stopping rule) and their statistics.
#include "harness/latency/latency_phase.hpp"

#include "harness/config/config.hpp"
#include "harness/latency/latency_stats.hpp"
#include "harness/platform/gpu_environment.hpp"
#include "harness/platform/self_exe.hpp"
#include "harness/platform/subprocess.hpp"
#include "harness/protocol/events.hpp"
#include "harness/protocol/records.hpp"
#include "harness/verdict/compare.hpp"

#include <filesystem>
#include <fnmatch.h>
#include <iostream>
#include <map>
#include <memory>
#include <set>

namespace cuparity {
namespace fs = std::filesystem;

namespace {

using samples_t =
    std::map<std::string, std::map<std::string, std::vector<double>>>; // probe->series

std::string series_name(const std::string &cell, const std::string &series) {
  return series == "direct" ? "direct:" + cell : cell;
}

samples_t collect(const std::vector<nlohmann::json> &records,
                  std::map<std::string, std::pair<std::string, std::string>> &probe_kind_unit) {
  samples_t s;
  for (const auto &r : records) {
    if (!is_record(r, record_type::latency_sample) || !r.contains("value"))
      continue;
    const std::string probe = r.value("probe", "");
    s[probe][series_name(r.value("cell", ""), r.value("series", "facade"))].push_back(
        r["value"].get<double>());
    probe_kind_unit[probe] = {r.value("kind", "host"), r.value("unit", "ns")};
  }
  return s;
}

} // namespace

namespace {

/// The probe without driver calls (cases/probes.cpp): its spread is the host's, not a binding's.
constexpr const char *reference_probe = "host.cpu_reference";

/// Reads a probe process's events until `round_done` for `round` (or its end), appending records.
/// Returns false when the process is gone or did not answer in time.
bool consume_round(child_process &child, const cell &c, int round, results_writer &results,
                   std::map<std::string, std::map<std::string, std::vector<double>>> &seen,
                   const std::atomic<bool> &stop, bool expect_start) {
  std::string line;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(10);
  for (;;) {
    auto st = child.read_line(line, std::chrono::milliseconds(200));
    if (st == child_process::read_status::eof)
      return false;
    if (st == child_process::read_status::timeout) {
      if (stop || std::chrono::steady_clock::now() > deadline) {
        child.kill_group();
        return false;
      }
      continue;
    }
    nlohmann::json ev;
    try {
      ev = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception &) {
      continue;
    }
    const auto kind = event_of(ev);
    if (kind == event_kind::cell_start) {
      if (round == 0)
        results.append(make_record(
            record_type::latency_cell,
            {{"cell", c.id}, {"config", ev.value("config", nlohmann::json::object())}}));
      if (expect_start)
        return true; // a serving process is ready for its first round
    } else if (kind == event_kind::cell_error || kind == event_kind::probe_error) {
      results.append(
          make_record(record_type::latency_error,
                      {{"cell", c.id}, {"round", round}, {"message", ev.value("message", "")}}));
      if (kind == event_kind::cell_error)
        return false;
    } else if (kind == event_kind::probe) {
      nlohmann::json rec = make_record(record_type::latency_sample,
                                    {{"round", round},
                                     {"cell", c.id},
                                     {"probe", ev.value("probe", "")},
                                     {"series", ev.value("series", "facade")},
                                     {"kind", ev.value("kind", "host")},
                                     {"unit", ev.value("unit", "ns")}});
      if (ev.contains("value")) {
        rec["value"] = ev["value"];
        seen[rec["probe"]][series_name(c.id, rec["series"])].push_back(ev["value"]);
      } else {
        rec["error"] = ev.value("error", "no value");
      }
      results.append(rec);
    } else if (kind == event_kind::round_done && ev.value("round", -1) == round) {
      return true;
    }
  }
}

process_spec probe_spec(const matrix &m, const cell &c, const latency_run_options &o,
                        const std::vector<std::string> &args) {
  process_spec spec;
  spec.argv = {self_executable(), "probe", "--events-fd", "3"};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env = environment_with(cell_changes(m.variables, c.env, o.gpu));
  return spec;
}

} // namespace

void run_latency_phase(const matrix &m, const latency_run_options &o, results_writer &results,
                       const std::atomic<bool> &stop) {
  const auto &l = m.latency;
  const double min_time = o.min_time_override > 0 ? o.min_time_override : l.min_time_s;
  const std::string log = o.log_dir + "/latency.log";
  std::vector<std::string> probe_args{"--min-time", std::to_string(min_time)};
  for (const auto &p : l.probes)
    probe_args.insert(probe_args.end(), {"--probe", p});
  bool want_startup = l.probes.empty();
  for (const auto &p : l.probes)
    want_startup = want_startup || fnmatch(p.c_str(), "cell.startup", 0) == 0;

  // Persistent mode: one serving process per cell for the whole phase, started up front.
  std::map<const cell *, std::unique_ptr<child_process>> servers;
  if (l.persistent)
    for (const auto &c : m.cells) {
      auto args = probe_args;
      args.push_back("--serve");
      auto child = std::make_unique<child_process>(probe_spec(m, c, o, args), log, true);
      std::map<std::string, std::map<std::string, std::vector<double>>> ignored;
      if (consume_round(*child, c, 0, results, ignored, stop, true))
        servers[&c] = std::move(child);
    }

  std::map<std::string, std::map<std::string, std::vector<double>>> seen; // probe -> series
  for (int round = 0; round < l.max_rounds && !stop; ++round) {
    if (round >= l.rounds) {
      bool spread_ok = true;
      for (const auto &[probe, series] : seen)
        for (const auto &[name, values] : series)
          spread_ok = spread_ok && robust_cv(values) <= l.target_cv;
      if (spread_ok)
        break;
    }
    std::vector<const cell *> order;
    for (const auto &c : m.cells)
      order.push_back(&c);
    if (round % 2)
      std::reverse(order.begin(), order.end());
    for (const cell *c : order) {
      if (stop)
        return;
      if (l.persistent) {
        auto it = servers.find(c);
        if (it == servers.end())
          continue;
        if (!it->second->send_line("round " + std::to_string(round) + " " +
                                   std::to_string(round % 2)) ||
            !consume_round(*it->second, *c, round, results, seen, stop, false))
          servers.erase(it);
        if (want_startup) { // what a fresh process pays: measured by one, every round
          child_process fresh(probe_spec(m, *c, o, {"--probe", "cell.startup"}), log);
          consume_round(fresh, *c, round, results, seen, stop, false);
          (void)fresh.wait();
        }
        continue;
      }
      auto args = probe_args;
      if (round % 2)
        args.push_back("--direct-first");
      child_process child(probe_spec(m, *c, o, args), log);
      consume_round(child, *c, round, results, seen, stop, false);
      (void)child.wait();
    }
    nlohmann::json env = read_gpu_environment(0);
    env["type"] = to_string(record_type::latency_environment);
    env["round"] = round;
    results.append(env);
  }
  for (auto &[c, child] : servers) {
    child->close_input();
    (void)child->wait();
  }
}

nlohmann::json latency_summary(const matrix &m, const std::vector<nlohmann::json> &records,
                               const nlohmann::json *baseline, bool &failed) {
  failed = false;
  std::map<std::string, std::pair<std::string, std::string>> kind_unit;
  samples_t samples = collect(records, kind_unit);
  if (samples.empty())
    return nullptr;
  // probe -> series -> round -> value, for pairing series measured in the same process.
  std::map<std::string, std::map<std::string, std::map<int, double>>> rounds_of;
  for (const auto &r : records)
    if (is_record(r, record_type::latency_sample) && r.contains("value"))
      rounds_of[r.value("probe", "")][series_name(r.value("cell", ""), r.value("series", "facade"))]
               [r.value("round", 0)] = r["value"].get<double>();
  const auto &l = m.latency;
  // Semantic groups from what each cell's process decided (functional or probe processes).
  std::map<std::string, std::string> cell_group;
  for (const auto &r : records) {
    if ((is_record(r, record_type::cell) || is_record(r, record_type::latency_cell)) &&
        r.contains("config"))
      cell_group[r.value("cell", "")] = semantic_key(r["config"]);
  }
  auto rule_for = [&](const std::string &probe) {
    comparison_rule rule;
    rule.threshold = l.thresholds.count(probe) ? l.thresholds.at(probe) : l.regression_threshold;
    rule.lower_is_better = kind_unit[probe].second != "GB/s";
    rule.floor = rule.lower_is_better ? l.floor_ns : 0;
    return rule;
  };
  auto verdict_json = [](const latency_verdict &v, const comparison_rule &rule) {
    return nlohmann::json{{"median_a", v.median_a},  {"median_b", v.median_b},
                          {"ratio", v.ratio.ratio},  {"ci_low", v.ratio.low},
                          {"ci_high", v.ratio.high}, {"p_value", v.p_value},
                          {"verdict", v.verdict},    {"threshold", rule.threshold}};
  };
  nlohmann::json probes = nlohmann::json::array(), stats = nlohmann::json::array(),
                 comparisons = nlohmann::json::array(), overhead = nlohmann::json::array(),
                 base = nlohmann::json::array();
  int rounds = 0;
  for (const auto &r : records)
    if (is_record(r, record_type::latency_sample))
      rounds = std::max(rounds, r.value("round", 0) + 1);
  for (const auto &[probe, series] : samples) {
    const auto rule = rule_for(probe);
    probes.push_back({{"name", probe},
                      {"kind", kind_unit[probe].first},
                      {"unit", kind_unit[probe].second},
                      {"lower_is_better", rule.lower_is_better},
                      {"samples", series}});
    for (const auto &[name, values] : series)
      stats.push_back({{"probe", probe},
                       {"series", name},
                       {"median", median(values)},
                       {"cv", coefficient_of_variation(values)},
                       {"rcv", robust_cv(values)},
                       {"n", values.size()}});
    // Backend against backend: every pair of cells inside a semantic group, in matrix order.
    for (std::size_t i = 0; i < m.cells.size(); ++i)
      for (std::size_t j = i + 1; j < m.cells.size(); ++j) {
        const auto &a = m.cells[i].id, &b = m.cells[j].id;
        if (!series.count(a) || !series.count(b) || !cell_group.count(a) ||
            cell_group[a] != cell_group[b])
          continue;
        auto v = compare_samples(series.at(a), series.at(b), rule);
        auto j_v = verdict_json(v, rule);
        j_v["probe"] = probe, j_v["group"] = cell_group[a], j_v["a"] = a, j_v["b"] = b;
        comparisons.push_back(j_v);
        failed = failed || (l.fail_on_regression && v.verdict == "slower");
      }
    // Facade overhead: the facade series against the direct series of the same process,
    // paired round by round (both ran in one process, so the process-to-process spread they
    // share cancels; on the H200 that narrowed the launch interval from +-11 % to +-3 %).
    for (const auto &c : m.cells) {
      const auto &by_round = rounds_of[probe];
      auto f = by_round.find(c.id), d = by_round.find("direct:" + c.id);
      if (f == by_round.end() || d == by_round.end())
        continue;
      std::vector<double> fv, dv, deltas;
      for (const auto &[round, value] : f->second)
        if (auto it = d->second.find(round); it != d->second.end()) {
          fv.push_back(value);
          dv.push_back(it->second);
          deltas.push_back(value - it->second);
        }
      if (fv.empty())
        continue;
      auto ri = paired_ratio(dv, fv);
      overhead.push_back({{"probe", probe},
                          {"series", c.id},
                          {"ratio", ri.ratio},
                          {"ci_low", ri.low},
                          {"ci_high", ri.high},
                          {"delta", median(deltas)},
                          {"pairs", fv.size()}});
    }
    // This run against a previous one, series by series.
    if (baseline && baseline->contains("latency") && (*baseline)["latency"].is_object()) {
      for (const auto &bp : (*baseline)["latency"].value("probes", nlohmann::json::array())) {
        if (bp.value("name", "") != probe)
          continue;
        for (const auto &[name, values] : series) {
          if (!bp["samples"].contains(name))
            continue;
          auto v = compare_samples(bp["samples"][name].get<std::vector<double>>(), values, rule);
          auto j_v = verdict_json(v, rule);
          const bool regression = v.verdict == "slower";
          j_v["probe"] = probe, j_v["a"] = "baseline:" + name, j_v["b"] = name;
          j_v["regression"] = regression;
          base.push_back(j_v);
          failed = failed || (l.fail_on_regression && regression);
        }
      }
    }
  }
  // Noise: which series spread more than the matrix's target over the rounds (robust CV, as the
  // stopping rule), read against the driver-free reference probe measured in the same rounds.
  nlohmann::json over_target = nlohmann::json::array(), reference = nullptr;
  for (const auto &st : stats) {
    const double rcv = st["rcv"], cv = st["cv"];
    if (st["probe"] == reference_probe) {
      if (reference.is_null())
        reference = {{"probe", reference_probe}, {"rcv_max", rcv}, {"cv_max", cv}};
      reference["rcv_max"] = std::max(reference["rcv_max"].get<double>(), rcv);
      reference["cv_max"] = std::max(reference["cv_max"].get<double>(), cv);
    }
    if (rcv > l.target_cv)
      over_target.push_back(
          {{"probe", st["probe"]}, {"series", st["series"]}, {"rcv", rcv}, {"cv", cv}});
  }
  const nlohmann::json noise{
      {"target_cv", l.target_cv}, {"over_target", over_target}, {"reference", reference}};
  nlohmann::json environment = nlohmann::json::array();
  for (const auto &r : records)
    if (is_record(r, record_type::latency_environment)) {
      auto e = r;
      e.erase("type");
      environment.push_back(e);
    }
  return {{"schema", "cuparity.latency/1"},
          {"rounds", rounds},
          {"environment", environment.empty() ? nlohmann::json::object() : environment.front()},
          {"environment_rounds", environment},
          {"probes", probes},
          {"stats", stats},
          {"comparisons", comparisons},
          {"overhead", overhead},
          {"noise", noise},
          {"baseline", base}};
}

} // namespace cuparity
