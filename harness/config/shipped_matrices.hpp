// The shipped matrices: where an executable finds them, and a matrix named without a path.
#pragma once

#include <string>
#include <vector>

namespace cuparity {

/// The folder of the shipped matrices for an executable in `exe_dir`: `../share/cuparity/matrices`
/// from it (an installed tree, a Python wheel, and the build tree, which links the source's
/// matrices/ there). Empty when there is none.
[[nodiscard]] std::string shipped_matrices_dir(const std::string &exe_dir);

/// A matrix argument as a file to read: the argument itself when it names a file or holds a '/';
/// otherwise the shipped matrix of that name ("smoke" or "smoke.toml") when there is one; else the
/// argument unchanged, so that the reader's error names what was given.
[[nodiscard]] std::string resolve_matrix_argument(const std::string &arg,
                                                  const std::string &exe_dir);

/// The shipped matrices, by name (the file's stem), sorted; empty when there is no such folder.
struct shipped_matrix {
  std::string name;
  std::string path;
};
[[nodiscard]] std::vector<shipped_matrix> shipped_matrices(const std::string &exe_dir);

} // namespace cuparity
