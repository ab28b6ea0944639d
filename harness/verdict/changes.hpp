// Changes against a reference: what a cell reports differently from the cell it is compared with.
#pragma once

#include "harness/matrix/matrix.hpp"
#include "harness/verdict/record_index.hpp"

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cuparity {

/// One thing a cell reports differently from its reference cell: a case's outcome or one of its
/// observations, or what one driver entry was bound to.
struct reference_change {
  std::string cell;
  std::string reference; ///< the reference cell's id
  std::string case_id;   ///< "" for a binding change
  std::string key;       ///< "outcome", "observations.<name>" or "binding.<entry>"
  nlohmann::json before; ///< the reference cell's value (null: absent)
  nlohmann::json after;  ///< this cell's value (null: absent)
  std::string known;     ///< the reason of the known change that matches it; "" when none does
};

/// The differences between two case records of one case: outcome first, then each observation
/// in name order (absent on one side: null there). `cell`/`reference` name the two sides.
[[nodiscard]] std::vector<reference_change> case_changes(const std::string &cell,
                                                         const std::string &reference,
                                                         const nlohmann::json &before,
                                                         const nlohmann::json &after);

/// The differences between two binding maps (binding_map records' `map`): per entry, its symbol,
/// ABI and whether it is missing (an entry on one side only: null on the other).
[[nodiscard]] std::vector<reference_change> binding_changes(const std::string &cell,
                                                            const std::string &reference,
                                                            const nlohmann::json &before,
                                                            const nlohmann::json &after);

/// Every change of every cell against its reference cell ([matrix] reference), in matrix order,
/// then case order; cases recorded on one side only are left to the coverage. Configuration
/// cases (binding.config.*) describe the environment, which differs by design: they are not
/// compared.
[[nodiscard]] std::vector<reference_change>
changes_against_reference(const matrix &m, const verdict::record_index &index,
                          const std::vector<nlohmann::json> &records);

/// Marks each change that a known change matches (the same case and key, and the same cell and
/// value arrived at where the entry names them) with the entry's reason. Returns the entries that
/// matched no change: what they expected no longer happens.
[[nodiscard]] std::vector<known_change> apply_known_changes(std::vector<reference_change> &changes,
                                                            const std::vector<known_change> &known);

/// "<file:line:column>: known change <case> <key> [in <cell>] matched no change (<reason>)".
[[nodiscard]] std::string stale_known_text(const known_change &k);

/// Each cell's binding map (its last binding_map record's `map`), by cell id; for an external
/// suite's cell, rows made from its suite_end records' bindings (`entry`: the function, `symbol`:
/// every symbol bound for it with how, "cuMemGetInfo_v2 (dlsym)").
[[nodiscard]] std::map<std::string, nlohmann::json>
latest_binding_maps(const std::vector<nlohmann::json> &records);

/// Whether a change is a capability lost: an outcome that was pass in the reference and is
/// anything else in the candidate (not_supported included).
[[nodiscard]] bool is_lost_capability(const reference_change &c);

/// "<cell> vs <reference>: <case> <key>: <before> -> <after>" (binding changes without a case).
[[nodiscard]] std::string change_text(const reference_change &c);

} // namespace cuparity
