// Loading a CUDA toolkit library at run time (NVRTC, nvJitLink), and the error their calls throw.
#pragma once

#include <stdexcept>
#include <string>

namespace cuparity {

/// A compile or link failure; what() ends with the program or linker log.
class toolchain_error : public std::runtime_error {
public:
  toolchain_error(const std::string &what, std::string log)
      : std::runtime_error(log.empty() ? what : what + "\n" + log), m_log(std::move(log)) {}
  [[nodiscard]] const std::string &log() const noexcept { return m_log; }

private:
  std::string m_log;
};

/// dlopen of `soname` from the loader path, then $CUDA_HOME/lib64, then /usr/local/cuda/lib64.
/// Sets `opened` to the candidate that opened; throws std::runtime_error naming every one tried.
/// The handle stays open for the process (the libraries are process-wide singletons).
[[nodiscard]] void *open_toolkit_library(const std::string &soname, std::string &opened);

/// dlsym of `name`; throws std::runtime_error naming it when the library lacks it.
[[nodiscard]] void *toolkit_symbol(void *library, const char *name);

template <class T> [[nodiscard]] T toolkit_function(void *library, const char *name) {
  return reinterpret_cast<T>(toolkit_symbol(library, name));
}

} // namespace cuparity
