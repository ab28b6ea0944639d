"""Writing the reports' files: whole or not at all, and a place that cannot be written is bad input."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .json_input import ReportInputError


def write_atomically(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Writes `data` to `path` through a temporary file beside it, renamed over `path` at the end.

    A directory at `path`, a parent that cannot be made, or a place without write permission is a
    ReportInputError naming `path` (exit code 2); the temporary file never stays behind.
    """
    out = Path(path)
    if out.is_dir():
        raise ReportInputError(out, "is a directory (name the file to write)")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ReportInputError(out, f"cannot create its folder: {e.strerror or e}") from None
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
    except OSError as e:
        raise ReportInputError(out, f"cannot write: {e.strerror or e}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, out)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(e, OSError):
            raise ReportInputError(out, f"cannot write: {e.strerror or e}") from None
        raise


def _umask() -> int:
    """The process's umask (mkstemp makes files 0600; the reports' files are as open as any other)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask
