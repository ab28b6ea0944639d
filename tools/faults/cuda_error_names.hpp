// CUresult values by enumerator name (CUDA_ERROR_OUT_OF_MEMORY -> 2), for fault specs.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace cuparity::faults {

/// The value of a CUresult enumerator of cuda.h (harness/driver/cuda_errors.inl); nullopt for
/// any other text.
[[nodiscard]] std::optional<std::int64_t> cuda_error_code(std::string_view name);

} // namespace cuparity::faults
