// The running executable's path, read from /proc/self/exe.
#include "harness/platform/self_exe.hpp"

#include <filesystem>

namespace cuparity {

std::string self_executable() {
  return std::filesystem::read_symlink("/proc/self/exe").string();
}

} // namespace cuparity
