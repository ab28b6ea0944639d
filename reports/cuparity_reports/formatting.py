"""Display text for the dashboard: outcome symbols, numbers, ratios, versions, observation values, environments."""

from __future__ import annotations

import json
import math
import re
from typing import Any

OUTCOME_SYMBOL = {"pass": "", "not_supported": "–", "fail": "✗", "crash": "☠", "timeout": "⧗",
                  "resource_error": "R", "error": "!", "flaky": "~", "missing": "·"}

def fmt_num(v: Any, digits: int = 4) -> str:
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, (int, float)):
        if isinstance(v, float) and not math.isfinite(v):
            return "–"
        if isinstance(v, int):
            return str(v)
        return f"{v:.{digits}g}"
    return str(v)


def fmt_p(v: Any) -> str:
    if isinstance(v, (int, float)) and math.isfinite(v) and v < 0.001:
        return "< 0.001"
    return fmt_num(v, 3)


def fmt_ratio(v: Any) -> str:
    return f"{v:.3f}" if isinstance(v, (int, float)) and math.isfinite(v) else "–"


def version_text(v: Any) -> str:
    """A CUDA version number (13000) as text (13.0)."""
    if isinstance(v, int) and v >= 1000:
        return f"{v // 1000}.{(v % 1000) // 10}"
    return fmt_num(v)


def json_value(v: Any, limit: int = 240) -> tuple[str, str | None]:
    """Display text of an observation value, and the full text when cut."""
    text = v if isinstance(v, str) else json.dumps(v, sort_keys=True)
    if len(text) > limit:
        return text[: limit - 1] + "…", text
    return text, None


def env_text(env: dict[str, Any]) -> str:
    """A cell's environment, one VAR=value a line."""
    return "\n".join(f"{k}={'<unset>' if v is None else v}" for k, v in sorted((env or {}).items()))


def spread(rcv: float | None, cv: float | None) -> float:
    """A series' spread over the rounds: its robust CV where the run recorded one, else its CV."""
    return float(cv or 0) if rcv is None else float(rcv)


# Characters a terminal would act on rather than show: C0 and C1 controls (ESC starts an ANSI
# sequence, CR rewrites a line), DEL, and the bidirectional overrides and isolates that reorder
# what is shown; plus the Unicode line and paragraph separators. And lone surrogates: a path given
# on the command line holds one for each byte that is not UTF-8 (Python's surrogateescape), and
# neither a UTF-8 terminal nor the page's UTF-8 can carry it (printing one was a traceback).
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
                     "\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _escape(m: re.Match[str]) -> str:
    c = m.group()
    return _NAMED.get(c) or (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")


def terminal_text(value: Any) -> str:
    """Text from a run, safe to print to a terminal: each control character shown as an escape
    (ESC as \\x1b, a newline as \\n), so a cell name or message cannot move the cursor, recolour
    the screen or forge a line of the report."""
    return _UNSAFE.sub(_escape, str(value))


def page_text(value: str) -> str:
    """Text from a run for the HTML page: as terminal_text, but newlines and tabs stay (tooltips are
    multi-line). Markup escaping is the templates' autoescape."""
    return _UNSAFE.sub(lambda m: m.group() if m.group() in "\n\t" else _escape(m), value)
