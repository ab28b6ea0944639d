// results.jsonl's record types, and the typed form of the records the verdict reads.
#pragma once

#include "harness/protocol/outcome.hpp"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace cuparity {

// Every record type, once (the "type" member of each results.jsonl line; docs/formats.md).
#define CUPARITY_RECORDS(X)                                                                        \
  X(run, "run")                           /* a run started: matrix, plan, provenance */            \
  X(resume, "resume")                     /* a resume started: what was still pending */           \
  X(cell, "cell")                         /* a cell process started: config, driver, startup */    \
  X(case_result, "case")                  /* one case ended in one cell */                         \
  X(cell_error, "cell_error")             /* a cell could not start, or died between cases */      \
  X(binding_map, "binding_map")           /* what a cell bound, at its end */                      \
  X(cell_exit, "cell_exit")               /* a cell process ended: its lifetime, its exit */       \
  X(suite_end, "suite_end")               /* an external suite ran to its end in a cell */         \
  X(functional_phase, "functional_phase") /* the functional phase ended: wall time */              \
  X(latency_phase, "latency_phase")       /* the latency phase ended */                            \
  X(latency_environment, "latency_environment") /* GPU clocks and temperature around a round */    \
  X(latency_sample, "latency_sample")           /* one series' value in one round */               \
  X(latency_pairs, "latency_pairs")             /* a probe's series block by block, one round */   \
  X(latency_cell, "latency_cell")               /* a probe process started: its config */          \
  X(latency_error, "latency_error")             /* a probe process failed */

enum class record_type {
#define CUPARITY_RECORD_ENUM(id, name) id,
  CUPARITY_RECORDS(CUPARITY_RECORD_ENUM)
#undef CUPARITY_RECORD_ENUM
};

[[nodiscard]] std::string_view to_string(record_type t) noexcept;
[[nodiscard]] std::optional<record_type> parse_record_type(std::string_view s) noexcept;

/// `fields` with its "type" member set to `t`.
[[nodiscard]] nlohmann::json make_record(record_type t,
                                         nlohmann::json fields = nlohmann::json::object());
/// The type of a record; std::nullopt for a line that is no record of ours.
[[nodiscard]] std::optional<record_type> record_type_of(const nlohmann::json &record);
/// True when `record` is of type `t`.
[[nodiscard]] bool is_record(const nlohmann::json &record, record_type t);

/// Where a case's time went besides its own work, as its cell measured it (the phase's
/// breakdown). Records written before these existed read as zeros.
struct case_costs {
  double lock_wait_ms = 0;    ///< waiting for the GPU lock before the case started
  double helper_start_ms = 0; ///< starting the cell's helper server, when this case did
  double helper_ms = 0;       ///< in requests to the helper server (part of duration_ms)
};

/// One case's result in one cell: the record the verdict, the reports and --resume read.
struct case_record {
  std::string cell;
  std::string case_id;
  outcome result = outcome::error;
  std::string message;
  nlohmann::json observations = nlohmann::json::object();
  double duration_ms = 0;
  case_costs costs;
  /// The declared requirement behind a not_supported (or a failed requirement); "" for none.
  std::string requirement;
  /// When the case started, in ms since the functional phase began (the runner's clock, when
  /// the case_start event arrived); negative when unknown (a record written before this existed).
  double started_at_ms = -1;
};

[[nodiscard]] nlohmann::json to_json(const case_record &r);
/// Throws std::invalid_argument naming the field when `j` is not a well-formed case record.
[[nodiscard]] case_record case_record_from_json(const nlohmann::json &j);

} // namespace cuparity
