// Latency probes: one function and one registration line each, run through the facade and direct.
#pragma once

#include "harness/driver/driver.hpp"

#include <benchmark/benchmark.h>
#include <functional>
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
/// project's kernels, a non-blocking stream.
struct probe_env {
  driver &drv;
  CUcontext ctx = nullptr;
  CUdevice dev = 0;
  CUmodule module = nullptr;
  CUstream stream = nullptr;
};

/// The checked call through the facade, as cases make it. bind() returns a callable used inside
/// the timed loop.
struct via_facade {
  static constexpr const char *series = "facade";
  template <class Fn> static auto bind(const Fn &fn) {
    return [&fn](auto... args) { fn(args...); };
  }
};

/// The same entry through its raw pointer, resolved once before timing. The result is still
/// checked (one compare and branch, as any caller would), so the difference between the two
/// series is what the facade itself costs.
struct via_pointer {
  static constexpr const char *series = "direct";
  template <class Fn> static auto bind(const Fn &fn) {
    auto *p = fn.get();
    return [p, &fn](auto... args) {
      if (p(args...) != CUDA_SUCCESS) [[unlikely]]
        fn(args...); // repeat through the facade to throw the proper driver_error
    };
  }
};

struct probe_def {
  std::string name;
  probe_kind kind = probe_kind::host;
  bool has_direct = true;         ///< whether a direct (facade-free) series makes sense
  double bytes_per_iteration = 0; ///< bandwidth probes
  /// Driver calls one benchmark iteration makes; the reported value is per call. A probe with
  /// more than one times itself (SetIterationTime), like the device and bandwidth probes.
  int calls_per_iteration = 1;
  std::function<void(benchmark::State &, probe_env &)> facade;
  std::function<void(benchmark::State &, probe_env &)> direct;
};

class probe_registry {
public:
  static probe_registry &instance();
  /// Registers a probe written once as `fn(state, env, policy)`, instantiated for the facade
  /// and for the direct pointer.
  template <class Fn>
  probe_def &add(std::string name, probe_kind kind, Fn fn, bool has_direct = true) {
    probe_def d;
    d.name = std::move(name);
    d.kind = kind;
    d.has_direct = has_direct;
    d.facade = [fn](benchmark::State &s, probe_env &e) { fn(s, e, via_facade{}); };
    d.direct = [fn](benchmark::State &s, probe_env &e) { fn(s, e, via_pointer{}); };
    m_probes.push_back(std::move(d));
    return m_probes.back();
  }
  [[nodiscard]] const std::vector<probe_def> &all() const noexcept { return m_probes; }
  [[nodiscard]] std::vector<const probe_def *> select(const std::vector<std::string> &globs) const;

private:
  std::vector<probe_def> m_probes;
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
