"""Writing the reports' files: whole or not at all, only over a regular file, never over an input.

One way to write a file: `write_atomically`, which `check_target` guards. A target that exists must be
a regular file: a device node, a FIFO, a socket, a directory or a symbolic link (even one to a regular
file) is refused, since writing would put a regular file in its place (`--output /dev/null` would
replace the device). A target that is one of the command's inputs (the same file: os.stat's
st_dev and st_ino, so a hard link or a link to it counts) is refused too, so that a page never
replaces the summary it shows. Each refusal is a ReportInputError naming the target (exit code 2).
The data goes to a temporary file beside the target, renamed over it at the end: a reader sees
the old file or the new one, and a failed write leaves the old one as it was.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import Iterable

from .json_input import ReportInputError
from .reader import kind_of

Paths = Iterable[str | os.PathLike[str]]


def _identity(path: str | os.PathLike[str]) -> tuple[int, int] | None:
    """(st_dev, st_ino) of the file `path` names, following links; None where there is none."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


def check_target(path: str | os.PathLike[str], inputs: Paths = ()) -> None:
    """Refuses a target that exists and is not a regular file, or is one of `inputs`."""
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return  # a new file (in a folder that may be made; where it cannot be, that says why)
    except OSError as e:
        raise ReportInputError(path, f"cannot write: {e.strerror or e}") from None
    if stat.S_ISDIR(st.st_mode):
        raise ReportInputError(path, "is a directory (name the file to write)")
    if not stat.S_ISREG(st.st_mode):
        raise ReportInputError(path, f"is {kind_of(st.st_mode)}, not a regular file: the reports write "
                                     "only regular files (remove it, or name another file)")
    target = (st.st_dev, st.st_ino)
    for source in inputs:
        if _identity(source) == target:
            same = "" if os.fspath(source) == os.fspath(path) else f" ({os.fspath(source)})"
            raise ReportInputError(path, f"is one of the inputs{same}: the reports never write over what "
                                         "they read (name another file)")


def write_atomically(path: str | os.PathLike[str], data: str | bytes, inputs: Paths = ()) -> None:
    """Writes `data` to `path` through a temporary file beside it, renamed over `path` at the end.

    A target check_target refuses, a parent that cannot be made, or a place without write
    permission is a ReportInputError naming `path` (exit code 2); the temporary file never stays
    behind, and the old file, if any, stays as it was.
    """
    out = Path(path)
    sources = list(inputs)
    check_target(out, sources)
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
        check_target(out, sources)  # again: writing took a while, and the rename replaces what is there now
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
