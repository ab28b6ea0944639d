"""cuparity installed from a wheel: the `cuparity` command runs the executable shipped inside.

The C++ runner, its libraries (the nvidia backend, the audit library, the simulated driver, the
fault shim), its Python helpers and the shipped matrices sit under this package's folder in the
layout of an installed tree (bin/, lib/cuparity/, share/cuparity/matrices/), where the executable
finds them relative to itself.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

__all__ = ["executable", "main"]


def executable() -> Path:
    """The shipped `cuparity` executable."""
    return Path(__file__).resolve().parent / "bin" / "cuparity"


def main() -> None:
    """Console script: replaces this process with the executable, arguments unchanged."""
    exe = executable()
    if not os.access(exe, os.X_OK):
        sys.stderr.write(f"cuparity: the shipped executable {exe} is missing or not executable; "
                         "reinstall the cuparity wheel\n")
        raise SystemExit(3)
    os.execv(exe, [str(exe), *sys.argv[1:]])
