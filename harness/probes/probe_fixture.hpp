// The probes' shared environment in a probe process: the context, the probes' module, a stream.
#pragma once

#include "harness/probes/probe_registry.hpp"

namespace cuparity {

/// Sets up what the probes share once the primary context of `dev` is retained: `primary` made
/// current, the registry's fixture image loaded (the image for this process's device:
/// device_architecture.hpp), a non-blocking stream. Checked calls: a failure throws (driver_error,
/// or std::invalid_argument naming an image no device of this architecture runs), which ends a
/// probe process's start.
[[nodiscard]] probe_env open_probe_env(driver &d, CUdevice dev, CUcontext primary);

/// Destroys the stream, unloads the module and releases the primary context, ignoring failures
/// (the process is ending). A function the binding lacks still throws driver_error.
void close_probe_env(const probe_env &env);

} // namespace cuparity
