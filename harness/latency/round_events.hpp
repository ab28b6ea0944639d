// Reading one round of a probe process's events into latency records.
#pragma once

#include "harness/matrix/matrix.hpp"
#include "harness/platform/subprocess.hpp"
#include "harness/protocol/results.hpp"

#include <atomic>
#include <nlohmann/json.hpp>
#include <vector>

namespace cuparity {

/// What reading one round of a probe process saw.
struct round_reading {
  bool ended = false;   ///< round_done for the round (or, with expect_start, the cell_start)
  bool started = false; ///< the process wrote its cell_start in this reading
  bool refused = false; ///< it wrote cell_error: it could not start, and said why
};

/// Reads a probe process's events until `round_done` for `round` (or, with `expect_start`, until
/// its `cell_start`), appending `latency_sample`, `latency_pairs`, `latency_cell` and
/// `latency_error` records, each also to `kept` (what the phase's stopping rule judges). Not
/// ended when the process is gone, could not start, or did not answer in time (it is then
/// killed). A `cell_start` that names its `process` (the Python probe's "python") gives the
/// `latency_cell` record that member, so the summary tells the processes of one cell apart.
round_reading consume_round(child_process &child, const cell &c, int round, results_writer &results,
                            std::vector<nlohmann::json> &kept, const std::atomic<bool> &stop,
                            bool expect_start);

} // namespace cuparity
