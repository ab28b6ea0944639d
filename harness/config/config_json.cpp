// JSON form of the effective configuration, as cells and `cuparity env` record it.
#include "harness/config/config_json.hpp"

namespace cuparity {

nlohmann::json to_json(const effective_config &c) {
  return {{"binding", c.binding},
          {"requested_binding", c.requested.use_nvidia_binding ? "nvidia" : "internal"},
          {"fallback", c.fallback},
          {"fallback_reason", c.fallback_reason},
          {"per_thread_default_stream", c.per_thread_default_stream},
          {"stream0", c.per_thread_default_stream ? "per-thread" : "legacy"},
          {"numba_ptds", c.requested.numba_ptds},
          {"cuda_python_ptds", c.requested.cuda_python_ptds},
          {"driver_path", c.driver_path},
          {"include_path", c.requested.include_path},
          {"nvidia_backend_path", c.requested.nvidia_backend_path},
          {"variables", c.requested.variables},
          {"warnings", c.warnings},
          {"simulated", c.simulated}};
}

} // namespace cuparity
