// Provenance record: compiled-in revision, run-time host and driver facts.
#include "harness/run/provenance.hpp"

#include "harness/io/sha256.hpp"
#include "harness/platform/host_id.hpp"

// The toolkit version only (CUDA_VERSION), for provenance; nothing is called.
#include "cuparity_revision.hpp"

#include <chrono>
#include <ctime>
#include <cuda.h>
#include <unistd.h>

namespace cuparity {

std::string host_id() {
  // machine-id(5): an application should publish a keyed hash of the id, never the id itself.
  const auto machine = read_machine_id();
  return machine.empty() ? std::string() : sha256_hex("cuparity host id:" + machine).substr(0, 12);
}

nlohmann::json make_provenance(const nlohmann::json &driver_env,
                               const std::vector<std::string> &argv) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  nlohmann::json gpus = nlohmann::json::array();
  const auto driver = driver_env.value("driver", nlohmann::json::object());
  for (const auto &d : driver.value("devices", nlohmann::json::array()))
    gpus.push_back(d.value("name", "?"));
  const auto config = driver_env.value("config", nlohmann::json::object());
  const auto devices = driver.value("devices", nlohmann::json::array());
  // The release comes from the driver check, the process that opened the driver: only it can ask
  // a simulated driver, and it asks NVML and /proc for any other.
  return {{"git_revision", CUPARITY_GIT_REVISION},
          {"git_dirty", CUPARITY_GIT_DIRTY},
          {"host", host},
          {"host_id", host_id()},
          {"gpus", gpus},
          {"devices", devices},
          {"gpu_count", devices.size()},
          {"driver_version", driver.value("driver_version", 0)},
          {"driver_version_text", driver.value("driver_version_text", "")},
          {"driver_release", driver_env.value("driver_release", "")},
          {"driver_release_source", driver_env.value("driver_release_source", "")},
          {"driver_path", config.value("driver_path", "")},
          {"toolkit_version", CUDA_VERSION},
          {"simulated", config.value("simulated", false)},
          {"argv", argv},
          {"cuparity_version", "0.1.0"}};
}

std::string version_text() {
  return std::string("cuparity ") + CUPARITY_VERSION + " (git " + CUPARITY_GIT_REVISION +
         (CUPARITY_GIT_DIRTY ? ", modified" : "") + ")";
}

} // namespace cuparity
