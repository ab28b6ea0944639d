// NVRTC and nvJitLink, loaded at run time (dlopen), with errors that carry the program log.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

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

/// libnvJitLink.so.13, for LTO-IR linking.
class nvjitlink {
public:
  static nvjitlink &instance();
  struct input {
    enum kind { ptx, cubin, ltoir, fatbin } type;
    std::vector<char> data;
    std::string name;
  };
  /// Links to a cubin; throws toolchain_error with the linker's error log on failure.
  [[nodiscard]] std::vector<char> link(const std::vector<input> &inputs,
                                       const std::vector<std::string> &options) const;
  [[nodiscard]] const std::string &path() const noexcept { return m_path; }
  struct table;

private:
  nvjitlink();
  std::shared_ptr<table> m_fn;
  std::string m_path;
};

} // namespace cuparity
