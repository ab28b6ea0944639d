// nvJitLink, loaded at run time (dlopen): links PTX, cubin, LTO-IR and fatbin inputs to a cubin.
#pragma once

#include "harness/toolchain/toolkit_library.hpp"

#include <memory>
#include <string>
#include <vector>

namespace cuparity {

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
