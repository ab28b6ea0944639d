// The release of the driver under test: the simulated driver's own, else the kernel module's.
#pragma once

#include "harness/driver/driver_library.hpp"
#include "harness/platform/kernel_driver_release.hpp"

namespace cuparity {

/// What the simulated driver exports for its release (tests/simdriver/src/marker.cpp): a C
/// function taking nothing and returning a NUL-terminated text.
inline constexpr const char *simulated_release_symbol = "cuparity_simulated_driver_release";

/// A simulated driver (`simulated`: its marker was found) answers for itself, through the fault
/// shim too: its release with source "simulated", or {"", ""} when it exports none. NVML and
/// /proc are not asked then, since they describe the host's GPU driver, which is not under test.
/// Any other driver: read_kernel_driver_release(). Never throws.
[[nodiscard]] driver_release query_driver_release(const driver_library &lib, bool simulated);

} // namespace cuparity
