// Driver version and device list as the driver reports them (for `cuparity env` and provenance).
#pragma once

#include "harness/driver/driver.hpp"

#include <string>
#include <vector>

namespace cuparity {

struct device_fact {
  int ordinal = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  std::size_t total_memory = 0;
  std::string uuid; ///< GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx
};

struct driver_facts {
  int driver_version = 0; ///< cuDriverGetVersion, e.g. 13000
  std::string init_error; ///< cuInit's failure, if any (then no devices are listed)
  std::vector<device_fact> devices;
};

/// Whether the caller has initialised the driver already: a cell's start-up times its own cuInit,
/// and a second one there is a second driver start where a driver's cuInit is slow.
enum class driver_init { call, done };

/// Calls cuDriverGetVersion, cuInit (unless `init` says it is done) and the device queries. Never
/// throws: failures are recorded.
[[nodiscard]] driver_facts query_driver_facts(driver &d, driver_init init = driver_init::call);

/// "13.0" from 13000.
[[nodiscard]] std::string version_text(int driver_version);

} // namespace cuparity
