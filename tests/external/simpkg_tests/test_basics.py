"""simpkg's basics: initialisation, device queries, memory round trips and fills."""

from __future__ import annotations

import sys
import unittest

import pytest

import simpkg


def test_init_and_device(driver):
    assert driver.device_count() >= 1
    assert driver.driver_version() >= 2000


def test_roundtrip(driver):
    data = bytes(range(256)) * 16
    with driver.DeviceBuffer(len(data)) as buf:
        buf.write(data)
        assert buf.read() == data


# Ids with brackets of their own ("fill[4096-0xab]") and a bracket inside a parameter.
@pytest.mark.parametrize("size, value", [(1, 0), (4096, 0xAB), (65539, 0x5A)],
                         ids=["1-0x00", "4096-0xab", "65539-[0x5a]"])
def test_fill(driver, size, value):
    with driver.DeviceBuffer(size) as buf:
        buf.fill(value)
        assert buf.read() == bytes([value]) * size


def test_free_twice_is_an_error(driver):
    buf = driver.DeviceBuffer(64)
    pointer = buf.ptr.value
    buf.close()
    with pytest.raises(simpkg.CudaError) as caught:
        driver.call("cuMemFree", simpkg.CUdeviceptr(pointer))
    assert caught.value.function == "cuMemFree"


@pytest.mark.skipif(sys.platform == "linux", reason="simpkg has no peer copies on Linux yet")
def test_peer_copy(driver):
    raise AssertionError("never runs on Linux")


class StreamTests(unittest.TestCase):
    """A unittest.TestCase, as older suites are written: its tests are named Class.method."""

    def setUp(self):
        simpkg.init()

    def test_synchronize(self):
        simpkg.synchronize()

    def test_copy_then_stream_sync(self):
        with simpkg.DeviceBuffer(16) as buf:
            buf.write(b"0123456789abcdef")
            simpkg.call("cuStreamSynchronize", None)
            self.assertEqual(buf.read(4), b"0123")
