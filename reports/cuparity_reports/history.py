"""History store of run summaries: one file per run, plus an index. It stores; it does not judge.

A store is a folder: each run's summary.json, byte for byte, under its key
(<matrix>/<gpu>-x<count>/driver-<release>/<host>/<started>-<rev>-<digest>.json), and index.json (cuparity.history/1), one entry
per run with the sha256 of its file. `add` copies runs in (and restores a stored copy that went
missing or was altered, from the run given); `list` and the dashboard read the index. A damaged
index is refused, never read as empty and rewritten; `rebuild` makes a new one from the stored
files and keeps the old one aside as index.json.damaged-<time> (index.json.previous-<time> when it
was sound). Nothing here deletes a file, and nothing is written through a symbolic link inside
the store (a linked folder is refused, naming it: output.write_inside).
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Sequence

from .formatting import terminal_text as term
from .json_input import REQUIRED, Obj, ReportInputError, describe
from .output import ReportEnvironmentError, write_failure, write_inside
from .reader import MAX_RUN_BYTES, Run, kind_of, load_run, read_bytes, read_json, read_run_bytes, read_summary

INDEX = "index.json"
INDEX_SCHEMA = "cuparity.history/1"


def safe_name(text: Any, fallback: str = "unknown") -> str:
    """A file-name-safe form of any text: letters, digits, '.', '_' and '-' only."""
    s = re.sub(r"[^A-Za-z0-9._-]+", "_", str(text if text is not None else "")).strip("._-")
    return s[:80] or fallback


KEY = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*(/[A-Za-z0-9_-][A-Za-z0-9._-]*)*")
DIGEST_CHARS = 12  # of the summary's sha256 in its key: what tells two runs of the same second apart


def run_key(run: Run) -> str:
    """The store path of a run, by what a driver validator keys a history on:
    <matrix>/<gpu>-x<count>/driver-<release>/<host>/<started>-<rev>[-dirty]-<digest>.json.

    The driver release is the kernel driver's (provenance.driver_release, e.g. 580.159.04); a run
    from before it was recorded files under the CUDA API version it reported ("api-13.0"). `started`
    has whole seconds, so two runs of one revision started in the same second (two shards) would
    share everything else; the first characters of the summary's own sha256 make the key unique,
    and stable: the same summary always gets the same key.
    """
    prov = run.provenance
    gpus = prov.strings("gpus")
    gpu = gpus[0] if gpus else "no-gpu"
    count = prov.integer("gpu_count") or len(prov.objs("devices")) or len(gpus)
    release = prov.string("driver_release")
    api = prov.string("driver_version_text") or prov.integer("driver_version") or "unknown"
    host = prov.string("host") + (f"-{prov.string('host_id')}" if prov.string("host_id") else "")
    rev = (prov.string("git_revision") or "norev")[:12] + ("-dirty" if prov.boolean("git_dirty") else "")
    started = safe_name(run.started.replace(":", ""), "unstarted")
    parts = [safe_name(run.doc.obj("matrix").string("name"), "no-matrix"), safe_name(f"{gpu}-x{count}"),
             safe_name(f"driver-{release}" if release else f"driver-api-{api}"), safe_name(host),
             f"{started}-{safe_name(rev)}-{run.digest[:DIGEST_CHARS]}.json"]
    return "/".join(parts)


def index_entry(key: str, run: Run) -> dict[str, Any]:
    prov = run.provenance
    s = run.doc
    gpus = prov.strings("gpus")
    return {
        "key": key,
        "digest": run.digest,
        "started": run.started,
        "host": prov.string("host"),
        "host_id": prov.string("host_id"),
        "gpu": (gpus or [""])[0],
        "gpu_count": prov.integer("gpu_count") or len(prov.objs("devices")) or len(gpus),
        "driver_version": prov.integer("driver_version"),
        "driver_version_text": prov.string("driver_version_text"),
        "driver_release": prov.string("driver_release"),
        "git_revision": prov.string("git_revision"),
        "git_dirty": prov.boolean("git_dirty"),
        "simulated": prov.boolean("simulated"),
        "matrix": s.obj("matrix").string("name"),
        "matrix_digest": s.obj("matrix").string("digest"),
        "verdict": s.string("verdict"),
        "counts": s.count_map("counts"),
        "divergences": len(s.items("divergences")),
    }


DAMAGED_HINT = "a damaged index, left as it is: `history rebuild` makes a new one from the stored runs"


def index_path(store: str | os.PathLike[str]) -> Path:
    return Path(store) / INDEX


def read_index(store: str | os.PathLike[str]) -> list[Obj]:
    """The index's entries, oldest first; each entry's `key` is checked to be a path inside the store.

    No index is an empty store. An index that cannot be read whole (a symbolic link, a FIFO, not
    JSON, `runs` missing or not a list, an entry of the wrong type) is a ReportInputError naming it:
    never read as empty, which the next `add` would write back without every earlier entry.
    """
    path = index_path(store)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return []
    except OSError as e:
        raise ReportInputError(path, f"cannot read: {e.strerror or e} ({DAMAGED_HINT})") from None
    try:
        if stat.S_ISLNK(st.st_mode):  # the store writes its index itself: a link (or a loop) is not it
            raise ReportInputError(path, f"is {kind_of(st.st_mode)}, not the store's own index")
        return _index_entries(path)
    except ReportInputError as e:
        if e.path != str(path):
            raise
        raise ReportInputError(path, f"{e.detail} ({DAMAGED_HINT})") from None


def _index_entries(path: Path) -> list[Obj]:
    data = read_json(path)
    if not isinstance(data, dict) or data.get("schema") != INDEX_SCHEMA:
        raise ReportInputError(path, f"not a history index (expected schema {INDEX_SCHEMA})")
    entries = Obj(data, str(path)).objs("runs", REQUIRED)
    for e in entries:
        key = e.string("key", REQUIRED)
        if not KEY.fullmatch(key) or ".." in key.split("/"):
            raise e.error("key", f"not a file name inside the store: {describe(key)}")
        _list_line(e)  # every member `history list` shows, checked even where only keys are used
    return entries


def _write_index(store: Path, entries: list[dict[str, Any]], inputs: Sequence[str] = ()) -> None:
    entries = sorted(entries, key=lambda e: (e.get("started") or "", e["key"]))
    write_inside(store, INDEX, json.dumps({"schema": INDEX_SCHEMA, "runs": entries}, indent=1,
                                          sort_keys=True) + "\n", inputs)


def _file_digest(path: Path) -> str | None:
    """The sha256 of a stored file; None where there is no file to read (missing, a FIFO, too large)."""
    try:
        return hashlib.sha256(read_bytes(path, MAX_RUN_BYTES)).hexdigest()
    except ReportInputError:
        return None


def _stored_digest(root: Path, entry: Obj) -> str:
    """An entry's summary digest: recorded in the index, or (older stores) computed from its file."""
    if entry.has("digest"):
        return entry.string("digest")
    return _file_digest(root / entry.string("key")) or ""


ADDED, ALREADY_STORED, RESTORED = "added", "already stored", "restored"


def add(run_path: str | os.PathLike[str], store: str | os.PathLike[str]) -> tuple[str, str]:
    """Copies a run's summary into the store; returns (key, ADDED, ALREADY_STORED or RESTORED).

    A summary already in the store (the same bytes, under whatever key) is not stored twice. The
    stored copy is checked against the digest the index records: when it is missing or its bytes
    differ, it is restored from the run being added (the same bytes, by that digest), so that what
    the index promises is there again; nothing else in the store changes.
    """
    run = load_run(run_path)
    if run.raw:
        raise ReportInputError(run.source, "the history store takes runs with a verdict (no summary.json here; "
                               "`cuparity merge` writes one)")
    from .dashboard import check_renderable  # matplotlib comes with it: only for `add`

    check_renderable(run)  # the store keeps only what the dashboard can show
    root = Path(store)
    if root.exists() and not root.is_dir():
        raise ReportInputError(root, "not a directory (--store names the history store's folder)")
    entries = read_index(root)
    data = read_run_bytes(run.source)  # a stored run's summary.json.gz is kept inflated
    if hashlib.sha256(data).hexdigest() != run.digest:
        raise ReportInputError(run.source, "changed while it was read (add it again)")
    for e in entries:
        if _stored_digest(root, e) == run.digest:
            key = e.string("key")
            if _file_digest(root / key) == run.digest:
                return key, ALREADY_STORED
            # A stored file that is a FIFO or a folder is refused here, never replaced.
            write_inside(root, key, data, [run.source])
            return key, RESTORED
    key = run_key(run)
    write_inside(root, key, data, [run.source])  # never through a link in the store
    kept = [e.value for e in entries if e.string("key") != key]
    kept.append(index_entry(key, run))
    _write_index(root, kept, [run.source])
    return key, ADDED


# --- rebuild ----------------------------------------------------------------------------------

@dataclass
class Rebuilt:
    """What `rebuild` did: the runs indexed, the files left out (and why), where the old index went."""

    runs: int
    left_out: list[tuple[Path, str]] = field(default_factory=list)
    aside: Path | None = None


def _candidates(root: Path) -> Iterator[Path]:
    """Every .json file under the store but its index and the index's kept-aside copies, and the
    hidden temporary files of a write that was cut short. Links to folders are not followed."""
    for folder, dirs, names in os.walk(root):
        dirs.sort()
        for name in sorted(names):
            top = Path(folder) == root
            if top and (name == INDEX or name.startswith(INDEX + ".")):
                continue
            if name.startswith(".") and name.endswith(".tmp"):
                continue
            if name.endswith(".json"):
                yield Path(folder) / name


def _stored_run(root: Path, path: Path) -> tuple[str, Run]:
    """(key, run) of one stored file; ReportInputError (naming it) where it cannot be indexed."""
    key = path.relative_to(root).as_posix()
    if not KEY.fullmatch(key):
        raise ReportInputError(path, "not a name the store gives a run")
    try:
        mode = os.lstat(path).st_mode
    except OSError as e:
        raise ReportInputError(path, f"cannot read: {e.strerror or e}") from None
    if not stat.S_ISREG(mode):
        raise ReportInputError(path, f"is {kind_of(mode)}, not a stored run")
    run = read_summary(path)
    from .dashboard import check_renderable

    check_renderable(run)
    return key, run


def _aside_name(root: Path, word: str) -> Path:
    """index.json.<word>-<UTC time>, with -2, -3 ... when that name is taken."""
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    base = root / f"{INDEX}.{word}-{stamp}"
    aside, n = base, 1
    while os.path.lexists(aside):
        n += 1
        aside = Path(f"{base}-{n}")
    return aside


def _set_aside(root: Path) -> Path | None:
    """Renames the old index (whatever it is: a file, a link, a FIFO) out of the way; never deletes it."""
    index = index_path(root)
    if not os.path.lexists(index):
        return None
    try:
        read_index(root)
        word = "previous"
    except ReportInputError:
        word = "damaged"
    aside = _aside_name(root, word)
    try:
        os.rename(index, aside)
    except OSError as e:
        raise write_failure(index, e, f"cannot keep it aside as {aside.name}") from None
    return aside


def rebuild(store: str | os.PathLike[str]) -> Rebuilt:
    """Writes a new index.json from the runs stored in `store`, the old index kept aside.

    Each stored file is read as `history add` reads a run; one that cannot be (garbled, a link, the
    same bytes as another) is left out of the index and reported, never removed or changed.
    """
    root = Path(store)
    if not root.is_dir():
        raise ReportInputError(root, "no such history store")
    done = Rebuilt(runs=0)
    found: dict[str, list[tuple[str, Path, Run]]] = {}  # digest -> its files: one entry per run
    for path in _candidates(root):
        try:
            key, run = _stored_run(root, path)
        except ReportInputError as e:
            done.left_out.append((path, e.detail))
            continue
        found.setdefault(run.digest, []).append((key, path, run))
    indexed: list[dict[str, Any]] = []
    for copies in found.values():
        # The copy under the key `add` gives the run is the one indexed; any other is named, not indexed.
        copies.sort(key=lambda c: (c[0] != run_key(c[2]), c[0]))
        key, _, run = copies[0]
        indexed.append(index_entry(key, run))
        done.left_out += [(path, f"the same run as {key}") for _, path, _ in copies[1:]]
    done.aside = _set_aside(root)
    try:
        _write_index(root, indexed)
    except (ReportInputError, ReportEnvironmentError) as e:
        kept = f"; the old index is kept as {done.aside}" if done.aside else ""
        where = e.path if isinstance(e, ReportInputError) else e.where
        raise type(e)(where, f"{e.detail}{kept}") from None
    done.runs = len(indexed)
    return done


def load_store(store: str | os.PathLike[str]) -> list[Run]:
    """Every run in a store, oldest first (each file's schema is checked)."""
    root = Path(store)
    if not root.is_dir():
        raise ReportInputError(root, "no such history store")
    runs = [read_summary(root / e.string("key")) for e in read_index(root)]
    return sorted(runs, key=lambda r: r.started)


LIST_HEADER = (f"{'started':<21} {'matrix':<14} {'host':<12} {'gpu':<24} {'driver':<12} {'rev':<14} "
               f"{'verdict':<11} pass/fail/div")


def _list_line(e: Obj) -> str:
    """One index entry for a terminal (text from the run with its control characters escaped)."""
    c = e.count_map("counts")
    fails = sum(v for k, v in c.items() if k not in ("pass", "not_supported"))
    rev = term(e.string("git_revision"))[:10] + ("+" if e.boolean("git_dirty") else "")
    sim = " SIMULATED" if e.boolean("simulated") else ""
    count = e.integer("gpu_count") or 1
    gpu = term(e.string("gpu"))[:20] + (f" x{count}" if count != 1 else "")
    driver = term(e.string("driver_release") or e.string("driver_version_text"))[:12]
    return (f"{term(e.string('started')):<21} {term(e.string('matrix'))[:14]:<14} {term(e.string('host'))[:12]:<12} "
            f"{gpu:<24} {driver:<12} "
            f"{rev:<14} {term(e.string('verdict')):<11} "
            f"{c.get('pass', 0)}/{fails}/{e.integer('divergences', 0)}{sim}")


def _selected(e: Obj, only: dict[str, str]) -> bool:
    """Whether an index entry matches every filter of `history list` (matrix, gpu, driver, host)."""
    driver = e.string("driver_release") or e.string("driver_version_text")
    return (only.get("matrix", e.string("matrix")) == e.string("matrix")
            and only.get("gpu", "") in e.string("gpu")
            and only.get("driver", driver) == driver
            and only.get("host", e.string("host")) == e.string("host"))


def render_list(store: str | os.PathLike[str], only: dict[str, str] | None = None) -> str:
    """The stored runs for a terminal, oldest first; with `only`, those matching every filter."""
    entries = read_index(store)
    if not entries:
        return f"{term(store)}: empty history store\n"
    if only:
        kept = [e for e in entries if _selected(e, only)]
        if not kept:
            wanted = ", ".join(f"{k} {v}" for k, v in only.items())
            return f"{term(store)}: no stored run of {term(wanted)} ({len(entries)} stored)\n"
        entries = kept
    return "\n".join([LIST_HEADER] + [_list_line(e) for e in entries]) + "\n"
