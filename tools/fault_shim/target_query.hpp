// The one function the fault shim exports besides the driver API: a look into its target.
#pragma once

extern "C" {
/// dlsym in the driver the shim forwards to (nullptr when it has no such symbol or is not open).
/// The harness asks it for `cuparity_simulated_driver`, so results of the shim in front of the
/// simulated driver are still labelled simulated.
__attribute__((visibility("default"))) void *cuparity_fault_shim_target_symbol(const char *name);
}
