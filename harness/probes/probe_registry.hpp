// Latency probes: one function and one registration line each, timed in every series.
#pragma once

#include "harness/driver/driver.hpp"
#include "harness/probes/probe_state.hpp"

#include <string>
#include <vector>

namespace cuparity {

/// What a probe measures, and in what unit its per-iteration value is reported.
enum class probe_kind {
  host,      ///< host API latency, wall time per call, ns
  device,    ///< device-side time from events (manual timing), ns
  bandwidth, ///< bytes per second from events, reported in GB/s (higher is better)
  startup,   ///< cuInit + primary context of a fresh process, ns (from the cell process itself)
};

/// Shared state a probe may use: the driver with a current primary context, a module of the
/// project's kernels, a non-blocking stream; and the other backend's driver over the same library
/// and null-stream mode (null when it cannot be opened here), whose pointers the `other` series
/// calls in the same context.
struct probe_env {
  driver &drv;
  driver *other = nullptr;
  CUcontext ctx = nullptr;
  CUdevice dev = 0;
  CUmodule module = nullptr;
  CUstream stream = nullptr;
};

/// A probe: its set-up, then `for (auto _ : s)` around the calls it times, each made through a
/// callable from `s.bind(e.drv.<entry>)`. The state decides which series each block calls.
using probe_fn = void (*)(probe_state &, probe_env &);

struct probe_def {
  std::string name;
  probe_kind kind = probe_kind::host;
  double bytes_per_iteration = 0; ///< bandwidth probes
  /// Driver calls one iteration makes; the reported value is per call.
  int calls_per_iteration = 1;
  probe_fn body = nullptr;
};

class probe_registry {
public:
  static probe_registry &instance();
  /// Registers a probe. A probe that binds no driver entry has only its facade series.
  probe_def &add(std::string name, probe_kind kind, probe_fn body) {
    m_probes.push_back({std::move(name), kind, 0, 1, body});
    return m_probes.back();
  }
  [[nodiscard]] const std::vector<probe_def> &all() const noexcept { return m_probes; }
  [[nodiscard]] std::vector<const probe_def *> select(const std::vector<std::string> &globs) const;
  /// Whether `glob` names any probe as select() matches it, or cell.startup, which a probe
  /// process measures on itself without a registration (a matrix's probes must name one).
  [[nodiscard]] bool matches_any(const std::string &glob) const;
  /// The kernel image probe_env's module is loaded from ("basic.cubin"), for the device's
  /// architecture (probe_fixture.hpp); "" (the default) loads none.
  void set_fixture_image(std::string name) { m_fixture_image = std::move(name); }
  [[nodiscard]] const std::string &fixture_image() const noexcept { return m_fixture_image; }

private:
  std::vector<probe_def> m_probes;
  std::string m_fixture_image;
};

struct probe_file_registrar {
  explicit probe_file_registrar(void (*register_probes)(probe_registry &)) {
    register_probes(probe_registry::instance());
  }
};

#define CUPARITY_PROBE_FILE(fn)                                                                    \
  static void fn(::cuparity::probe_registry &);                                                    \
  static const ::cuparity::probe_file_registrar fn##_registrar{&fn};                               \
  static void fn(::cuparity::probe_registry &registry)

[[nodiscard]] const char *unit_of(probe_kind k) noexcept;
[[nodiscard]] const char *to_string(probe_kind k) noexcept;

} // namespace cuparity
