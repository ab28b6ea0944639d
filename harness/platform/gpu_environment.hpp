// Conditions a latency sample was taken under: GPU clocks, temperature, throttling, host load.
#pragma once

#include <nlohmann/json.hpp>

namespace cuparity {

/// Reads what it can (NVML through dlopen of libnvidia-ml.so.1, /proc/loadavg); keys it cannot
/// read are left out. Never throws.
[[nodiscard]] nlohmann::json read_gpu_environment(unsigned device_index = 0);

} // namespace cuparity
