// The order in which a cell runs its selected cases, and when it keeps the GPU lock between them.
#pragma once

#include "harness/framework/case_registry.hpp"

#include <vector>

namespace cuparity {

/// One case of a cell's run, in running order.
struct scheduled_case {
  const case_def *def = nullptr;
  /// Keep the GPU lock after this case: it and the next are exclusive, so a cell's exclusive cases
  /// run under one exclusive hold and drain the other cells once, not once per case.
  bool keep_lock = false;
};

/// `selected` in running order: registry order, exclusive cases last (together). Cells reach
/// their exclusive cases at different times, so each drains the others once near its end instead
/// of several times in the middle of the run.
[[nodiscard]] std::vector<scheduled_case> running_order(std::vector<const case_def *> selected);

} // namespace cuparity
