"""A [[benchmark]] that cannot run (tests/external/benchmarks.toml): how depends on the cell.

NUMBA_CUDA_USE_NVIDIA_BINDING=1: it writes pytest-benchmark JSON whose only benchmark has no
median (malformed); otherwise it imports a package that is not installed and exits 1 with no JSON.
"""

import os
import sys

if os.environ.get("NUMBA_CUDA_USE_NVIDIA_BINDING") == "1":
    with open(sys.argv[1], "w", encoding="utf-8") as out:
        out.write('{"benchmarks": [{"fullname": "t.py::test_x", "stats": {"rounds": 1}}]}')
else:
    import cuparity_no_such_package  # noqa: F401
