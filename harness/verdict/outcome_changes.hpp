// Run against run, functionally: how each (cell, case) outcome moved from run A to run B.
#pragma once

#include "harness/protocol/outcome.hpp"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cuparity {

/// The classes of a (cell, case) pair between two runs, in the order reports list them
/// (docs/formats.md, cuparity.compare/1).
#define CUPARITY_OUTCOME_CHANGES(X)                                                                \
  X(regression, "regression") /* pass became anything else, or not_supported a failure */          \
  X(fix, "fix")               /* a failure became a success (pass, not_supported) */               \
  X(changed, "changed")       /* another outcome, no capability lost (not_supported -> pass) */    \
  X(added, "new")             /* only B has the pair */                                            \
  X(missing, "missing")       /* only A has the pair */                                            \
  X(unchanged, "unchanged")   /* the same outcome */

enum class outcome_change {
#define CUPARITY_OUTCOME_CHANGE_ENUM(id, name) id,
  CUPARITY_OUTCOME_CHANGES(CUPARITY_OUTCOME_CHANGE_ENUM)
#undef CUPARITY_OUTCOME_CHANGE_ENUM
};

/// Every class, in the order of CUPARITY_OUTCOME_CHANGES.
inline constexpr outcome_change all_outcome_changes[] = {
#define CUPARITY_OUTCOME_CHANGE_LIST(id, name) outcome_change::id,
    CUPARITY_OUTCOME_CHANGES(CUPARITY_OUTCOME_CHANGE_LIST)
#undef CUPARITY_OUTCOME_CHANGE_LIST
};

[[nodiscard]] std::string_view to_string(outcome_change c) noexcept;

/// One result as a summary lists it (summary.json's results[]).
struct run_result {
  std::string cell;
  std::string case_id;
  outcome result = outcome::error;
  std::string message;
  nlohmann::json observations = nlohmann::json::object(); ///< as the run recorded them
};

/// The class of a pair whose outcome was `a` in run A and `b` in run B (nullopt: not recorded).
[[nodiscard]] outcome_change classify_change(std::optional<outcome> a, std::optional<outcome> b);

struct result_change {
  std::string cell;
  std::string case_id;
  outcome_change change = outcome_change::unchanged;
  std::optional<outcome> a, b;
  std::string message_b; ///< B's message, empty when B has no result
  /// The reason of the known change (key "outcome") that accepts this pair's change; "" if none.
  std::string known;
};

/// Every (cell, case) pair of either run, sorted by cell then case; when a run lists a pair
/// twice, its last result counts.
[[nodiscard]] std::vector<result_change> compare_outcomes(const std::vector<run_result> &a,
                                                          const std::vector<run_result> &b);

} // namespace cuparity
