"""Driver calls through Numba's `numba.cuda` (for a GPU: matrices/benchmarks-example.toml).

Each test times what a Numba user pays per call, through whichever binding the cell's
NUMBA_CUDA_USE_NVIDIA_BINDING makes Numba use. The binding Numba really used (it may fall back to
ctypes, with a warning) is written into every benchmark's extra_info and to the log, so that a
fallback is never read as the other binding.
"""

import sys

import numpy as np
import pytest

cuda = pytest.importorskip("numba.cuda")


def _binding_used() -> str:
    from numba.cuda.cudadrv import driver

    value = getattr(driver, "USE_NV_BINDING", None)
    return "unknown" if value is None else ("nvidia" if value else "ctypes")


@pytest.fixture(scope="module", autouse=True)
def context():
    cuda.current_context()
    print(f"numba.cuda binding used: {_binding_used()}", file=sys.stderr)


@pytest.fixture(autouse=True)
def binding(benchmark):
    used = _binding_used()
    benchmark.extra_info["numba_binding"] = used
    if used != "unknown":  # cuparity leaves out figures of another binding than the cell's
        benchmark.extra_info["cuparity_binding"] = "nvidia" if used == "nvidia" else "internal"


@cuda.jit
def _empty():
    pass


def test_current_context(benchmark):
    benchmark(cuda.current_context)


def test_memory_info(benchmark):
    benchmark(cuda.current_context().get_memory_info)


def test_launch_empty(benchmark):
    kernel = _empty[1, 1]
    kernel()  # compiled and loaded before timing
    cuda.synchronize()
    benchmark(kernel)
    cuda.synchronize()


def test_stream_synchronize(benchmark):
    stream = cuda.stream()
    benchmark(stream.synchronize)


def test_copy_to_device_4b(benchmark):
    host = np.zeros(1, dtype=np.int32)
    device = cuda.device_array_like(host)
    benchmark(device.copy_to_device, host)
