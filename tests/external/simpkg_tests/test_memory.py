"""simpkg's memory info: the test that fails only where simpkg binds cuMemGetInfo's old ABI.

On the proc path simpkg asks cuGetProcAddress_v2 for cuMemGetInfo at version 3000 (its bug, see
simpkg's docstring), gets the 32-bit `cuMemGetInfo`, and reads totals capped at 4 GiB - 1 on a
device with more memory (the simulated one has 16 GiB). On the dlsym path it calls
`cuMemGetInfo_v2` and the totals agree.
"""

from __future__ import annotations


def test_mem_info_matches_device_total(driver):
    free, total = driver.mem_get_info()
    assert total == driver.device_total_mem(0), (
        f"cuMemGetInfo says {total} bytes in total, cuDeviceTotalMem {driver.device_total_mem(0)}")
    assert 0 < free <= total

