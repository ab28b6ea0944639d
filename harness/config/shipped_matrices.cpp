// The shipped matrices: where an executable finds them, and a matrix named without a path.
#include "harness/config/shipped_matrices.hpp"

#include <algorithm>
#include <filesystem>

namespace cuparity {
namespace fs = std::filesystem;

#ifndef CUPARITY_MATRICES_FROM_BINDIR
#define CUPARITY_MATRICES_FROM_BINDIR "../share/cuparity/matrices"
#endif

std::string shipped_matrices_dir(const std::string &exe_dir) {
  std::error_code ec;
  const fs::path dir = (fs::path(exe_dir) / CUPARITY_MATRICES_FROM_BINDIR).lexically_normal();
  return fs::is_directory(dir, ec) ? dir.string() : std::string();
}

std::string resolve_matrix_argument(const std::string &arg, const std::string &exe_dir) {
  std::error_code ec;
  if (arg.empty() || arg.find('/') != std::string::npos || fs::exists(arg, ec))
    return arg;
  const std::string dir = shipped_matrices_dir(exe_dir);
  if (dir.empty() || arg == "." || arg == "..")
    return arg;
  for (const std::string &name : {arg, arg + ".toml"}) {
    const fs::path candidate = fs::path(dir) / name;
    if (candidate.extension() == ".toml" && fs::is_regular_file(candidate, ec))
      return candidate.string();
  }
  return arg;
}

std::vector<shipped_matrix> shipped_matrices(const std::string &exe_dir) {
  std::vector<shipped_matrix> out;
  const std::string dir = shipped_matrices_dir(exe_dir);
  std::error_code ec;
  if (dir.empty())
    return out;
  for (const auto &entry : fs::directory_iterator(dir, ec))
    if (entry.path().extension() == ".toml" && entry.is_regular_file(ec))
      out.push_back({entry.path().stem().string(), entry.path().string()});
  std::sort(out.begin(), out.end(),
            [](const shipped_matrix &a, const shipped_matrix &b) { return a.name < b.name; });
  return out;
}

} // namespace cuparity
