"""A tiny HTML builder that escapes every piece of text it is given (nothing is trusted)."""

from __future__ import annotations

import html
import re
from typing import Any, Iterable, Union

_NAME = re.compile(r"^[a-z][a-z0-9-]*$")


class Markup(str):
    """HTML produced by this module; the only kind of string that is not escaped again."""


Child = Union[Markup, str, int, float, None, Iterable[Any]]


def esc(value: Any) -> Markup:
    """Escapes any value for use as element text or an attribute value."""
    if isinstance(value, Markup):
        return value
    return Markup(html.escape("" if value is None else str(value), quote=True))


def _children(items: Iterable[Any]) -> str:
    out = []
    for item in items:
        if item is None or item is False:
            continue
        if isinstance(item, Markup):
            out.append(str(item))
        elif isinstance(item, (str, int, float)):
            out.append(esc(item))
        else:
            out.append(_children(item))
    return "".join(out)


def attrs(**kw: Any) -> str:
    """Attributes: `class_` -> class, `data_x` -> data-x; None/False omitted, True bare."""
    parts = []
    for key, value in kw.items():
        name = key.rstrip("_").replace("_", "-")
        if not _NAME.match(name):
            raise ValueError(f"bad attribute name {name!r}")
        if value is None or value is False:
            continue
        if value is True:
            parts.append(f" {name}")
        else:
            parts.append(f' {name}="{esc(value)}"')
    return "".join(parts)


VOID = {"br", "hr", "img", "meta", "col", "wbr"}


def el(tag: str, *children: Child, **kw: Any) -> Markup:
    """<tag attrs>children</tag>, with every string child and attribute value escaped."""
    if not _NAME.match(tag):
        raise ValueError(f"bad tag {tag!r}")
    if tag in VOID:
        return Markup(f"<{tag}{attrs(**kw)}>")
    return Markup(f"<{tag}{attrs(**kw)}>{_children(children)}</{tag}>")


def join(items: Iterable[Child]) -> Markup:
    return Markup(_children(items))


def raw_css(css: str) -> Markup:
    """A style sheet written in this package (never from data)."""
    if "</" in css:
        raise ValueError("style text must not contain '</'")
    return Markup(f"<style>{css}</style>")
