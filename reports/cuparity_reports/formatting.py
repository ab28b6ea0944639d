"""Display text for the dashboard: outcome symbols, numbers, ratios, versions, observation values, environments."""

from __future__ import annotations

import json
import math
from typing import Any

OUTCOME_SYMBOL = {"pass": "", "not_supported": "–", "fail": "✗", "crash": "☠", "timeout": "⧗",
                  "resource_error": "R", "error": "!", "missing": "·"}

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


def spread(stat: dict) -> float:
    """A series' spread over the rounds: its robust CV where the run recorded one, else its CV."""
    value = stat.get("rcv")
    return float(stat.get("cv") or 0) if value is None else float(value)
