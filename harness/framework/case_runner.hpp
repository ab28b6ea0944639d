// Runs one case and maps what happened to an outcome (driver errors become outcome classes).
#pragma once

#include "harness/config/config.hpp"
#include "harness/driver/driver.hpp"
#include "harness/framework/case_registry.hpp"
#include "harness/protocol/outcome.hpp"

#include <nlohmann/json.hpp>
#include <string>

namespace cuparity {

struct case_result {
  std::string id;
  outcome result = outcome::error;
  std::string message;
  nlohmann::json observations = nlohmann::json::object();
  double duration_ms = 0;
  bool poisoned = false; ///< a sticky error: the process must not run further cases
  /// The declared requirement the cell lacks (not_supported), or that the driver should have met
  /// and did not (fail); "" when every requirement held.
  std::string requirement;
};

/// Sticky errors leave the context unusable: the runner restarts the cell's process after one
/// (CUDA docs: "the context cannot be used, so it must be destroyed and recreated").
[[nodiscard]] bool is_sticky_error(CUresult code) noexcept;

/// Runs `def`; never throws. First its declared requirements are checked against `facts`: one the
/// cell lacks makes it not_supported, naming the requirement, and the body does not run. Then the
/// body: CUDA_ERROR_OUT_OF_MEMORY -> resource_error; a sticky error -> fail and poisoned; any
/// other driver_error, CUDA_ERROR_NOT_SUPPORTED included, -> fail (its requirements held, so the
/// call should have worked); a harness exception, or a call the case did not declare -> error; a
/// failed clean-up call (a destructor's) fails a case that would otherwise pass.
[[nodiscard]] case_result run_case(const case_def &def, driver &d, const effective_config &config,
                                   cell_facts &facts);

} // namespace cuparity
