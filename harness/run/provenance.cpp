// Provenance record: compiled-in revision, run-time host and driver facts.
#include "harness/run/provenance.hpp"

// The toolkit version only (CUDA_VERSION), for provenance; nothing is called.
#include "cuparity_revision.hpp"

#include <chrono>
#include <ctime>
#include <cuda.h>
#include <unistd.h>

namespace cuparity {

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
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
  return {{"git_revision", CUPARITY_GIT_REVISION},
          {"git_dirty", CUPARITY_GIT_DIRTY},
          {"host", host},
          {"gpus", gpus},
          {"devices", driver.value("devices", nlohmann::json::array())},
          {"driver_version", driver.value("driver_version", 0)},
          {"driver_version_text", driver.value("driver_version_text", "")},
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
