"""The Jinja2 environment for the dashboard's templates (package templates/, autoescaped HTML)."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from .formatting import page_text


def _finalize(value: Any) -> Any:
    """None and False print as nothing (a missing field is an empty cell, not the word None); text from
    a run shows its control characters as escapes (formatting.page_text); Markup passes as is."""
    if value is None or value is False:
        return ""
    if isinstance(value, str) and not isinstance(value, Markup):
        return page_text(value)
    return value


@lru_cache(maxsize=1)
def environment() -> Environment:
    """Every .html template escapes every value it prints; only `Markup` passes as is."""
    return Environment(
        loader=PackageLoader("cuparity_reports", "templates"),
        autoescape=select_autoescape(enabled_extensions=("html",), default_for_string=True, default=True),
        undefined=StrictUndefined,
        finalize=_finalize,
        trim_blocks=True,
        keep_trailing_newline=True,
        lstrip_blocks=True,
    )


def stylesheet() -> Markup:
    """The dashboard's CSS (package text, never data), for inlining in a <style> element."""
    css = (resources.files("cuparity_reports") / "templates" / "dashboard.css").read_text(encoding="utf-8")
    if "</" in css:
        raise ValueError("style text must not contain '</'")
    return Markup(css)


def render(template: str, **context: Any) -> str:
    return environment().get_template(template).render(**context)
