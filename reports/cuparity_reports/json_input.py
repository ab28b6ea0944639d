"""Reading JSON input member by member, where the renderers read it.

`Obj` wraps one JSON object of an input file together with the file and the object's path in it.
Each accessor checks the member's type as it reads it; a member of the wrong type is a
ReportInputError naming the file and the member, e.g.
`run/summary.json: results[3].outcome: expected a string, got 5`, which the command line turns
into exit code 2, never a traceback. A member that is absent or null reads as the accessor's
default (older summaries lack newer members; the judge writes non-finite numbers as null), unless
the default is REQUIRED. The same idea as the C++ side's `json_input` (harness/protocol/).
"""

from __future__ import annotations

import json
import os
from typing import Any, Iterator

class ReportInputError(Exception):
    """A file given to the reports could not be used; the message names the file (exit code 2)."""

    def __init__(self, path: str | os.PathLike[str], message: str) -> None:
        self.path = str(path)
        self.detail = message
        super().__init__(f"{self.path}: {message}")


REQUIRED: Any = object()  # a default meaning "the member must be present and not null"


def describe(value: Any, limit: int = 60) -> str:
    """A short, printable form of a JSON value for an error message (control characters escaped)."""
    try:
        text = json.dumps(value, ensure_ascii=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def member_path(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def element_path(path: str, index: int) -> str:
    return f"{path}[{index}]"


def is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


_KINDS: dict[str, tuple[str, Any]] = {
    "string": ("a string", lambda v: isinstance(v, str)),
    "integer": ("an integer", is_int),
    "number": ("a number", is_number),
    "boolean": ("true or false", lambda v: isinstance(v, bool)),
    "object": ("an object", lambda v: isinstance(v, dict)),
    "list": ("a list", lambda v: isinstance(v, list)),
}


def check(value: Any, kind: str, source: str, path: str) -> Any:
    """`value` if it is of `kind`, else a ReportInputError naming `source` and `path`."""
    what, test = _KINDS[kind]
    if not test(value):
        raise ReportInputError(source, f"{path or '(top level)'}: expected {what}, got {describe(value)}")
    return value


class Obj:
    """One JSON object of an input file; `source` names the file, `path` the object inside it."""

    __slots__ = ("value", "source", "path")

    def __init__(self, value: Any, source: str, path: str = "") -> None:
        self.value: dict[str, Any] = check(value, "object", source, path)
        self.source = source
        self.path = path

    def __len__(self) -> int:
        return len(self.value)

    def __contains__(self, key: str) -> bool:
        return key in self.value

    def keys(self) -> Iterator[str]:
        return iter(self.value)

    def where(self, key: str) -> str:
        return member_path(self.path, key)

    def error(self, key: str, problem: str) -> ReportInputError:
        return ReportInputError(self.source, f"{self.where(key)}: {problem}")

    def has(self, key: str) -> bool:
        """Present and not null."""
        return self.value.get(key) is not None

    def raw(self, key: str, default: Any = None) -> Any:
        """Any JSON value (observations, divergence values): what the renderer shows as JSON text."""
        return self.value.get(key, default)

    def _get(self, key: str, kind: str, default: Any) -> Any:
        v = self.value.get(key)
        if v is None:
            if default is REQUIRED:
                raise self.error(key, f"expected {_KINDS[kind][0]}, got {'null' if key in self.value else 'nothing'}")
            return default
        return check(v, kind, self.source, self.where(key))

    def string(self, key: str, default: Any = "") -> Any:
        return self._get(key, "string", default)

    def integer(self, key: str, default: Any = None) -> Any:
        return self._get(key, "integer", default)

    def number(self, key: str, default: Any = None) -> Any:
        """An int or float (never a bool); None for null, which is how the judge writes NaN."""
        return self._get(key, "number", default)

    def boolean(self, key: str, default: Any = False) -> Any:
        return self._get(key, "boolean", default)

    def obj(self, key: str, default: Any = None) -> Obj:
        """A member object; absent or null reads as an empty one (or REQUIRED refuses that)."""
        v = self._get(key, "object", {} if default is None else default)
        return Obj(v, self.source, self.where(key))

    def opt_obj(self, key: str) -> Obj | None:
        v = self._get(key, "object", None)
        return None if v is None else Obj(v, self.source, self.where(key))

    def items(self, key: str, default: Any = None) -> list[Any]:
        """A member list, its elements unchecked; absent or null reads as []."""
        return self._get(key, "list", [] if default is None else default)

    def objs(self, key: str, default: Any = None) -> list[Obj]:
        """A list of objects, each with its own path (`cells[3]`)."""
        where = self.where(key)
        return [Obj(v, self.source, element_path(where, i)) for i, v in enumerate(self.items(key, default))]

    def strings(self, key: str) -> list[str]:
        where = self.where(key)
        return [check(v, "string", self.source, element_path(where, i)) for i, v in enumerate(self.items(key))]

    def numbers(self, key: str) -> list[float]:
        where = self.where(key)
        return [check(v, "number", self.source, element_path(where, i)) for i, v in enumerate(self.items(key))]

    def string_map(self, key: str, nullable: bool = False) -> dict[str, str | None]:
        """An object of strings (null too where `nullable`: an environment's unset variables)."""
        m = self.obj(key)
        return {k: (None if v is None and nullable else check(v, "string", self.source, m.where(k)))
                for k, v in m.value.items()}

    def count_map(self, key: str) -> dict[str, int]:
        """An object of counts (outcome -> number)."""
        m = self.obj(key)
        return {k: check(v, "integer", self.source, m.where(k)) for k, v in m.value.items()}

    def number_list_map(self, key: str) -> dict[str, list[float]]:
        """An object of number lists (a probe's samples: series -> per-round values)."""
        m = self.obj(key)
        return {k: m.numbers(k) for k in m.value}

