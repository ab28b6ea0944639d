// The driver check: one `cuparity env --json` process before any cell runs.
#include "harness/run/driver_check.hpp"

#include "harness/platform/self_exe.hpp"
#include "harness/platform/subprocess.hpp"
#include "harness/run/cell_environment.hpp"

#include <chrono>

namespace cuparity {

nlohmann::json check_driver(const matrix &m, std::string &error) {
  process_spec spec;
  spec.argv = {self_executable(), "env", "--json"};
  spec.env = driver_check_environment(m);
  spec.timeout = std::chrono::minutes(2);
  process_result r = run_process(spec);
  // A driver that opens but refuses its queries (cuInit, cuDeviceGetCount, ...) is what a
  // validator must report, case by case: env says so with exit 3 and a document whose
  // driver.init_error names the refusal, and the run goes on. Without a document the driver
  // could not be opened at all, and nothing can run.
  const bool opened_but_refused = r.exited && r.exit_code == 3 && !r.out.empty() && r.out[0] == '{';
  if (r.exited && (r.exit_code == 0 || opened_but_refused)) {
    try {
      return nlohmann::json::parse(r.out);
    } catch (const nlohmann::json::exception &e) {
      error = std::string("the driver check printed no JSON: ") + e.what();
      return nullptr;
    }
  }
  error = "the driver check (`cuparity env`) failed (exit " + std::to_string(r.exit_code) +
          "): " + r.err + r.out;
  return nullptr;
}

bool driver_matches(const nlohmann::json &probe, const std::string &expected) {
  const auto driver = probe.value("driver", nlohmann::json::object());
  const auto config = probe.value("config", nlohmann::json::object());
  return expected == std::to_string(driver.value("driver_version", 0)) ||
         expected == driver.value("driver_version_text", "") ||
         config.value("driver_path", "").find(expected) != std::string::npos;
}

std::string driver_mismatch(const nlohmann::json &probe, const std::string &expected) {
  const auto d = probe.value("driver", nlohmann::json::object());
  const auto config = probe.value("config", nlohmann::json::object());
  return "--expect-driver " + expected + ": found driver " + d.value("driver_version_text", "?") +
         " (" + std::to_string(d.value("driver_version", 0)) + ") at " +
         config.value("driver_path", "?");
}

} // namespace cuparity
