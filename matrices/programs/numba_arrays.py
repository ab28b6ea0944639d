"""numba-cuda, device arrays, a copy and a stream; no kernel (matrices/programs.toml).

No @cuda.jit kernel: numba-cuda 0.30.4's kernel compilation fails with NumPy 2.x on the GPU image
(it calls numpy's removed `row_stack`), which would make every cell fail for a reason that is not
the binding. Exits 77 when numba-cuda is not installed, 1 when the copy does not read back.
"""

import sys

try:
    import numpy as np
    from numba import cuda
except ImportError as e:
    print(f"numba-cuda is not installed: {e}")
    sys.exit(77)

host = np.arange(1 << 18, dtype=np.int64)
stream = cuda.stream()
device = cuda.to_device(host, stream=stream)
other = cuda.device_array_like(device, stream=stream)
other.copy_to_device(device, stream=stream)
back = other.copy_to_host(stream=stream)
stream.synchronize()
ok = bool((back == host).all())
print(f"numba-cuda: {host.nbytes} bytes there and back on a stream: {'same' if ok else 'DIFFERENT'}")
sys.exit(0 if ok else 1)
