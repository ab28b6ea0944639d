// LD_AUDIT is inherited through the environment, so every process the command starts is
// captured too, each writing its own file into one folder (docs/capture.md).
#include "harness/capture/process_capture.hpp"

#include "harness/capture/capture_map.hpp"
#include "harness/platform/attached_process.hpp"
#include "harness/platform/environment.hpp"
#include "harness/platform/utc_time.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <unistd.h>

namespace cuparity {
namespace {

namespace fs = std::filesystem;

/// A scratch folder removed when this goes out of scope (never throws).
class scratch_dir {
public:
  scratch_dir() {
    const char *tmp = std::getenv("TMPDIR");
    // Absolute: a captured process that changes directory still writes here.
    std::string pattern =
        fs::absolute(tmp && *tmp ? tmp : "/tmp").string() + "/cuparity-capture-XXXXXX";
    if (!mkdtemp(pattern.data()))
      throw capture_error("cannot make a scratch folder " + pattern + ": " +
                          std::generic_category().message(errno));
    m_path = pattern;
  }
  ~scratch_dir() {
    std::error_code ec;
    fs::remove_all(m_path, ec);
  }
  scratch_dir(const scratch_dir &) = delete;
  scratch_dir &operator=(const scratch_dir &) = delete;
  [[nodiscard]] const std::string &path() const noexcept { return m_path; }

private:
  std::string m_path;
};

std::map<std::string, std::string> capture_environment(const capture_request &r,
                                                       const std::string &dir) {
  auto env = current_environment();
  const auto audit = env.find("LD_AUDIT");
  env["LD_AUDIT"] =
      r.audit_library +
      (audit != env.end() && !audit->second.empty() ? ":" + audit->second : std::string());
  env["CUPARITY_CAPTURE_DIR"] = dir;
  if (!r.driver_path.empty())
    env["CUPARITY_CAPTURE_DRIVER"] = r.driver_path;
  else
    env.erase("CUPARITY_CAPTURE_DRIVER");
  return env;
}

} // namespace

capture_outcome capture_process_tree(const capture_request &r) {
  std::error_code ec;
  if (!fs::is_regular_file(r.audit_library, ec))
    throw capture_error("the audit library " + r.audit_library +
                        " is missing: build it (scripts/build --target cuparity_audit)");
  std::optional<scratch_dir> scratch;
  std::string dir = r.events_dir;
  if (dir.empty()) {
    scratch.emplace();
    dir = scratch->path();
  } else {
    dir = fs::absolute(dir).string();
  }
  process_result ran;
  try {
    ran = run_attached(r.command, capture_environment(r, dir));
  } catch (const std::system_error &e) {
    throw capture_error(e.what());
  }
  capture_facts facts;
  facts.command = r.command;
  facts.exit_status = shell_status(ran);
  facts.captured = utc_now();
  const auto processes = read_capture_dir(dir, facts.problems);
  if (processes.empty())
    throw capture_error("the command exited " + std::to_string(facts.exit_status) +
                        ", but no process of it was captured: the audit library did not load "
                        "(a setuid or statically linked program, or LD_AUDIT refused it)");
  return {facts.exit_status, capture_map_json(processes, facts)};
}

} // namespace cuparity
