"""A program (no test suite) that uses simpkg: the [[program]] of tests/programs/*.toml.

It initialises the driver through simpkg, fills and copies a buffer both ways, and exits with the
status its first argument names (default 0), after the driver work: a failing program that still
bound the driver.
"""

from __future__ import annotations

import sys

import simpkg


def main() -> int:
    simpkg.init()
    data = bytes(range(256)) * 4
    with simpkg.DeviceBuffer(len(data)) as buf:
        buf.fill(0x5A)
        if buf.read() != bytes([0x5A]) * len(data):
            print("use_simpkg: the fill did not read back", file=sys.stderr)
            return 1
        buf.write(data)
        if buf.read() != data:
            print("use_simpkg: the copy did not read back", file=sys.stderr)
            return 1
    status = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    print(f"use_simpkg: {simpkg.BINDING} binding, per-thread {simpkg.PER_THREAD}; exiting {status}")
    return status


if __name__ == "__main__":
    sys.exit(main())
