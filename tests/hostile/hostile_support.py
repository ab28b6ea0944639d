"""Helpers the hostile tests import (`from . import hostile_support as hs`): filling a device, checking a
process ended by exit with no traceback or abort on its console."""

from __future__ import annotations

import subprocess
from pathlib import Path


def fill(folder: Path) -> None:
    """Fills the device under `folder` to the last byte (unbuffered: a close cannot fail)."""
    for name, size in (("filler", 4096), ("filler-tail", 1)):
        with open(folder / name, "wb", buffering=0) as f:
            block = b"\0" * size
            try:
                while True:
                    f.write(block)
            except OSError:
                pass


def no_traceback(proc: subprocess.CompletedProcess) -> None:
    text = (proc.stdout or "") + (proc.stderr or "")
    assert "Traceback" not in text, text[-3000:]
    assert "terminate called" not in text, text[-3000:]
    assert proc.returncode >= 0, f"killed by signal {-proc.returncode}: {text[-3000:]}"
