"""drvcalls' pyperf script: the same driver calls as test_driver_calls.py, timed by pyperf."""

import pyperf

import drvcalls

if __name__ == "__main__":
    runner = pyperf.Runner(metadata={"cuparity_binding": drvcalls.CUPARITY_BINDING})
    drvcalls.setup()
    runner.bench_func("ctx_get_current", drvcalls.ctx_get_current)
    runner.bench_func("alloc_free_4k", drvcalls.alloc_free_4k)
