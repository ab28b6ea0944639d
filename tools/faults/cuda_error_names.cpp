// The enumerator-name table behind cuda_error_code, from harness/driver/cuda_errors.inl.
#include "tools/faults/cuda_error_names.hpp"

#include <cuda.h>

namespace cuparity::faults {

namespace {
struct named_code {
  std::string_view name;
  CUresult code;
};
constexpr named_code table[] = {
#define CUPARITY_CUDA_ERROR(enumerator, description) {#enumerator, enumerator},
#include "harness/driver/cuda_errors.inl"
#undef CUPARITY_CUDA_ERROR
};
} // namespace

std::optional<std::int64_t> cuda_error_code(std::string_view name) {
  for (const named_code &e : table)
    if (e.name == name)
      return static_cast<std::int64_t>(e.code);
  return std::nullopt;
}

} // namespace cuparity::faults
