// Reading one round of a probe process's events into latency records (docs/formats.md).
#include "harness/latency/round_events.hpp"

#include "harness/protocol/events.hpp"
#include "harness/protocol/records.hpp"

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

namespace cuparity {
namespace {

/// What one event means for the round being read.
enum class round_step {
  more,   ///< keep reading
  ended,  ///< the round is complete (or a serving process is ready for its first)
  failed, ///< the process could not start: nothing more will come
};

/// A `probe` event as a `latency_sample` record.
nlohmann::json sample_record(const nlohmann::json &ev, const cell &c, int round) {
  nlohmann::json rec =
      make_record(record_type::latency_sample, {{"round", round},
                                                {"cell", c.id},
                                                {"probe", ev.value("probe", "")},
                                                {"series", ev.value("series", "facade")},
                                                {"kind", ev.value("kind", "host")},
                                                {"unit", ev.value("unit", "ns")}});
  if (ev.contains("value") && ev["value"].is_number()) {
    rec["value"] = ev["value"];
  } else {
    rec["error"] = ev.value("error", "no value");
  }
  return rec;
}

/// A `probe_pairs` event as a `latency_pairs` record, its members named one by one (a process
/// cannot add others to the results).
nlohmann::json pairs_record(const nlohmann::json &ev, const cell &c, int round) {
  nlohmann::json rec = make_record(record_type::latency_pairs, {{"round", round}, {"cell", c.id}});
  for (const char *key : {"probe", "own", "other", "same_address", "block_iterations",
                          "per_call_ns", "symbols", "other_missing", "facade_missing",
                          "cupy_missing", "cuda_core_missing", "requested", "fallback"})
    if (ev.contains(key))
      rec[key] = ev[key];
  return rec;
}

/// A `cell_start` as the cell's `latency_cell` record (written once, in round 0).
nlohmann::json cell_record(const nlohmann::json &ev, const cell &c) {
  nlohmann::json rec =
      make_record(record_type::latency_cell,
                  {{"cell", c.id}, {"config", ev.value("config", nlohmann::json::object())}});
  if (ev.contains("process") && ev["process"].is_string())
    rec["process"] = ev["process"];
  return rec;
}

/// Appends what one event of the process records, and says whether the round goes on.
round_step record_event(const nlohmann::json &ev, const cell &c, int round, results_writer &out,
                        std::vector<nlohmann::json> &kept, bool expect_start, round_reading &seen) {
  const auto results = [&](nlohmann::json rec) {
    out.append(rec);
    kept.push_back(std::move(rec));
  };
  const auto kind = event_of(ev);
  if (kind == event_kind::cell_start) {
    seen.started = true;
    if (round == 0)
      results(cell_record(ev, c));
    return expect_start ? round_step::ended : round_step::more;
  }
  if (kind == event_kind::cell_error || kind == event_kind::probe_error) {
    results(make_record(record_type::latency_error,
                        {{"cell", c.id}, {"round", round}, {"message", ev.value("message", "")}}));
    seen.refused = seen.refused || kind == event_kind::cell_error;
    return kind == event_kind::cell_error ? round_step::failed : round_step::more;
  }
  if (kind == event_kind::probe) {
    results(sample_record(ev, c, round));
  } else if (kind == event_kind::probe_pairs) {
    results(pairs_record(ev, c, round));
  }
  if (kind == event_kind::round_done && ev.value("round", -1) == round)
    return round_step::ended;
  return round_step::more;
}

} // namespace

round_reading consume_round(child_process &child, const cell &c, int round, results_writer &results,
                            std::vector<nlohmann::json> &kept, const std::atomic<bool> &stop,
                            bool expect_start) {
  round_reading seen;
  std::string line;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(10);
  for (;;) {
    // Checked before every read, not only when the probe is quiet: a stopped run kills its probe
    // processes at once and records nothing more of the round.
    if (stop) {
      child.kill_group();
      return seen;
    }
    auto st = child.read_line(line, std::chrono::milliseconds(200));
    if (st == child_process::read_status::eof)
      return seen;
    if (st == child_process::read_status::timeout) {
      if (std::chrono::steady_clock::now() > deadline) {
        child.kill_group();
        return seen;
      }
      continue;
    }
    nlohmann::json ev;
    try {
      ev = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception &) {
      continue; // not JSON: no event of ours
    }
    const round_step step = record_event(ev, c, round, results, kept, expect_start, seen);
    if (step != round_step::more) {
      seen.ended = step == round_step::ended;
      return seen;
    }
  }
}

} // namespace cuparity
