"""A test that fails every other try: what `cuparity run` must report as flaky.

It counts its own tries in a file under $CUPARITY_SUITE_DIR (the runner's folder for this suite
in this cell, the same for every process of the suite), and fails on the 1st, 3rd, ... try, so
the runner's first run fails it and its re-run alone passes it. Run by hand, without that
variable, it simply passes.
"""

from __future__ import annotations

import os
from pathlib import Path


def test_every_other_try(driver):
    folder = os.environ.get("CUPARITY_SUITE_DIR")
    if not folder:
        return
    counter = Path(folder) / "simpkg-flaky-tries"
    tries = int(counter.read_text(encoding="utf-8")) + 1 if counter.exists() else 1
    counter.write_text(str(tries), encoding="utf-8")
    with driver.DeviceBuffer(8) as buf:
        buf.write(b"tries=%02d" % (tries % 100))
        assert tries % 2 == 0, f"try {tries}: this test fails on odd tries"
