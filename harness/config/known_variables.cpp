// The catalogue of variables a run is known to read: cuparity's configuration, the CUDA driver's
// documented variables, the fault shim's and the simulated driver's.
#include "harness/config/known_variables.hpp"

#include "harness/config/env_vars.hpp"

#include <algorithm>
#include <array>
#include <numeric>
#include <utility>
#include <vector>

namespace cuparity {
namespace {

using entry = std::pair<std::string_view, variable_reader>;

/// The CUDA driver reads these (CUDA C++ Programming Guide, "CUDA Environment Variables").
constexpr std::array<std::string_view, 28> driver_variables{
    "CUDA_VISIBLE_DEVICES",
    "CUDA_DEVICE_ORDER",
    "CUDA_MANAGED_FORCE_DEVICE_ALLOC",
    "CUDA_CACHE_DISABLE",
    "CUDA_CACHE_PATH",
    "CUDA_CACHE_MAXSIZE",
    "CUDA_FORCE_PTX_JIT",
    "CUDA_DISABLE_PTX_JIT",
    "CUDA_FORCE_JIT",
    "CUDA_DISABLE_JIT",
    "CUDA_LAUNCH_BLOCKING",
    "CUDA_DEVICE_MAX_CONNECTIONS",
    "CUDA_DEVICE_MAX_COPY_CONNECTIONS",
    "CUDA_AUTO_BOOST",
    "CUDA_SCALE_LAUNCH_QUEUES",
    "CUDA_GRAPHS_USE_NODE_PRIORITY",
    "CUDA_MODULE_LOADING",
    "CUDA_MODULE_DATA_LOADING",
    "CUDA_ENABLE_COREDUMP_ON_EXCEPTION",
    "CUDA_ENABLE_CPU_COREDUMP_ON_EXCEPTION",
    "CUDA_ENABLE_LIGHTWEIGHT_COREDUMP",
    "CUDA_ENABLE_USER_TRIGGERED_COREDUMP",
    "CUDA_COREDUMP_FILE",
    "CUDA_COREDUMP_PIPE",
    "CUDA_DEVICE_WAITS_ON_EXCEPTION",
    "CUDA_MPS_PIPE_DIRECTORY",
    "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE",
    "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT",
};

/// The fault shim (tools/fault_shim, docs/fault-shim.md) and the simulated driver
/// (tests/simdriver) read these.
constexpr std::array<std::string_view, 3> shim_variables{
    "CUPARITY_SHIM_FAULTS", "CUPARITY_SHIM_TARGET", "CUPARITY_SHIM_LOG"};
constexpr std::array<std::string_view, 8> simulated_variables{"CUPARITY_SIM_FAULTS",
                                                              "CUPARITY_SIM_DEVICES",
                                                              "CUPARITY_SIM_DRIVER_VERSION",
                                                              "CUPARITY_SIM_HIDE",
                                                              "CUPARITY_SIM_COMPUTE_CAPABILITY",
                                                              "CUPARITY_SIM_TOTAL_MEM",
                                                              "CUPARITY_SIM_TEST_IMAGES",
                                                              "CUPARITY_SIM_SHM_TAG"};

const std::vector<entry> &catalogue() {
  static const std::vector<entry> all = [] {
    std::vector<entry> out;
    for (const auto &v : binding_variables())
      out.emplace_back(v, variable_reader::configuration);
    for (auto v : driver_variables)
      out.emplace_back(v, variable_reader::cuda_driver);
    for (auto v : shim_variables)
      out.emplace_back(v, variable_reader::fault_shim);
    for (auto v : simulated_variables)
      out.emplace_back(v, variable_reader::simulated_driver);
    return out;
  }();
  return all;
}

/// Levenshtein distance, one row at a time; names are at most a few hundred bytes by the time
/// they get here (the matrix reader bounds them), so the quadratic cost is small.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = above;
    }
  }
  return row[b.size()];
}

} // namespace

std::optional<variable_reader> known_reader(std::string_view name) {
  for (const auto &[known, reader] : catalogue())
    if (known == name)
      return reader;
  return std::nullopt;
}

std::string_view reader_text(variable_reader r) {
  switch (r) {
  case variable_reader::configuration:
    return "cuparity's configuration";
  case variable_reader::cuda_driver:
    return "the CUDA driver";
  case variable_reader::fault_shim:
    return "the fault shim";
  case variable_reader::simulated_driver:
    return "the simulated driver";
  }
  return "?";
}

std::string closest_name(std::string_view name, const std::vector<std::string> &among) {
  std::string_view best;
  std::size_t best_distance = SIZE_MAX;
  for (const auto &candidate : among)
    if (const std::size_t d = edit_distance(name, candidate); d < best_distance)
      best = candidate, best_distance = d;
  return std::string(best);
}

std::string closest_known_variable(std::string_view name) {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto &[known, reader] : catalogue())
      out.emplace_back(known);
    return out;
  }();
  return closest_name(name, names);
}

std::string closest_known_variable_text(std::string_view name) {
  const std::string closest = closest_known_variable(name);
  // A misspelling differs in a few letters; naming CUDA_AUTO_BOOST for SIMPKG_PTDSS (12 edits in
  // 12 letters) would send the reader after a variable nobody meant.
  if (closest.empty() || 3 * edit_distance(name, closest) > name.size())
    return "No known variable is spelt like it";
  return "The known variable closest to it is " + closest;
}

} // namespace cuparity
