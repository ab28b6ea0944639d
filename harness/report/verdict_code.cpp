// The exit code of a comparison, shared by summary.json, the console and the process.
#include "harness/report/summary.hpp"

namespace cuparity {

int verdict_exit_code(const comparison &c, const run_facts &facts) {
  if (c.environment_problem)
    return 3;
  if (!c.problems.empty() || !c.divergences.empty() || facts.latency_failed)
    return 1;
  return 0;
}

} // namespace cuparity
