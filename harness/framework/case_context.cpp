// case_context: observations, expectations and helper processes for cases.
#include "harness/framework/case_context.hpp"

#include "harness/framework/case_registry.hpp"
#include "harness/framework/helper_client.hpp"
#include "harness/platform/self_exe.hpp"
#include "harness/protocol/helper_protocol.hpp"

#include <filesystem>

namespace cuparity {

case_context::case_context(driver &d, const effective_config &config, const case_def &def)
    : m_driver(d), m_config(config), m_def(def) {}

void case_context::observe(const std::string &key, nlohmann::json value) {
  if (m_observations.contains(key))
    fail("observation '" + key + "' recorded twice");
  m_observations[key] = std::move(value);
}

static std::string where(const std::source_location &site) {
  return std::filesystem::path(site.file_name()).filename().string() + ":" +
         std::to_string(site.line());
}

void case_context::expect(bool condition, const std::string &message, std::source_location site) {
  if (!condition)
    throw case_failed(message + " [" + where(site) + "]");
}

void case_context::fail(const std::string &message, std::source_location site) {
  throw case_failed(message + " [" + where(site) + "]");
}

process_result case_context::spawn_helper(const std::string &name,
                                          const std::vector<std::string> &args,
                                          std::chrono::milliseconds timeout) {
  return helper_client::instance().call(name, args, timeout);
}

process_result case_context::start_helper(std::chrono::milliseconds timeout) {
  return helper_client::instance().call(std::string(helper_ping), {}, timeout);
}

process_result
case_context::spawn_self(const std::vector<std::string> &args,
                         const std::map<std::string, std::optional<std::string>> &changes,
                         std::chrono::milliseconds timeout) {
  process_spec spec;
  spec.argv = {self_executable()};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env = environment_with(changes);
  spec.timeout = timeout;
  return run_process(spec);
}

} // namespace cuparity
