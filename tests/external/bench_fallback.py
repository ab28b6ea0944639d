"""A [[benchmark]] that says it bound ctypes in every cell (tests/external/benchmarks.toml), as a
Numba that fell back from the NVIDIA binding would: its figures stand in the internal cell and are
left out, named, in the NVIDIA one."""

import json
import sys

with open(sys.argv[1], "w", encoding="utf-8") as out:
    json.dump({"benchmarks": [{"fullname": "t.py::test_launch",
                               "stats": {"median": 2.5e-6},
                               "extra_info": {"cuparity_binding": "internal"}}]}, out)
