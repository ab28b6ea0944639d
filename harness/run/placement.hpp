// Placing a run's cells on its GPUs: each cell on one GPU, balanced by cost, and the workers each.
#pragma once

#include "harness/run/plan.hpp"

#include <cstddef>
#include <vector>

namespace cuparity {

/// One GPU's part of the functional phase: its own queue and the workers that empty it.
struct gpu_share {
  std::vector<std::size_t> cells; ///< indices into the work list, in the order they run
  int workers = 1;                ///< worker threads pinned to this GPU
};

/// `jobs` workers over `gpus` GPUs, as evenly as possible (the first GPUs take the remainder),
/// at least one each: a GPU without a worker would never run the cells placed on it.
[[nodiscard]] std::vector<int> split_workers(int jobs, std::size_t gpus);

/// For each GPU (one per entry of `workers`), the indices of the cells it runs, costliest first.
/// Longest processing time first: cells by falling cost (equal costs in index order), each on the
/// GPU where it would finish first, load / workers, ties to the lowest GPU; so the same costs
/// always give the same placement.
[[nodiscard]] std::vector<std::vector<std::size_t>> place_by_cost(const std::vector<double> &costs,
                                                                  const std::vector<int> &workers);

/// The shares of `gpus` GPUs (one share when there are none): with one, every cell in the order
/// given and max(1, jobs) workers, as a single shared queue always ran them.
[[nodiscard]] std::vector<gpu_share> place_cells(const std::vector<double> &costs, std::size_t gpus,
                                                 int jobs);

/// place_cells for a plan's cells, each costing its work_cost.
[[nodiscard]] std::vector<gpu_share> place_work(const std::vector<work_cell> &work,
                                                std::size_t gpus, int jobs);

} // namespace cuparity
