"""cuda.core's API shape, as far as cuparity's Python probe calls it, over the tests' cuda.bindings
stand-in (so through cuGetProcAddress's pointers, as the real cuda.core calls through
cuda.bindings). Device(0).set_current() retains and sets device 0's primary context. Where the
simulated driver lacks what the real one calls, this calls its nearest neighbour, named below.
Written for cuparity; no copy of NVIDIA's."""

import os
from dataclasses import dataclass

from cuda.bindings import driver

CU_STREAM_NON_BLOCKING = 1
CU_EVENT_DISABLE_TIMING = 2


class CUDAError(Exception):
    pass


def _check(result):
    err, *values = result
    if err != driver.CUresult.CUDA_SUCCESS:
        raise CUDAError(f"CUDA error {int(err)}")
    return values[0] if len(values) == 1 else values


class Device:
    """Device(None) is the thread's current device (cuCtxGetDevice), as cuda.core's."""

    _devices = None

    def __new__(cls, device_id=None):
        if Device._devices is None:
            _check(driver.cuInit(0))
            count = _check(driver.cuDeviceGetCount())
            Device._devices = [object.__new__(cls) for _ in range(count)]
            for i, d in enumerate(Device._devices):
                d.device_id, d._context = i, None
        if device_id is None:
            device_id = int(_check(driver.cuCtxGetDevice()))
        return Device._devices[device_id]

    def set_current(self):
        self._context = _check(driver.cuDevicePrimaryCtxRetain(_check(driver.cuDeviceGet(
            self.device_id))))
        _check(driver.cuCtxSetCurrent(self._context))

    def create_stream(self):
        return Stream(_check(driver.cuStreamCreate(CU_STREAM_NON_BLOCKING)))

    def create_event(self):
        return Event(_check(driver.cuEventCreate(CU_EVENT_DISABLE_TIMING)))

    def allocate(self, size, stream=None):
        # The device's memory pool, stream-ordered: the real resource calls
        # cuMemAllocFromPoolAsync on the default pool; the simulator has cuMemAllocAsync.
        return Buffer(_check(driver.cuMemAllocAsync(size, stream.handle)), size)


class Stream:
    def __init__(self, handle):
        self.handle = handle

    def sync(self):
        _check(driver.cuStreamSynchronize(self.handle))

    def record(self, event=None):
        if event is None:
            event = Event(_check(driver.cuEventCreate(CU_EVENT_DISABLE_TIMING)))
        _check(driver.cuEventRecord(event.handle, self.handle))
        return event


class Event:
    def __init__(self, handle):
        self.handle = handle

    @property
    def is_done(self):
        (err,) = driver.cuEventQuery(self.handle)
        if err == driver.CUresult.CUDA_ERROR_NOT_READY:
            return False
        _check((err,))
        return True


class Buffer:
    def __init__(self, ptr, size):
        self.handle, self.size = ptr, size

    def close(self, stream=None):
        _check(driver.cuMemFreeAsync(self.handle, stream.handle))


class Kernel:
    def __init__(self, function):
        self.handle = function


class ObjectCode:
    """Loaded with cuModuleLoadData (the real one loads with cuLibraryLoadData)."""

    def __init__(self, image):
        self._image, self._module = image, None

    @staticmethod
    def from_ptx(module):
        return ObjectCode(module if isinstance(module, bytes) else module.encode())

    def get_kernel(self, name):
        if self._module is None:
            self._module = _check(driver.cuModuleLoadData(self._image + b"\0"))
        return Kernel(_check(driver.cuModuleGetFunction(self._module, name.encode())))


@dataclass
class LaunchConfig:
    grid: int = 1
    block: int = 1
    shmem_size: int = 0


def launch(stream, config, kernel, *kernel_args):
    """cuLaunchKernel (the real launch calls cuLaunchKernelEx, which the simulator lacks)."""
    if os.environ.get("PYPROBE_FAKE_CORE_LAUNCH") == "0.1":
        # cuda.core 0.1's order, launch(kernel, config, *kernel_args): a release whose API
        # differs from what the probe calls.
        if not isinstance(stream, Kernel):
            raise TypeError(f"launch: expected a Kernel as the first argument, got "
                            f"{type(stream).__name__}")
    if kernel_args:
        raise CUDAError("the stand-in launches kernels without arguments only")
    _check(driver.cuLaunchKernel(kernel.handle, config.grid, 1, 1, config.block, 1, 1,
                                 config.shmem_size, stream.handle, 0, 0))
