// Opens the driver through the backend the settings select, with Numba's fallback and warnings.
#pragma once

#include "harness/config/config.hpp"
#include "harness/driver/driver.hpp"
#include "harness/driver/driver_library.hpp"

#include <memory>

namespace cuparity {

/// A loaded nvidia backend library (dlclose'd on destruction, after the backend it made).
class plugin_library {
public:
  explicit plugin_library(void *handle) noexcept : m_handle(handle) {}
  ~plugin_library();
  plugin_library(const plugin_library &) = delete;
  plugin_library &operator=(const plugin_library &) = delete;
  [[nodiscard]] void *handle() const noexcept { return m_handle; }

private:
  void *m_handle;
};

/// Test hooks; production code uses the defaults.
struct session_options {
  /// Internal backend without Numba's pins (to show the audit catching what they prevent).
  bool disable_pins = false;
};

class session {
public:
  /// Decides the binding (falling back from nvidia to internal when the nvidia library cannot be
  /// loaded or the driver lacks cuGetProcAddress_v2) and opens the driver. Throws
  /// driver_load_error when the driver itself cannot be opened.
  static std::unique_ptr<session> open(const settings &s, const session_options &options = {});
  ~session();

  [[nodiscard]] const effective_config &config() const noexcept { return m_config; }
  [[nodiscard]] driver &drv() noexcept { return *m_driver; }
  [[nodiscard]] const driver_library &library() const noexcept { return *m_library; }

  /// The other backend over the same driver library with the same null-stream mode, opened once
  /// on first use: the internal backend for an nvidia session, the nvidia one (asked with the
  /// per-thread flag exactly when this session's stream 0 is per-thread) for an internal one. The
  /// paired latency probes call its pointers beside this session's. Null, with `reason`, when it
  /// cannot be opened here (no nvidia backend library, no cuGetProcAddress_v2).
  [[nodiscard]] driver *counterpart(std::string &reason);

private:
  session() = default;
  // Destruction order matters: the driver (and its backend, possibly code from the plugin) goes
  // first, then the plugin, then our handle on the driver library.
  std::shared_ptr<driver_library> m_library;
  std::unique_ptr<plugin_library> m_plugin;
  std::unique_ptr<driver> m_driver;
  effective_config m_config;
  std::unique_ptr<plugin_library> m_counterpart_plugin;
  std::unique_ptr<driver> m_counterpart;
  bool m_counterpart_tried = false;
  std::string m_counterpart_reason;
};

} // namespace cuparity
