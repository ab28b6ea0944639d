// Settings read from the environment, and the effective configuration a process decided on.
#pragma once

#include "harness/config/env_vars.hpp"

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace cuparity {

/// Bad input in a variable or flag (exit code 2): names the variable and its value.
class config_error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// What the environment asks for, before anything is loaded.
struct settings {
  bool use_nvidia_binding = false; ///< NUMBA_CUDA_USE_NVIDIA_BINDING (read once, at start)
  bool numba_ptds = false;         ///< NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM
  bool cuda_python_ptds = false;   ///< CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM
  std::string driver_path;         ///< absolute NUMBA_CUDA_DRIVER, "" = system search
  std::string include_path = "/usr/local/cuda/include"; ///< NUMBA_CUDA_INCLUDE_PATH
  std::string nvidia_backend_path; ///< CUPARITY_NVIDIA_BACKEND or companion_library
  std::string binding_map_path;    ///< CUPARITY_BINDING_MAP: bind through a captured map ("": no)
  std::map<std::string, std::string> variables; ///< the binding variables as set (unset absent)
  std::vector<std::string> warnings;            ///< parse warnings, in reading order
};

/// Reads the binding variables. `exe_dir` locates the default nvidia backend library.
/// Throws config_error when NUMBA_CUDA_DRIVER is set but names no file, or is "0" (Numba's way
/// of forcing "driver not found").
[[nodiscard]] settings read_settings(const env_lookup &env, const std::string &exe_dir);

/// What the process actually decided (the effective-behaviour table: docs/configuration.md).
struct effective_config {
  settings requested;
  std::string binding;                    ///< "internal", "nvidia" or "map": the backend in use
  bool fallback = false;                  ///< nvidia was asked for but could not be used
  std::string fallback_reason;            ///< why, naming the path or symbol concerned
  bool per_thread_default_stream = false; ///< what stream 0 means for the bound symbols
  std::vector<std::string> warnings;      ///< parse, misuse and fallback warnings
  std::string driver_path;                ///< the library opened (resolved file)
  bool simulated = false;                 ///< the driver is cuparity's simulated driver
};

/// Directory of the running executable (for files installed next to it).
[[nodiscard]] std::string executable_dir();

/// A library cuparity ships: beside the executable (build tree), else in the installed layout's
/// lib/cuparity next to bin/, else in a folder named by add_companion_folder (in that order). The
/// first when none has it.
[[nodiscard]] std::string companion_library(const std::string &exe_dir, const std::string &file);

/// One more folder companion_library looks in, after the two beside the executable. A user's
/// executable linking cuparity::main lives in the user's build folder, far from the installed
/// prefix: the CMake package compiles a registration of the prefix's lib/cuparity into it
/// (cmake/cuparity_installed_libraries.cpp.in), so it finds the installed plugins on its own.
void add_companion_folder(std::string folder);

/// Registration from a static initialiser (before main), as the CMake package's source does.
struct companion_folder_registrar {
  explicit companion_folder_registrar(const char *folder) { add_companion_folder(folder); }
};

} // namespace cuparity
