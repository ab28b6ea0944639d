// What a case sees: the Driver facade, observations, expectations, helpers. (not_supported is
// no call a body can make: it comes from the case's declared requirements, requirements.hpp.)
#pragma once

#include "harness/config/config.hpp"
#include "harness/driver/driver.hpp"
#include "harness/platform/subprocess.hpp"

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <source_location>
#include <stdexcept>
#include <string>
#include <vector>

namespace cuparity {

struct case_def;

/// Thrown by case_context::fail / expect: the case failed with this message.
class case_failed : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

class case_context {
public:
  case_context(driver &d, const effective_config &config, const case_def &def);

  [[nodiscard]] driver &drv() noexcept { return m_driver; }
  [[nodiscard]] const effective_config &config() const noexcept { return m_config; }
  [[nodiscard]] const case_def &definition() const noexcept { return m_def; }
  [[nodiscard]] bool simulated() const noexcept { return m_config.simulated; }

  /// Records a value the runner compares across the cells of a semantic group. Keys are unique
  /// per case; values must be deterministic (no addresses, no raw timings).
  void observe(const std::string &key, nlohmann::json value);
  [[nodiscard]] const nlohmann::json &observations() const noexcept { return m_observations; }

  /// Fails the case with `message` (and the call site) when `condition` is false.
  void expect(bool condition, const std::string &message,
              std::source_location site = std::source_location::current());
  [[noreturn]] void fail(const std::string &message,
                         std::source_location site = std::source_location::current());

  /// Runs helper `name` in a second process of this same binary and environment (never a bare
  /// fork): the cell's helper server, started at the first request and reused by every case of
  /// the cell (harness/framework/helper_client.hpp). For cases that need another process (IPC).
  [[nodiscard]] process_result spawn_helper(const std::string &name,
                                            const std::vector<std::string> &args,
                                            std::chrono::milliseconds timeout);

  /// Has the cell's helper server up (a request that runs no helper): for a case that times
  /// something against a helper's answer and must not count the server's start-up.
  [[nodiscard]] process_result start_helper(std::chrono::milliseconds timeout);

  /// Runs this binary with `args` under this process's environment changed by `changes` (a value
  /// of std::nullopt removes the variable): for cases about start-up behaviour.
  [[nodiscard]] process_result
  spawn_self(const std::vector<std::string> &args,
             const std::map<std::string, std::optional<std::string>> &changes,
             std::chrono::milliseconds timeout);

  /// Set when a sticky error poisoned the CUDA context: the runner restarts the process.
  void mark_poisoned() noexcept { m_poisoned = true; }
  [[nodiscard]] bool poisoned() const noexcept { return m_poisoned; }

private:
  driver &m_driver;
  const effective_config &m_config;
  const case_def &m_def;
  nlohmann::json m_observations = nlohmann::json::object();
  bool m_poisoned = false;
};

} // namespace cuparity
