// Placing a run's cells on its GPUs: longest processing time first, one queue per GPU.
#include "harness/run/placement.hpp"

#include <algorithm>
#include <numeric>

namespace cuparity {

std::vector<int> split_workers(int jobs, std::size_t gpus) {
  const std::size_t n = std::max<std::size_t>(gpus, 1);
  const std::size_t total = static_cast<std::size_t>(std::max(jobs, 1));
  std::vector<int> workers(n);
  for (std::size_t g = 0; g < n; ++g)
    workers[g] = static_cast<int>(std::max<std::size_t>(total / n + (g < total % n ? 1 : 0), 1));
  return workers;
}

std::vector<std::vector<std::size_t>> place_by_cost(const std::vector<double> &costs,
                                                    const std::vector<int> &workers) {
  std::vector<std::size_t> order(costs.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  // Stable: equal costs keep their order, so a placement never depends on the sort's whims.
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return costs[a] > costs[b]; });
  std::vector<std::vector<std::size_t>> placed(workers.size());
  std::vector<double> load(workers.size(), 0.0);
  for (const std::size_t i : order) {
    // Where the cell would end first, if a GPU's workers share its queue evenly: with -j not a
    // multiple of the GPUs, a GPU with one worker fewer gets proportionally less to do.
    std::size_t best = 0;
    for (std::size_t g = 1; g < workers.size(); ++g)
      if ((load[g] + costs[i]) / workers[g] < (load[best] + costs[i]) / workers[best])
        best = g;
    placed[best].push_back(i);
    load[best] += costs[i];
  }
  return placed;
}

std::vector<gpu_share> place_cells(const std::vector<double> &costs, std::size_t gpus, int jobs) {
  const std::vector<int> workers = split_workers(jobs, gpus);
  if (workers.size() == 1) {
    // One GPU, or none: the cells keep the caller's order (order_by_cost), as before placement.
    std::vector<std::size_t> all(costs.size());
    std::iota(all.begin(), all.end(), std::size_t{0});
    return {gpu_share{std::move(all), workers.front()}};
  }
  std::vector<gpu_share> shares;
  auto placed = place_by_cost(costs, workers);
  for (std::size_t g = 0; g < workers.size(); ++g)
    shares.push_back({std::move(placed[g]), workers[g]});
  return shares;
}

std::vector<gpu_share> place_work(const std::vector<work_cell> &work, std::size_t gpus, int jobs) {
  std::vector<double> costs;
  costs.reserve(work.size());
  for (const auto &w : work)
    costs.push_back(work_cost(w));
  return place_cells(costs, gpus, jobs);
}

} // namespace cuparity
