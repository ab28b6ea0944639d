"""Run-vs-run comparison: outcome changes per (cell, case) and latency verdicts per probe series."""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from typing import Any

from .reader import OK_OUTCOMES, Run
from .stats import THRESHOLD, compare_samples

CLASSES = ("regression", "fix", "changed", "new", "missing", "unchanged")


@dataclass
class OutcomeChange:
    cell: str
    case: str
    change: str  # one of CLASSES
    outcome_a: str | None
    outcome_b: str | None
    message_b: str = ""


@dataclass
class LatencyChange:
    probe: str
    series: str
    unit: str
    median_a: float
    median_b: float
    ratio: float
    ci_low: float
    ci_high: float
    p_value: float
    verdict: str
    n_a: int
    n_b: int


@dataclass
class CompareResult:
    a: str
    b: str
    outcomes: list[OutcomeChange] = field(default_factory=list)
    latency: list[LatencyChange] = field(default_factory=list)
    divergences_new: list[str] = field(default_factory=list)
    divergences_gone: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def count(self, change: str) -> int:
        return sum(1 for o in self.outcomes if o.change == change)

    @property
    def regressed(self) -> bool:
        return (self.count("regression") > 0 or any(l.verdict == "slower" for l in self.latency)
                or bool(self.divergences_new))

    def to_json(self) -> dict[str, Any]:
        def clean(v: Any) -> Any:
            return None if isinstance(v, float) and not math.isfinite(v) else v

        return {
            "a": self.a,
            "b": self.b,
            "regressed": self.regressed,
            "counts": {c: self.count(c) for c in CLASSES},
            "outcomes": [asdict(o) for o in self.outcomes if o.change != "unchanged"],
            "latency": [{k: clean(v) for k, v in asdict(l).items()} for l in self.latency],
            "divergences": {"new": self.divergences_new, "gone": self.divergences_gone},
            "notes": self.notes,
        }


def classify(a: str | None, b: str | None) -> str:
    """Classifies one (cell, case) outcome pair; pass and not_supported are the good outcomes."""
    if a is None:
        return "new"
    if b is None:
        return "missing"
    if a == b:
        return "unchanged"
    if a in OK_OUTCOMES and b not in OK_OUTCOMES:
        return "regression"
    if a not in OK_OUTCOMES and b in OK_OUTCOMES:
        return "fix"
    return "changed"


def _divergence_keys(run: Run) -> set[str]:
    """Divergences keyed by case, key and null-stream mode (driver paths differ between hosts)."""
    keys = set()
    for d in run.summary.get("divergences") or []:
        stream0 = str(d.get("group", "")).split(" ")[0]
        keys.add(f"{d.get('case', '')} {d.get('key', '')} [{stream0}]")
    return keys


def compare_runs(a: Run, b: Run, threshold: float = THRESHOLD) -> CompareResult:
    """Compares run B against run A."""
    res = CompareResult(a=a.source, b=b.source)
    ra = {(r["cell"], r["case"]): r for r in a.summary.get("results") or []}
    rb = {(r["cell"], r["case"]): r for r in b.summary.get("results") or []}
    for key in sorted(set(ra) | set(rb)):
        oa = ra[key]["outcome"] if key in ra else None
        ob = rb[key]["outcome"] if key in rb else None
        msg = str(rb[key].get("message", "")) if key in rb else ""
        res.outcomes.append(OutcomeChange(key[0], key[1], classify(oa, ob), oa, ob, msg))
    da, db = _divergence_keys(a), _divergence_keys(b)
    res.divergences_new = sorted(db - da)
    res.divergences_gone = sorted(da - db)

    la, lb = a.latency, b.latency
    if la and lb:
        probes_a = {p["name"]: p for p in la.get("probes") or []}
        for pb in lb.get("probes") or []:
            pa = probes_a.get(pb["name"])
            if pa is None:
                res.notes.append(f"probe {pb['name']} only in B")
                continue
            sa, sb = pa.get("samples") or {}, pb.get("samples") or {}
            for series in sorted(set(sa) & set(sb)):
                c = compare_samples(sa[series], sb[series], bool(pb.get("lower_is_better", True)),
                                    threshold)
                res.latency.append(LatencyChange(pb["name"], series, pb.get("unit", ""), c.median_a,
                                                 c.median_b, c.ratio, c.ci_low, c.ci_high, c.p_value,
                                                 c.verdict, c.n_a, c.n_b))
            for series in sorted(set(sa) ^ set(sb)):
                side = "A" if series in sa else "B"
                res.notes.append(f"probe {pb['name']} series {series} only in {side}")
        for name in sorted(set(probes_a) - {p["name"] for p in lb.get("probes") or []}):
            res.notes.append(f"probe {name} only in A")
    elif la or lb:
        res.notes.append(f"latency only in {'A' if la else 'B'}: no latency comparison")
    return res


def _table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    for r in rows:
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    return "\n".join(lines)


def _fmt(v: float, digits: int = 4) -> str:
    return "-" if not math.isfinite(v) else f"{v:.{digits}g}"


def _ratio(v: float) -> str:
    return "-" if not math.isfinite(v) else f"{v:.3f}"


def render_text(res: CompareResult) -> str:
    """A terminal report: counts, every non-unchanged outcome, and the latency table."""
    out = [f"A: {res.a}", f"B: {res.b}", ""]
    out.append("outcomes: " + ", ".join(f"{res.count(c)} {c}" for c in CLASSES))
    changed = [o for o in res.outcomes if o.change != "unchanged"]
    if changed:
        order = {c: i for i, c in enumerate(CLASSES)}
        rows = [[o.change, o.cell, o.case, o.outcome_a or "-", o.outcome_b or "-", o.message_b[:60]]
                for o in sorted(changed, key=lambda o: (order[o.change], o.case, o.cell))]
        out += ["", _table(rows, ["change", "cell", "case", "A", "B", "B message"])]
    if res.divergences_new or res.divergences_gone:
        out.append("")
        out += [f"new divergence: {d}" for d in res.divergences_new]
        out += [f"divergence gone: {d}" for d in res.divergences_gone]
    if res.latency:
        rows = [[l.probe, l.series, _fmt(l.median_a), _fmt(l.median_b), l.unit, _ratio(l.ratio),
                 f"[{_ratio(l.ci_low)}, {_ratio(l.ci_high)}]",
                 "<0.001" if l.p_value < 0.001 else _fmt(l.p_value, 2), l.verdict]
                for l in res.latency]
        out += ["", "latency (B vs A; ratio = median B / median A, 95% bootstrap CI, "
                    f"Mann-Whitney p; threshold {THRESHOLD:.0%}):",
                _table(rows, ["probe", "series", "A", "B", "unit", "ratio", "CI", "p", "verdict"])]
    out += [f"note: {n}" for n in res.notes]
    slower = sum(1 for l in res.latency if l.verdict == "slower")
    out += ["", "REGRESSED" if res.regressed else "no regression",
            f"({res.count('regression')} outcome regressions, {len(res.divergences_new)} new divergences, "
            f"{slower} slower latency series)"]
    return "\n".join(out) + "\n"


def render_json(res: CompareResult) -> str:
    return json.dumps(res.to_json(), indent=2, sort_keys=True) + "\n"
