// NVML opened at run time (dlopen of libnvidia-ml.so.1) and initialised; nothing links it.
#pragma once

namespace cuparity {

/// One use of NVML: opened and initialised (nvmlInit_v2) on construction, shut down and closed on
/// destruction. A host without NVML, or one whose NVML refuses to start, gives a session that is
/// not ok(); nothing throws.
class nvml_session {
public:
  nvml_session() noexcept;
  ~nvml_session();
  nvml_session(const nvml_session &) = delete;
  nvml_session &operator=(const nvml_session &) = delete;

  /// Whether NVML opened and nvmlInit_v2 succeeded.
  [[nodiscard]] bool ok() const noexcept { return m_initialised; }
  /// dlsym in NVML; null when it is not ok() or lacks the function.
  [[nodiscard]] void *symbol(const char *name) const noexcept;

private:
  void *m_handle = nullptr;
  bool m_initialised = false;
};

} // namespace cuparity
