"""CuPy, one kernel: an elementwise product (compiled by NVRTC) and a sum, checked on the host
(matrices/programs.toml). Exits 77 when CuPy is not installed, 1 when the result is wrong.
"""

import sys

try:
    import cupy as cp
except ImportError as e:
    print(f"cupy is not installed: {e}")
    sys.exit(77)

x = cp.arange(1 << 20, dtype=cp.int64)
total = int((x * 2).sum())
cp.cuda.Stream.null.synchronize()
expected = (1 << 20) * ((1 << 20) - 1)
print(f"cupy {cp.__version__}: sum {total}, expected {expected}")
sys.exit(0 if total == expected else 1)
