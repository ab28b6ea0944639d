"""cuda.bindings: cuInit, a context (the primary one, current), an allocation, a fill and a copy
back (matrices/programs.toml, matrices/cuda-bindings-versions.toml). Exits 77 when cuda.bindings
is not installed, 1 when a call fails (naming it and its CUresult).
"""

import sys

try:
    from cuda.bindings import driver
except ImportError as e:
    print(f"cuda.bindings is not installed: {e}")
    sys.exit(77)


def check(name, result):
    err, *rest = result
    if err != driver.CUresult.CUDA_SUCCESS:
        print(f"{name} returned {err!r}")
        sys.exit(1)
    return rest[0] if len(rest) == 1 else rest


check("cuInit", driver.cuInit(0))
device = check("cuDeviceGet", driver.cuDeviceGet(0))
context = check("cuDevicePrimaryCtxRetain", driver.cuDevicePrimaryCtxRetain(device))
check("cuCtxSetCurrent", driver.cuCtxSetCurrent(context))
size = 1 << 20
pointer = check("cuMemAlloc", driver.cuMemAlloc(size))
check("cuMemsetD8", driver.cuMemsetD8(pointer, 0x5A, size))
host = bytearray(size)
check("cuMemcpyDtoH", driver.cuMemcpyDtoH(host, pointer, size))
check("cuMemFree", driver.cuMemFree(pointer))
check("cuDevicePrimaryCtxRelease", driver.cuDevicePrimaryCtxRelease(device))
ok = host == bytes([0x5A]) * size
print(f"cuda.bindings: cuInit, primary context, 1 MiB allocated, filled and read back: "
      f"{'same' if ok else 'DIFFERENT'}")
sys.exit(0 if ok else 1)
