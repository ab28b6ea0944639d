// Where the functional phase's time went: process start, cuInit, contexts, the GPU lock, suites.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cuparity {

/// One case summed over the cells that ran it.
struct case_cost {
  std::string case_id;
  double summed_ms = 0;
  double max_ms = 0;
  int runs = 0;
};

/// Times summed over every cell process of the phase (a resumed run counts each attempt's).
/// Case time includes the helper requests made inside it; the lock wait is outside it.
struct phase_breakdown {
  double wall_s = 0;           ///< the functional phase, wall clock
  int processes = 0;           ///< cell processes that reported their start
  double process_start_ms = 0; ///< spawn to the cell's start, less cuInit and the context
  double cuinit_ms = 0;
  double primary_ctx_ms = 0;  ///< the cell's own cuDevicePrimaryCtxRetain
  double lock_wait_ms = 0;    ///< cases waiting for the GPU lock (behind exclusive cases)
  double cases_ms = 0;        ///< every case's own duration
  double helper_start_ms = 0; ///< starting helper servers (process, cuInit, context)
  int helper_starts = 0;
  double helper_ms = 0; ///< in helper requests, start-ups included
  double exit_ms = 0;   ///< from a cell's last event to its exit (context teardown)
  std::map<std::string, double> suites_ms; ///< suite (a case id's first part) -> summed duration
  std::vector<case_cost> cases;            ///< every case, most expensive first
  std::string longest_cell;                ///< the cell whose processes lived longest
  double longest_cell_ms = 0;
  /// The phase's timeline, from the records' times since the phase began (absent in older runs):
  /// running_ms[k] is how long exactly k cases were running at once, from the phase's start to
  /// the last case's end. Time at 1 is mostly exclusive cases (each drains the others); time at
  /// 0 is cells starting, waiting for the lock or exiting.
  std::vector<double> running_ms;
  double first_case_ms = -1;    ///< when the first case started
  double last_case_end_ms = -1; ///< when the last case ended
};

/// The breakdown of `records` (results.jsonl's, as the outputs read them).
[[nodiscard]] phase_breakdown breakdown_of(const std::vector<nlohmann::json> &records,
                                           double functional_wall_s);

/// summary.json's "breakdown" (docs/formats.md); its "cases" holds the `top` most expensive.
[[nodiscard]] nlohmann::json breakdown_json(const phase_breakdown &b, std::size_t top = 10);

/// The console's lines for it: the summed parts, then the suites and the costliest cases.
[[nodiscard]] std::string breakdown_text(const phase_breakdown &b, std::size_t top = 5);

} // namespace cuparity
