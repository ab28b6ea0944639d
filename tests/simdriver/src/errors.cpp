// cuGetErrorName / cuGetErrorString: names and descriptions of every CUresult in cuda.h.
#include "api.hpp"

namespace cuparity::sim {

namespace {
struct error_entry {
  CUresult code;
  const char *name;
  const char *description;
};
constexpr error_entry error_table[] = {
#define CUPARITY_CUDA_ERROR(enumerator, description) {enumerator, #enumerator, description},
#include "harness/driver/cuda_errors.inl"
#undef CUPARITY_CUDA_ERROR
};

const error_entry *find_error(CUresult code) {
  for (const auto &e : error_table)
    if (e.code == code)
      return &e;
  return nullptr;
}
} // namespace

const char *error_name(CUresult code) {
  const error_entry *e = find_error(code);
  return e ? e->name : nullptr;
}

const char *error_string(CUresult code) {
  const error_entry *e = find_error(code);
  return e ? e->description : nullptr;
}

} // namespace cuparity::sim

using namespace cuparity::sim;

// Like the real driver: an unknown value gives CUDA_ERROR_INVALID_VALUE and *pStr = NULL.
CUPARITY_SIM_API(cuGetErrorName, (CUresult error, const char **pStr), (error, pStr), (void)0) {
  if (pStr == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  *pStr = error_name(error);
  return *pStr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUPARITY_SIM_API(cuGetErrorString, (CUresult error, const char **pStr), (error, pStr), (void)0) {
  if (pStr == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  *pStr = error_string(error);
  return *pStr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
