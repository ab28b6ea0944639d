// Backend selection: the seed's effective-behaviour table, fallback and misuse warnings.
#include "harness/session/session.hpp"

#include "backends/internal/internal_backend.hpp"
#include "backends/map/map_backend.hpp"

#include <dlfcn.h>

namespace cuparity {
namespace {

struct nvidia_attempt {
  std::unique_ptr<class backend> made;
  std::unique_ptr<plugin_library> plugin;
  std::string failure; ///< why it cannot be used (empty on success)
};

nvidia_attempt try_nvidia(const settings &s) {
  nvidia_attempt a;
  void *h = dlopen(s.nvidia_backend_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *why = dlerror();
    a.failure = "the nvidia backend library " + s.nvidia_backend_path + " cannot be loaded (" +
                (why ? why : "unknown dlopen error") + "; its path comes from " +
                var::nvidia_backend + " or defaults to the executable's directory)";
    return a;
  }
  a.plugin = std::make_unique<plugin_library>(h);
  auto create = reinterpret_cast<nvidia_backend_create_fn>(dlsym(h, nvidia_backend_factory));
  if (!create) {
    a.failure = "the nvidia backend library " + s.nvidia_backend_path + " has no " +
                nvidia_backend_factory + " (not a cuparity backend library?)";
    return a;
  }
  nvidia_backend_request req;
  req.driver_path = s.driver_path.c_str();
  req.per_thread_default_stream = s.cuda_python_ptds;
  backend *made = nullptr;
  char error[1024] = {};
  const auto status = static_cast<plugin_status>(create(&req, &made, error, sizeof error));
  if (status == plugin_status::driver_unopenable) // no binding could work, so no fallback
    throw driver_load_error(error);
  if (status != plugin_status::ok || !made) {
    a.failure = error[0] ? error : "the nvidia backend refused to start";
    return a;
  }
  a.made.reset(made);
  return a;
}

} // namespace

plugin_library::~plugin_library() {
  dlclose(m_handle);
}

session::~session() {
  m_counterpart.reset();
  m_counterpart_plugin.reset();
  m_driver.reset();
  m_plugin.reset();
}

driver *session::counterpart(std::string &reason) {
  if (!m_counterpart_tried) {
    m_counterpart_tried = true;
    const bool ptds = m_config.per_thread_default_stream;
    if (m_config.binding == "nvidia") {
      m_counterpart = std::make_unique<driver>(make_internal_backend(m_library, ptds));
    } else {
      settings s = m_config.requested;
      s.cuda_python_ptds = ptds;
      try {
        auto attempt = try_nvidia(s);
        if (attempt.made) {
          m_counterpart_plugin = std::move(attempt.plugin);
          m_counterpart = std::make_unique<driver>(std::move(attempt.made));
        } else {
          m_counterpart_reason = attempt.failure;
        }
      } catch (const std::exception &e) {
        m_counterpart_reason = e.what();
      }
    }
  }
  reason = m_counterpart_reason;
  return m_counterpart.get();
}

std::unique_ptr<session> session::open(const settings &s, const session_options &options) {
  std::unique_ptr<session> out(new session());
  effective_config &c = out->m_config;
  c.requested = s;
  c.warnings = s.warnings;

  // Our own handle on the driver: provenance (resolved path) and the simulated-driver marker.
  out->m_library = driver_library::open(s.driver_path);
  c.driver_path = out->m_library->resolved_path();
  // Through the fault shim too: the shim in front of the simulated driver is still simulated.
  c.simulated = out->m_library->symbol_behind_shim("cuparity_simulated_driver") != nullptr;

  std::unique_ptr<backend> chosen;
  if (!s.binding_map_path.empty()) {
    // A captured map decides everything a package decides: the variables that select a backend
    // are the package's, recorded in the map.
    captured_map map;
    try {
      map = read_captured_map(s.binding_map_path);
    } catch (const map_error &e) {
      throw config_error(std::string(var::binding_map) + ": " + e.what());
    }
    if (map.status != "ok") // nothing to bind: the capture recorded why the package did not load
      throw config_error(std::string(var::binding_map) + ": " + map.path +
                         (map.schema == 1 ? ": the package did not load (" : ": nothing bound (") +
                         map.status + "): " + map.error);
    chosen = make_map_backend(out->m_library, map);
  } else if (s.use_nvidia_binding) {
    auto attempt = try_nvidia(s);
    if (attempt.made) {
      chosen = std::move(attempt.made);
      out->m_plugin = std::move(attempt.plugin);
      if (s.numba_ptds)
        c.warnings.push_back(std::string(var::numba_ptds) +
                             "=1 has no effect with the nvidia binding, which handles the "
                             "per-thread default stream itself: set " +
                             var::cuda_python_ptds + "=1 instead");
    } else {
      c.fallback = true;
      c.fallback_reason = attempt.failure;
      c.warnings.push_back(std::string(var::use_nvidia_binding) +
                           "=1 asks for the nvidia binding, but it cannot be used: " +
                           attempt.failure + ". Falling back to the internal binding.");
    }
  }
  if (!chosen) {
    suffix_rules rules = suffix_rules::numba();
    if (options.disable_pins)
      rules.pinned.clear();
    chosen = make_internal_backend(out->m_library, s.numba_ptds, std::move(rules));
  }
  c.binding = std::string(chosen->name());
  c.per_thread_default_stream = chosen->per_thread_default_stream();
  out->m_driver = std::make_unique<driver>(std::move(chosen));
  return out;
}

} // namespace cuparity
