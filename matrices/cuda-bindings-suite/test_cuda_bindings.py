"""A small cuda.bindings suite for matrices/cuda-bindings-suite.toml: driver calls on stream 0.

cuda.bindings ships no tests in its wheel, so this is the test command the matrix runs in each
cell: device discovery, a context, and memory work on the default stream, the calls whose bound
symbols CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM switches (cuMemcpyHtoDAsync_v2 ->
cuMemcpyHtoDAsync_v2_ptsz, cuStreamSynchronize -> cuStreamSynchronize_ptsz, ...). Every test must
pass in every stream-0 mode: the captured maps say which functions each cell bound, and the judge
compares the outcomes. Without cuda.bindings installed every test is skipped, saying so.
"""

import ctypes

import pytest

driver = pytest.importorskip("cuda.bindings.driver",
                             reason="cuda.bindings is not installed: nothing to test")

SIZE = 1 << 16


def check(result):
    """The values of a cuda.bindings call after its CUresult, which must be CUDA_SUCCESS."""
    err, *values = result
    assert err == driver.CUresult.CUDA_SUCCESS, err
    return values[0] if len(values) == 1 else tuple(values)


@pytest.fixture(scope="module")
def context():
    check(driver.cuInit(0))
    device = check(driver.cuDeviceGet(0))
    ctx = check(driver.cuDevicePrimaryCtxRetain(device))
    check(driver.cuCtxSetCurrent(ctx))
    yield ctx
    check(driver.cuDevicePrimaryCtxRelease(device))


@pytest.fixture
def device_buffer(context):
    ptr = check(driver.cuMemAlloc(SIZE))
    yield ptr
    check(driver.cuMemFree(ptr))


def pattern():
    return (ctypes.c_ubyte * SIZE)(*(i * 7 % 251 for i in range(SIZE)))


def test_driver_version_and_devices(context):
    assert check(driver.cuDriverGetVersion()) >= 12000
    assert check(driver.cuDeviceGetCount()) >= 1


def test_copy_round_trip_on_stream_0(device_buffer):
    host = pattern()
    check(driver.cuMemcpyHtoDAsync(device_buffer, ctypes.addressof(host), SIZE, driver.CUstream(0)))
    check(driver.cuStreamSynchronize(driver.CUstream(0)))
    back = (ctypes.c_ubyte * SIZE)()
    check(driver.cuMemcpyDtoH(ctypes.addressof(back), device_buffer, SIZE))
    assert bytes(back) == bytes(host)


def test_memset_on_stream_0_is_ordered_before_a_copy(device_buffer):
    check(driver.cuMemsetD8Async(device_buffer, 0x5A, SIZE, driver.CUstream(0)))
    back = (ctypes.c_ubyte * SIZE)()
    check(driver.cuMemcpyDtoHAsync(ctypes.addressof(back), device_buffer, SIZE,
                                   driver.CUstream(0)))
    check(driver.cuStreamSynchronize(driver.CUstream(0)))
    assert set(bytes(back)) == {0x5A}


def test_stream_0_is_idle_after_synchronize(device_buffer):
    check(driver.cuMemsetD8Async(device_buffer, 1, SIZE, driver.CUstream(0)))
    check(driver.cuStreamSynchronize(driver.CUstream(0)))
    check(driver.cuStreamQuery(driver.CUstream(0)))


@pytest.mark.parametrize("handle", ["CU_STREAM_LEGACY", "CU_STREAM_PER_THREAD"])
def test_named_default_streams_synchronize(context, handle):
    check(driver.cuStreamSynchronize(getattr(driver, handle)))


def test_created_stream_copy(device_buffer):
    stream = check(driver.cuStreamCreate(0))
    try:
        host = pattern()
        check(driver.cuMemcpyHtoDAsync(device_buffer, ctypes.addressof(host), SIZE, stream))
        back = (ctypes.c_ubyte * SIZE)()
        check(driver.cuMemcpyDtoHAsync(ctypes.addressof(back), device_buffer, SIZE, stream))
        check(driver.cuStreamSynchronize(stream))
        assert bytes(back) == bytes(host)
    finally:
        check(driver.cuStreamDestroy(stream))
