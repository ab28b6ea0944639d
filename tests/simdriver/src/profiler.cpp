// cuProfilerStart / cuProfilerStop: there is no profiler to drive, so they only validate state.
#include "api.hpp"

using namespace cuparity::sim;

CUPARITY_SIM_API(cuProfilerStart, (void), (), (void)0) {
  if (CUresult r = check_init())
    return r;
  context *c = nullptr;
  return current_context(c);
}

CUPARITY_SIM_API(cuProfilerStop, (void), (), (void)0) {
  if (CUresult r = check_init())
    return r;
  context *c = nullptr;
  return current_context(c);
}
