// The environment variables the seed defines, and Numba-style parsing of their values.
#pragma once

#include "harness/config/python_int.hpp"

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cuparity {

namespace var {
inline constexpr const char *use_nvidia_binding = "NUMBA_CUDA_USE_NVIDIA_BINDING";
inline constexpr const char *numba_ptds = "NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM";
inline constexpr const char *cuda_python_ptds = "CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM";
inline constexpr const char *driver = "NUMBA_CUDA_DRIVER";
inline constexpr const char *include_path = "NUMBA_CUDA_INCLUDE_PATH";
inline constexpr const char *nvidia_backend = "CUPARITY_NVIDIA_BACKEND";
/// A captured binding map (tools/capture): the cell binds exactly what that package bound.
inline constexpr const char *binding_map = "CUPARITY_BINDING_MAP";
} // namespace var

/// Every variable that selects or tunes a binding. The runner removes from a cell's inherited
/// environment those the matrix controls (so `--driver` can still set NUMBA_CUDA_DRIVER for
/// matrices without a driver axis), then applies the cell's values.
[[nodiscard]] const std::vector<std::string> &binding_variables();

/// Reads one variable; std::nullopt when unset. Injected so tests need not touch the process.
using env_lookup = std::function<std::optional<std::string>(const std::string &name)>;
[[nodiscard]] env_lookup process_environment();

/// Numba's _readenv(name, int, default): unset gives the default; a value that is not an integer
/// (parse_python_int) adds a warning naming the variable and the value, and gives the default.
[[nodiscard]] long long read_int_variable(const env_lookup &env, const std::string &name,
                                          long long fallback, std::vector<std::string> &warnings);

} // namespace cuparity
