"""Matplotlib figures (Agg backend) for the dashboard, returned as base64 PNG data URIs."""

from __future__ import annotations

import base64
import io
import math
from typing import Any, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

plt.rcParams.update({
    "text.parse_math": False,  # names from results may contain '$'
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "figure.dpi": 100,
})

BACKEND_COLOURS = {"internal": "#1f6fb4", "nvidia": "#e07b00", "direct": "#6b6b6b"}
OTHER_COLOUR = "#7a4fb0"


def colour(backend: str) -> str:
    return BACKEND_COLOURS.get(backend, OTHER_COLOUR)


def to_data_uri(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight", dpi=90)
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _short(text: str, n: int = 44) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def probes_figure(probes: Sequence[dict[str, Any]], backend_of: dict[str, str],
                  medians: dict[tuple[str, str], float]) -> str:
    """One panel per probe: per-round samples (dots) and the runner's median (latency.stats) per series.

    Nothing is computed here: the medians come from summary.json, as every verdict does.
    """
    cols = 2 if len(probes) > 1 else 1
    rows = math.ceil(len(probes) / cols)
    heights = [max(1.8, 0.32 * max(len(p.get("samples") or {}) for p in probes) + 0.9)] * rows
    fig, axes = plt.subplots(rows, cols, figsize=(6.6 * cols, sum(heights)), squeeze=False)
    for ax in axes.flat[len(probes):]:
        ax.set_visible(False)
    for ax, probe in zip(axes.flat, probes):
        samples = probe.get("samples") or {}
        names = sorted(samples, key=lambda s: (backend_of.get(s, s), s))
        for y, name in enumerate(names):
            vals = [float(v) for v in samples[name]]
            c = colour(backend_of.get(name, ""))
            jitter = [y + 0.18 * ((i * 7919) % 11 - 5) / 5 for i in range(len(vals))]
            ax.scatter(vals, jitter, s=7, color=c, alpha=0.35, linewidths=0)
            m = medians.get((str(probe.get("name")), name))
            if m is not None:
                ax.plot([m], [y], marker="D", color="white", markeredgecolor=c, markersize=5.5)
        ax.set_yticks(range(len(names)))
        ax.set_yticklabels([_short(n) for n in names], fontsize=7.5)
        ax.set_ylim(-0.7, len(names) - 0.3)
        ax.invert_yaxis()
        better = "lower is better" if probe.get("lower_is_better", True) else "higher is better"
        ax.set_title(f"{probe.get('name', '?')} ({probe.get('kind', '')}, {better})", fontsize=9.5, loc="left")
        ax.set_xlabel(str(probe.get("unit", "")))
        ax.grid(axis="y", alpha=0)
    fig.tight_layout()
    return to_data_uri(fig)


def history_figure(labels: Sequence[str], count_series: dict[str, Sequence[float | None]],
                   probe_series: dict[str, dict[str, Sequence[float | None]]], backend_of: dict[str, str],
                   driver_changes: Sequence[tuple[int, str]], units: dict[str, str]) -> str:
    """Counts and each probe's per-series medians (as the runner wrote them) over runs; driver changes marked."""
    panels = 1 + len(probe_series)
    fig, axes = plt.subplots(panels, 1, figsize=(12, 2.3 * panels + 0.6), sharex=True, squeeze=False)
    xs = list(range(len(labels)))
    count_colours = {"pass": "#2e7d32", "non-pass": "#c62828", "divergences": "#6a1b9a"}

    def line(ax: Any, ys: Sequence[float | None], **style: Any) -> None:
        pts = [(x, y) for x, y in zip(xs, ys) if y is not None]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", **style)

    ax = axes[0][0]
    for name, ys in count_series.items():
        line(ax, ys, label=name, color=count_colours.get(name, OTHER_COLOUR))
    ax.set_title("results per run", loc="left", fontsize=9.5)
    ax.legend(fontsize=8, loc="upper left", frameon=False, ncol=3)
    for row, (probe, series) in enumerate(probe_series.items(), start=1):
        ax = axes[row][0]
        for name, ys in sorted(series.items()):
            line(ax, ys, label=_short(name, 30), color=colour(backend_of.get(name, "")), alpha=0.8)
        ax.set_title(f"{probe}: median per series ({units.get(probe, '')})", loc="left", fontsize=9.5)
        ax.legend(fontsize=7, loc="upper left", frameon=False, ncol=4)
    for axrow in axes:
        for x, text in driver_changes:
            axrow[0].axvline(x - 0.5, color="#455a64", linestyle="--", linewidth=1)
        for x, text in driver_changes:
            axrow[0].annotate(f"driver {text}", xy=(x - 0.45, 1.0), xycoords=("data", "axes fraction"),
                              fontsize=7.5, color="#455a64", va="top")
    axes[-1][0].set_xticks(xs)
    axes[-1][0].set_xticklabels([_short(l, 22) for l in labels], rotation=30, ha="right", fontsize=7.5)
    fig.tight_layout()
    return to_data_uri(fig)
