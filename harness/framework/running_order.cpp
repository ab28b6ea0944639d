// Running order of a cell's cases: exclusive ones last, under one hold of the GPU lock.
#include "harness/framework/running_order.hpp"

#include <algorithm>

namespace cuparity {

std::vector<scheduled_case> running_order(std::vector<const case_def *> selected) {
  std::stable_partition(selected.begin(), selected.end(),
                        [](const case_def *c) { return !c->exclusive; });
  std::vector<scheduled_case> order;
  order.reserve(selected.size());
  for (std::size_t i = 0; i < selected.size(); ++i) {
    const bool next_exclusive = i + 1 < selected.size() && selected[i + 1]->exclusive;
    order.push_back({selected[i], selected[i]->exclusive && next_exclusive});
  }
  return order;
}

} // namespace cuparity
