"""Small statistics for latency samples: medians, bootstrap intervals, Mann-Whitney U, verdicts."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

import numpy as np

THRESHOLD = 0.05  # relative change below which two medians count as the same
ALPHA = 0.05  # significance level of the Mann-Whitney U test
BOOTSTRAP_ROUNDS = 2000
MIN_SAMPLES = 3  # fewer rounds than this on either side: the verdict is "ambiguous"


def median(values: Sequence[float]) -> float:
    """The median of a non-empty sequence."""
    return float(np.median(np.asarray(values, dtype=float)))


def cv(values: Sequence[float]) -> float:
    """Coefficient of variation (sample standard deviation over mean); 0 for fewer than 2 values."""
    a = np.asarray(values, dtype=float)
    if a.size < 2 or a.mean() == 0:
        return 0.0
    return float(a.std(ddof=1) / abs(a.mean()))


def bootstrap_median_ci(values: Sequence[float], seed: int = 1, level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the median."""
    a = np.asarray(values, dtype=float)
    if a.size < 2:
        m = float(a[0]) if a.size else math.nan
        return m, m
    rng = np.random.default_rng(seed)
    meds = np.median(rng.choice(a, size=(BOOTSTRAP_ROUNDS, a.size), replace=True), axis=1)
    tail = (1 - level) / 2 * 100
    return float(np.percentile(meds, tail)), float(np.percentile(meds, 100 - tail))


def bootstrap_ratio_ci(a: Sequence[float], b: Sequence[float], seed: int = 1,
                       level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of median(b) / median(a), resampling each side independently."""
    xa = np.asarray(a, dtype=float)
    xb = np.asarray(b, dtype=float)
    rng = np.random.default_rng(seed)
    ma = np.median(rng.choice(xa, size=(BOOTSTRAP_ROUNDS, xa.size), replace=True), axis=1)
    mb = np.median(rng.choice(xb, size=(BOOTSTRAP_ROUNDS, xb.size), replace=True), axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = mb / ma
    ratios = ratios[np.isfinite(ratios)]
    if ratios.size == 0:
        return math.nan, math.nan
    tail = (1 - level) / 2 * 100
    return float(np.percentile(ratios, tail)), float(np.percentile(ratios, 100 - tail))


@lru_cache(maxsize=None)
def _u_counts(m: int, n: int) -> tuple[int, ...]:
    """Number of arrangements giving each U = 0..m*n for samples of sizes m and n (no ties)."""
    if m == 0 or n == 0:
        return (1,)
    # f(u; m, n) = f(u - n; m - 1, n) + f(u; m, n - 1)
    left = _u_counts(m - 1, n)
    right = _u_counts(m, n - 1)
    out = [0] * (m * n + 1)
    for u, c in enumerate(left):
        out[u + n] += c
    for u, c in enumerate(right):
        out[u] += c
    return tuple(out)


def mann_whitney_u(a: Sequence[float], b: Sequence[float]) -> tuple[float, float]:
    """Two-sided Mann-Whitney U test: returns (U of a, p-value).

    Exact distribution when both samples have at most 20 values and there are no ties;
    otherwise the normal approximation with tie and continuity corrections.
    """
    m, n = len(a), len(b)
    if m == 0 or n == 0:
        return math.nan, 1.0
    pooled = sorted([(float(v), 0) for v in a] + [(float(v), 1) for v in b])
    ranks = [0.0] * len(pooled)
    tie_term = 0.0
    i = 0
    while i < len(pooled):
        j = i
        while j + 1 < len(pooled) and pooled[j + 1][0] == pooled[i][0]:
            j += 1
        avg = (i + j) / 2 + 1
        for k in range(i, j + 1):
            ranks[k] = avg
        t = j - i + 1
        tie_term += t ** 3 - t
        i = j + 1
    rank_sum_a = sum(r for r, (_, side) in zip(ranks, pooled) if side == 0)
    u_a = rank_sum_a - m * (m + 1) / 2
    if tie_term == 0 and m <= 20 and n <= 20:
        counts = _u_counts(m, n)
        total = sum(counts)
        u = int(round(u_a))
        low = sum(counts[: u + 1]) / total
        high = sum(counts[u:]) / total
        return u_a, min(1.0, 2 * min(low, high))
    mean_u = m * n / 2
    big_n = m + n
    var_u = m * n / 12 * ((big_n + 1) - tie_term / (big_n * (big_n - 1)))
    if var_u <= 0:
        return u_a, 1.0
    z = (abs(u_a - mean_u) - 0.5) / math.sqrt(var_u)
    p = math.erfc(max(z, 0.0) / math.sqrt(2))
    return u_a, min(1.0, p)


@dataclass
class Comparison:
    """B against A for one series of one probe."""

    median_a: float
    median_b: float
    ratio: float  # median_b / median_a
    ci_low: float
    ci_high: float
    p_value: float
    verdict: str  # same | faster | slower | ambiguous, from B's point of view
    n_a: int
    n_b: int
    threshold: float = THRESHOLD


def verdict(ratio: float, ci: tuple[float, float], p_value: float, lower_is_better: bool,
            n_a: int, n_b: int, threshold: float = THRESHOLD, alpha: float = ALPHA) -> str:
    """The rule used everywhere in these reports.

    - fewer than MIN_SAMPLES rounds on a side, or no finite ratio: ambiguous;
    - |ratio - 1| > threshold, p < alpha and the interval excludes 1: slower or faster
      (by `lower_is_better`);
    - |ratio - 1| <= threshold and (p >= alpha or the interval lies inside 1 +/- threshold): same;
    - anything else (a large change that is not significant, or a small significant one
      with a wide interval): ambiguous.
    """
    if n_a < MIN_SAMPLES or n_b < MIN_SAMPLES or not math.isfinite(ratio):
        return "ambiguous"
    change = ratio - 1.0
    excludes_one = ci[0] > 1.0 or ci[1] < 1.0
    if abs(change) > threshold and p_value < alpha and excludes_one:
        worse = change > 0 if lower_is_better else change < 0
        return "slower" if worse else "faster"
    inside = 1.0 - threshold <= ci[0] and ci[1] <= 1.0 + threshold
    if abs(change) <= threshold and (p_value >= alpha or inside):
        return "same"
    return "ambiguous"


def compare_samples(a: Sequence[float], b: Sequence[float], lower_is_better: bool = True,
                    threshold: float = THRESHOLD, seed: int = 1) -> Comparison:
    """Compares two sets of per-round samples (B against A)."""
    ma = median(a) if len(a) else math.nan
    mb = median(b) if len(b) else math.nan
    ratio = mb / ma if ma and math.isfinite(ma) and math.isfinite(mb) else math.nan
    if len(a) >= 2 and len(b) >= 2:
        ci = bootstrap_ratio_ci(a, b, seed=seed)
    else:
        ci = (ratio, ratio)
    _, p = mann_whitney_u(a, b)
    v = verdict(ratio, ci, p, lower_is_better, len(a), len(b), threshold)
    return Comparison(ma, mb, ratio, ci[0], ci[1], p, v, len(a), len(b), threshold)
