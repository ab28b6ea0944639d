"""Change points of one series over runs, by E-Divisive (MongoDB's signal-processing-algorithms).

The history page's analysis, never a gate: the gate is the C++ judge (`cuparity run`, `cuparity
compare`). E-Divisive finds where a series' distribution changes; its significance test permutes
the series, so the generator is seeded (the same store always draws the same page).
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import median
from typing import Sequence

import numpy as np

PVALUE = 0.05
PERMUTATIONS = 200
MIN_POINTS = 6  # fewer runs than this on a line: no change point is looked for
SEED = 20261203


@dataclass(frozen=True)
class ChangePoint:
    index: int  # the first point after the change
    before: float  # median of the segment before it
    after: float  # median of the segment after it

    @property
    def step(self) -> float:
        """after / before - 1 (0.25: 25 % higher after the change)."""
        return self.after / self.before - 1.0 if self.before else float("inf")


def change_points(values: Sequence[float]) -> list[ChangePoint]:
    """The change points of `values` (oldest first), each with the medians of its two neighbouring
    segments; none for a series shorter than MIN_POINTS or constant."""
    if len(values) < MIN_POINTS or len(set(values)) < 2:
        return []
    from signal_processing_algorithms.energy_statistics import energy_statistics

    state = np.random.get_state()
    np.random.seed(SEED)  # the library permutes with numpy's global generator
    try:
        found = sorted(energy_statistics.e_divisive(np.asarray(values, dtype=float), pvalue=PVALUE,
                                                    permutations=PERMUTATIONS))
    finally:
        np.random.set_state(state)
    bounds = [0, *found, len(values)]
    out = []
    for i, cp in enumerate(found):
        before = median(values[bounds[i]:cp])
        after = median(values[cp:bounds[i + 2]])
        out.append(ChangePoint(cp, float(before), float(after)))
    return out
