// The CTest suite: a matrix's cells as CTest tests scheduled over GPUs by resource groups.
#pragma once

#include <string>
#include <vector>

namespace cuparity {

/// The device CTest allocated to this test (CTEST_RESOURCE_GROUP_<i> = "gpus" and
/// CTEST_RESOURCE_GROUP_<i>_GPUS = "id:<id>,slots:<n>"), for CUDA_VISIBLE_DEVICES; throws
/// std::runtime_error naming the variable when they are missing or malformed.
[[nodiscard]] std::string gpu_from_ctest_environment();

/// Writes a CTestTestfile.cmake into `dir` with one test per cell of the matrix (RESOURCE_GROUPS
/// gpus:1, so `ctest -j --resource-spec-file` schedules cells over the devices) and a final test
/// that merges them; and a resource spec for `gpu_count` devices. Returns an exit code.
[[nodiscard]] int write_ctest_suite(const std::string &matrix_path, const std::string &dir,
                                    int gpu_count, const std::vector<std::string> &extra_args);

} // namespace cuparity
