"""cuda.core, a stream: an allocation ordered on a new stream, a fill from the host and a sync
(matrices/programs.toml). Exits 77 when cuda.core is not installed, 1 when a step fails.
"""

import sys

try:
    try:
        from cuda.core import Device
    except ImportError:  # cuda.core before 0.5 kept its API under .experimental
        from cuda.core.experimental import Device
except ImportError as e:
    print(f"cuda.core is not installed: {e}")
    sys.exit(77)

device = Device(0)
device.set_current()
stream = device.create_stream()
buffer = device.allocate(1 << 20, stream=stream)
stream.sync()
buffer.close(stream)
stream.sync()
stream.close()
print(f"cuda.core on {device.name}: a stream, an allocation of 1 MiB on it, synced")
