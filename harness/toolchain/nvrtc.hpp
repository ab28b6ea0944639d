// NVRTC, loaded at run time (dlopen): compiles CUDA C++ to PTX, cubin or LTO-IR with its log.
#pragma once

#include "harness/toolchain/toolkit_library.hpp"

#include <memory>
#include <string>
#include <vector>

namespace cuparity {

struct compile_output {
  std::string log;
  std::vector<char> ptx;   ///< NUL-terminated PTX text, when produced
  std::vector<char> cubin; ///< when compiled for sm_XY
  std::vector<char> ltoir; ///< when compiled with -dlto
};

/// libnvrtc.so.13 (the loader path first, then $CUDA_HOME/lib64 and /usr/local/cuda/lib64).
class nvrtc {
public:
  /// The process-wide instance; throws std::runtime_error naming every path tried.
  static nvrtc &instance();
  /// Compiles `source` (named `name` in diagnostics) with `options`. Throws toolchain_error with
  /// the log on a compilation error.
  [[nodiscard]] compile_output compile(const std::string &source, const std::string &name,
                                       const std::vector<std::string> &options) const;
  [[nodiscard]] std::pair<int, int> version() const;
  [[nodiscard]] const std::string &path() const noexcept { return m_path; }
  struct table;

private:
  nvrtc();
  std::shared_ptr<table> m_fn;
  std::string m_path;
};

} // namespace cuparity
