// What the harness looks up to label every result produced on this library as simulated, and the
// release it records for it in place of the host's kernel module's (harness/driver/driver_release).
#include "sim.hpp"

#ifndef CUPARITY_SIM_MARKER
#define CUPARITY_SIM_MARKER "cuparity simdriver 1.0"
#endif
#ifndef CUPARITY_SIM_RELEASE
#define CUPARITY_SIM_RELEASE "sim-1.0"
#endif

extern "C" __attribute__((visibility("default"))) const char cuparity_simulated_driver[] =
    CUPARITY_SIM_MARKER;

/// "sim-1.0-13000": the library's own release, then the driver version it models. The version is
/// part of it because CUPARITY_SIM_DRIVER_VERSION changes what the library does (cuGetProcAddress
/// refuses newer versions), as a real release fixes its driver version.
extern "C" __attribute__((visibility("default"))) const char *cuparity_simulated_driver_release() {
  static const std::string release =
      std::string(CUPARITY_SIM_RELEASE) + "-" + std::to_string(cuparity::sim::cfg().driver_version);
  return release.c_str();
}
