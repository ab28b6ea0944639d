// Runs one case and maps what happened to an outcome (driver errors become outcome classes).
#pragma once

#include "harness/suite/case_registry.hpp"
#include "harness/config/config.hpp"
#include "harness/driver/driver.hpp"
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
};

/// Sticky errors leave the context unusable: the runner restarts the cell's process after one
/// (CUDA docs: "the context cannot be used, so it must be destroyed and recreated").
[[nodiscard]] bool is_sticky_error(CUresult code) noexcept;

/// Runs `def`; never throws. CUDA_ERROR_OUT_OF_MEMORY -> resource_error; CUDA_ERROR_NOT_SUPPORTED
/// -> not_supported; a sticky error -> fail and poisoned; any other driver_error -> fail; a
/// harness exception -> error.
[[nodiscard]] case_result run_case(const case_def &def, driver &d, const effective_config &config);

} // namespace cuparity
