// Runs the registered latency probes under Google Benchmark, one series at a time.
#pragma once

#include "harness/protocol/event_stream.hpp"
#include "harness/suite/probe_registry.hpp"

#include <vector>

namespace cuparity {

/// How long Google Benchmark measures each series in a round.
struct probe_timing {
  double min_time = 0.05; ///< seconds per repetition
  int repetitions = 3;    ///< per round; the round's value is their median
};

/// The selected probes, registered with Google Benchmark once per series (its registry is global:
/// one runner per process), run a round at a time so the order of the series can alternate.
class probe_runner {
public:
  /// `env` must outlive the runner: the registered benchmarks use it.
  probe_runner(std::vector<const probe_def *> selected, probe_env &env, const probe_timing &timing);
  /// Every selected probe, its series in the round's order, one `probe` event each (its value, or
  /// an error: a probe that throws ends only its own series), then `round_done`.
  void run_round(int round, bool direct_first, const event_stream &events) const;

private:
  std::vector<const probe_def *> m_selected;
};

} // namespace cuparity
