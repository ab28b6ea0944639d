// GPU clocks/temperature/throttle reasons via NVML (loaded at run time) and the host's load.
//
// The toolkit here ships no nvml.h, so the few functions used are declared below from NVML's
// documented C API (all return nvmlReturn_t, 0 = NVML_SUCCESS); nothing links libnvidia-ml.
#include "harness/platform/gpu_environment.hpp"

#include "harness/platform/nvml_library.hpp"

#include <fstream>

namespace cuparity {
namespace {

using nvml_device = void *;
using handle_fn = int (*)(unsigned, nvml_device *);
using clock_fn = int (*)(nvml_device, int, unsigned *);
using temp_fn = int (*)(nvml_device, int, unsigned *);
using reasons_fn = int (*)(nvml_device, unsigned long long *);
constexpr int nvml_clock_sm = 1;        // NVML_CLOCK_SM
constexpr int nvml_temperature_gpu = 0; // NVML_TEMPERATURE_GPU

} // namespace

nlohmann::json read_gpu_environment(unsigned device_index) {
  nlohmann::json env = nlohmann::json::object();
  {
    std::ifstream load("/proc/loadavg");
    double one = 0;
    if (load >> one)
      env["load_average"] = one;
  }
  const nvml_session nvml;
  auto sym = [&](const char *n) { return nvml.symbol(n); };
  auto handle = reinterpret_cast<handle_fn>(sym("nvmlDeviceGetHandleByIndex_v2"));
  auto clock = reinterpret_cast<clock_fn>(sym("nvmlDeviceGetClockInfo"));
  auto max_clock = reinterpret_cast<clock_fn>(sym("nvmlDeviceGetMaxClockInfo"));
  auto temp = reinterpret_cast<temp_fn>(sym("nvmlDeviceGetTemperature"));
  // Renamed "clocks event reasons" in newer NVML; the old name is still exported.
  auto reasons = reinterpret_cast<reasons_fn>(sym("nvmlDeviceGetCurrentClocksEventReasons"));
  if (!reasons)
    reasons = reinterpret_cast<reasons_fn>(sym("nvmlDeviceGetCurrentClocksThrottleReasons"));
  nvml_device dev = nullptr;
  if (!handle || handle(device_index, &dev) != 0)
    return env;
  unsigned v = 0;
  if (clock && clock(dev, nvml_clock_sm, &v) == 0)
    env["clocks_sm_mhz"] = v;
  if (max_clock && max_clock(dev, nvml_clock_sm, &v) == 0)
    env["clocks_max_sm_mhz"] = v;
  if (temp && temp(dev, nvml_temperature_gpu, &v) == 0)
    env["temperature_c"] = v;
  unsigned long long r = 0;
  if (reasons && reasons(dev, &r) == 0)
    env["throttle_reasons"] = r;
  return env;
}

} // namespace cuparity
