// Opens the driver library under test (NUMBA_CUDA_DRIVER or the system libcuda) with dlopen.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace cuparity {

/// The driver could not be opened: names every path tried and dlerror's words.
class driver_load_error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// The library names tried, in order, when no explicit path is configured
/// (docs/configuration.md#the-driver-library).
[[nodiscard]] std::vector<std::string> default_driver_candidates();

/// A dlopen'ed driver library; closed (dlclose) on destruction.
class driver_library {
public:
  /// Opens `path`, or the default candidates when `path` is empty. Throws driver_load_error.
  static std::shared_ptr<driver_library> open(const std::string &path);
  ~driver_library();
  driver_library(const driver_library &) = delete;
  driver_library &operator=(const driver_library &) = delete;

  /// dlsym in this library; nullptr when not exported.
  [[nodiscard]] void *symbol(const char *name) const noexcept;
  /// dlsym in this library or, when it is cuparity's fault shim (tools/fault_shim), in the driver
  /// the shim forwards to: how the simulated driver's marker is found with the shim in front.
  [[nodiscard]] void *symbol_behind_shim(const char *name) const noexcept;
  /// The name that was opened (the explicit path, or the candidate that worked).
  [[nodiscard]] const std::string &path() const noexcept { return m_path; }
  /// The file the loader actually mapped (from dlinfo), for provenance.
  [[nodiscard]] const std::string &resolved_path() const noexcept { return m_resolved; }

private:
  driver_library(void *handle, std::string path);
  void *m_handle;
  std::string m_path;
  std::string m_resolved;
};

/// The exported symbol name dladdr reports for an address ("" when none).
[[nodiscard]] std::string symbol_at(const void *address);

/// The file of the loaded object an address lies in, as dladdr reports it ("" when none): what
/// tells two functions of the same name apart (a shim's and the driver's).
[[nodiscard]] std::string library_at(const void *address);

} // namespace cuparity
