// The records a verdict reads, indexed once: the latest record per cell and per (cell, case).
#pragma once

#include "harness/matrix/matrix.hpp"

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace cuparity::verdict {

using case_key = std::pair<std::string, std::string>; ///< (cell id, case id)

struct record_index {
  std::map<std::string, nlohmann::json> cells;    ///< cell id -> its latest "cell" record
  std::map<std::string, std::string> cell_errors; ///< cell id -> its latest cell_error message
  std::map<case_key, nlohmann::json> cases;       ///< (cell, case) -> its latest "case" record
  /// (cell, case) -> its latest record, for the cases of a suite whose latest suite_end in that
  /// cell says its environment was broken (`environment`): they did not run as written, so they
  /// are kept out of `cases` (neither judged nor compared), as a suite that could not run left none
  std::map<case_key, nlohmann::json> set_aside;
  /// (cell, external suite or program) -> its latest suite_end record
  std::map<case_key, nlohmann::json> suite_ends;
  /// (cell, external suite) -> why the suite could not run there; a later suite_end clears it
  std::map<case_key, std::string> suite_errors;
  /// (cell, source) -> the first message of a latency_error: a [[benchmark]] (source: its name)
  /// or a probe process, C++ or Python (source "latency probes"), that could not run in the cell;
  /// the latest attempt's only, as a resumed run times its latency again (outputs.cpp)
  std::map<case_key, std::string> latency_errors;
  /// cell -> function -> "symbol (source)": what its external suites' processes bound
  std::map<std::string, std::map<std::string, std::set<std::string>>> bindings;
  /// (cell, external suite or program) -> function -> "symbol (source)": its latest suite_end's
  std::map<case_key, std::map<std::string, std::set<std::string>>> suite_bindings;
  /// No cell started and every cell_error came from opening the driver: the host is at fault,
  /// not the bindings (docs/verdicts.md, exit code 3).
  bool driver_error_everywhere = true;
};

/// Later records replace earlier ones, so a resumed run's last word on a case is the one read.
[[nodiscard]] record_index index_records(const std::vector<nlohmann::json> &records);

/// The effective configuration a cell record carries (an empty object when it has none).
[[nodiscard]] nlohmann::json config_of(const nlohmann::json &cell_record);

/// The matrix's cells by id; records may name cells the matrix does not have (a stale run).
class cell_lookup {
public:
  explicit cell_lookup(const matrix &m);
  /// The first cell of the matrix with this id, nullptr when there is none.
  [[nodiscard]] const cell *find(const std::string &id) const;

private:
  std::map<std::string, const cell *> m_cells;
};

} // namespace cuparity::verdict
