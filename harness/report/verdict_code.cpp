// The exit code of a comparison, shared by summary.json, the console and the process.
#include "harness/report/summary.hpp"

namespace cuparity {

int verdict_exit_code(const comparison &c, const run_facts &facts) {
  if (c.environment_problem)
    return 3;
  if (!c.coverage.complete())
    return 1; // incomplete: whatever was judged, the run did not judge all it planned
  if (!c.problems.empty() || !c.divergences.empty() || facts.latency_failed)
    return 1;
  return 0;
}

const char *verdict_name(const comparison &c, const run_facts &facts) {
  switch (verdict_exit_code(c, facts)) {
  case 0:
    return "equivalent";
  case 3:
    return "environment";
  default:
    return c.coverage.complete() ? "failed" : "incomplete";
  }
}

} // namespace cuparity
