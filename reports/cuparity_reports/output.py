"""Writing the reports' files: whole or not at all, only over a regular file, never over an input.

One way to write a file: `write_atomically`, which `check_target` guards. A target that exists must be
a regular file: a device node, a FIFO, a socket, a directory or a symbolic link (even one to a regular
file) is refused, since writing would put a regular file in its place (`--output /dev/null` would
replace the device). A target that is one of the command's inputs (the same file: os.stat's
st_dev and st_ino, so a hard link or a link to it counts) is refused too, so that a page never
replaces the summary it shows. Each refusal is a ReportInputError naming the target (exit code 2).
The data goes to a temporary file beside the target, synced and renamed over it at the end: a
reader sees the old file or the new one, and a failed write leaves the old one as it was.

Every write is checked, the console's too: `say` writes a line to stdout and flushes it, and
`finish_stdout` flushes and closes stdout before the command's exit code is returned. A write the
environment refuses (a full device, an I/O error, a closed pipe) is a ReportEnvironmentError naming
where it went, e.g. `stdout: No space left on device` (exit code 3), never a traceback. `write_inside`
writes a file under a folder (the history store) without following a symbolic link on the way.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import Iterable

from .json_input import ReportInputError
from .reader import kind_of

Paths = Iterable[str | os.PathLike[str]]


class ReportEnvironmentError(Exception):
    """A write the environment refused (a full device, an I/O error, a closed pipe): exit code 3.
    `where` names the file, or "stdout"."""

    def __init__(self, where: str | os.PathLike[str], problem: str) -> None:
        self.where = str(where)
        self.detail = problem
        super().__init__(f"{self.where}: {problem}")


# Failures of the place rather than of the name given: the environment's (exit 3), not bad input.
ENVIRONMENT_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EFBIG, errno.EROFS,
                                errno.ENOMEM, errno.EPIPE})


def write_failure(where: str | os.PathLike[str], e: OSError, what: str = "cannot write") -> Exception:
    """The error for a failed write at `where`: ReportEnvironmentError (exit 3) where the
    environment refused it, else ReportInputError (exit 2: a place the user named that cannot be
    written, such as a folder without permission)."""
    problem = f"{what}: {e.strerror or e}"
    if e.errno in ENVIRONMENT_ERRNOS:
        return ReportEnvironmentError(where, problem)
    return ReportInputError(where, problem)


def say(text: str = "") -> None:
    """One line on stdout, flushed: a failure is a ReportEnvironmentError("stdout", ...) now,
    not an exception at exit."""
    write_stdout(text + "\n")


def write_stdout(text: str) -> None:
    """`text` on stdout, flushed (see `say`)."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except OSError as e:
        raise ReportEnvironmentError("stdout", e.strerror or str(e)) from None


def warn(text: str) -> None:
    """One line on stderr. Where stderr itself cannot be written there is nowhere to say so: the
    exit code still tells."""
    try:
        sys.stderr.write(text + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def finish_stdout(close: bool) -> None:
    """Flushes stdout, and with `close` (the process's command line is done: the close of a file
    on some file systems is where a failed write shows) closes it; a failure is a
    ReportEnvironmentError("stdout", ...)."""
    try:
        sys.stdout.flush()
        if close and sys.stdout is sys.__stdout__ and sys.stdout is not None:
            sys.stdout.close()
    except OSError as e:
        raise ReportEnvironmentError("stdout", e.strerror or str(e)) from None


def discard_stdout() -> None:
    """After stdout failed: what its buffer still holds goes nowhere, so the interpreter's own flush
    at exit neither fails again nor changes the exit code."""
    stream = sys.__stdout__
    if stream is None or sys.stdout is not stream:
        return
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, stream.fileno())
        os.close(null)
    except (OSError, ValueError):
        pass


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
    permission is a ReportInputError naming `path` (exit code 2); a write the environment refuses
    (a full device) is a ReportEnvironmentError naming it (exit code 3). Either way the temporary
    file never stays behind, and the old file, if any, stays as it was.
    """
    out = Path(path)
    sources = list(inputs)
    check_target(out, sources)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise write_failure(out, e, "cannot create its folder") from None
    try:
        fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
    except OSError as e:
        raise write_failure(out, e) from None
    _fill_and_rename(fd, tmp, out, data, lambda: check_target(out, sources), lambda: os.replace(tmp, out),
                     lambda: os.unlink(tmp))


def _fill_and_rename(fd: int, tmp: str, out: Path, data: str | bytes, recheck, rename, unlink) -> None:
    """Writes `data` to the temporary file `fd`, syncs and closes it (each checked), then `recheck`s
    the target and `rename`s; on any failure the temporary file is `unlink`ed."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        try:
            view = memoryview(payload)
            while view:
                view = view[os.write(fd, view):]
            os.fchmod(fd, 0o666 & ~_umask())
            try:
                os.fsync(fd)
            except OSError as e:
                if e.errno != errno.EINVAL:  # a file system that cannot sync (a pipe-like one)
                    raise
        finally:
            os.close(fd)
    except OSError as e:
        _quietly(unlink)
        raise ReportEnvironmentError(out, f"cannot write: {e.strerror or e}") from None
    except BaseException:
        _quietly(unlink)
        raise
    try:
        recheck()  # again: writing took a while, and the rename replaces what is there now
        rename()
    except BaseException as e:
        _quietly(unlink)
        if isinstance(e, OSError):
            raise write_failure(out, e) from None
        raise


def _quietly(unlink) -> None:
    try:
        unlink()
    except OSError:
        pass


def write_inside(root: str | os.PathLike[str], key: str, data: str | bytes, inputs: Paths = ()) -> None:
    """Writes `data` to `root/key` as write_atomically does, making the folders of `key` where
    missing, without following a symbolic link below `root`: each folder is opened O_NOFOLLOW and
    the file is made and renamed inside the folder opened, so a link put in the store (by anyone,
    at any time) can never carry a write out of it. A link is a ReportInputError naming it."""
    base = Path(root)
    parts = key.split("/")
    out = base.joinpath(*parts)
    sources = list(inputs)
    try:
        base.mkdir(parents=True, exist_ok=True)
        fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as e:
        raise write_failure(base, e, "cannot create or open the folder") from None
    try:
        where = base
        for part in parts[:-1]:
            where = where / part
            parent, fd = fd, -1
            try:
                fd = _subfolder(parent, part, where)
            finally:
                os.close(parent)
        name = parts[-1]
        _check_in_folder(fd, name, out, sources)
        tmp = f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
        try:
            tmp_fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                             dir_fd=fd)
        except OSError as e:
            raise write_failure(out, e) from None
        _fill_and_rename(tmp_fd, tmp, out, data, lambda: _check_in_folder(fd, name, out, sources),
                         lambda: os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd),
                         lambda: os.unlink(tmp, dir_fd=fd))
    finally:
        if fd >= 0:
            os.close(fd)


def _subfolder(parent_fd: int, name: str, where: Path) -> int:
    """The folder `name` inside `parent_fd`, made where missing and opened without following a
    link. A link (or anything not a folder) there is a ReportInputError."""
    try:
        try:
            os.mkdir(name, 0o777, dir_fd=parent_fd)
        except FileExistsError:
            pass
        st = os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
        if stat.S_ISLNK(st.st_mode):
            target = os.readlink(name, dir_fd=parent_fd)
            raise ReportInputError(where, f"is a symbolic link (to {target}): the store writes only inside "
                                          "its own folders (remove the link)")
        if not stat.S_ISDIR(st.st_mode):
            raise ReportInputError(where, f"is {kind_of(st.st_mode)}, not a folder of the store")
        return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent_fd)
    except OSError as e:
        if e.errno == errno.ELOOP:  # swapped for a link between the check and the open
            raise ReportInputError(where, "is a symbolic link: the store writes only inside its own folders") from None
        raise write_failure(where, e, "cannot create or open the folder") from None


def _check_in_folder(fd: int, name: str, out: Path, inputs: list) -> None:
    """check_target's rules for the file `name` in the folder `fd`."""
    try:
        st = os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return
    except OSError as e:
        raise ReportInputError(out, f"cannot write: {e.strerror or e}") from None
    if stat.S_ISDIR(st.st_mode):
        raise ReportInputError(out, "is a directory (name the file to write)")
    if not stat.S_ISREG(st.st_mode):
        raise ReportInputError(out, f"is {kind_of(st.st_mode)}, not a regular file: the reports write "
                                    "only regular files (remove it, or name another file)")
    for source in inputs:
        if _identity(source) == (st.st_dev, st.st_ino):
            raise ReportInputError(out, f"is one of the inputs ({os.fspath(source)}): the reports never write "
                                        "over what they read (name another file)")


def _umask() -> int:
    """The process's umask (mkstemp makes files 0600; the reports' files are as open as any other)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask
