// Runs the registered latency probes a round at a time, their series interleaved in blocks.
#pragma once

#include "harness/probes/probe_registry.hpp"
#include "harness/protocol/event_stream.hpp"

#include <map>
#include <string>
#include <vector>

namespace cuparity {

/// How long each probe is timed per round, and in what blocks.
struct probe_timing {
  double budget_s = 0.05;  ///< seconds per series per round
  double block_s = 2.5e-4; ///< a block's target length (docs/latency.md#paired-blocks)
  std::map<std::string, double> budget_by_probe; ///< budget_s's override for named probes
};

/// The selected probes, each run per round through a probe_state that interleaves its series.
class probe_runner {
public:
  /// `env` must outlive the runner.
  probe_runner(std::vector<const probe_def *> selected, probe_env &env, const probe_timing &timing);
  /// Every selected probe: one `probe` event per series it ran (its value, or an error: a probe
  /// that throws ends only itself), one `probe_pairs` event with the per-block times of its
  /// series side by side, then `round_done`. `flip` takes each probe's cycle of block orders
  /// backwards.
  void run_round(int round, bool flip, const event_stream &events) const;

private:
  std::vector<const probe_def *> m_selected;
  probe_env &m_env;
  probe_timing m_timing;
};

} // namespace cuparity
