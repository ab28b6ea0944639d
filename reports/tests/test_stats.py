"""Mann-Whitney U, bootstrap intervals and the same/faster/slower/ambiguous rule."""

from __future__ import annotations

import random

import pytest

from cuparity_reports.stats import compare_samples, mann_whitney_u


def noisy(seed: int, centre: float, spread: float, n: int = 20) -> list[float]:
    rng = random.Random(seed)
    return [centre * (1 + rng.gauss(0, spread)) for _ in range(n)]


def test_mann_whitney_exact_small_sample() -> None:
    # Completely separated samples of 5 and 5: exact two-sided p = 2 / C(10, 5) = 2/252.
    u, p = mann_whitney_u([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])
    assert u == 0
    assert p == pytest.approx(2 / 252)
    _, p_same = mann_whitney_u([1, 3, 5, 7, 9], [2, 4, 6, 8, 10])
    assert p_same > 0.5


def test_mann_whitney_normal_with_ties() -> None:
    _, p = mann_whitney_u([1.0] * 10 + [2.0] * 10, [1.0] * 10 + [2.0] * 10)
    assert p == pytest.approx(1.0)
    _, p = mann_whitney_u(noisy(1, 100, 0.01, 30), noisy(2, 110, 0.01, 30))
    assert p < 1e-6


def test_slower_and_faster() -> None:
    a = noisy(1, 1000, 0.01)
    assert compare_samples(a, noisy(2, 1200, 0.01)).verdict == "slower"
    assert compare_samples(a, noisy(3, 800, 0.01)).verdict == "faster"
    # higher is better (bandwidth): a lower value is slower
    assert compare_samples(a, noisy(4, 800, 0.01), lower_is_better=False).verdict == "slower"


def test_same_when_within_threshold() -> None:
    c = compare_samples(noisy(1, 1000, 0.01), noisy(2, 1010, 0.01))
    assert c.verdict == "same"
    assert c.ci_low <= c.ratio <= c.ci_high


def test_a_a_reads_same_or_ambiguous() -> None:
    for seed in range(5):
        a = noisy(seed, 2150, 0.02)
        assert compare_samples(a, list(a)).verdict == "same"
        assert compare_samples(a, noisy(seed + 100, 2150, 0.02)).verdict in ("same", "ambiguous")


def test_ambiguous_when_noisy_or_tiny() -> None:
    # a 15% shift buried in 40% noise with few rounds: not significant, not within threshold
    a = [800.0, 900, 1000, 1100, 1200, 1300]
    b = [900.0, 1050, 1100, 1200, 1300, 1400]  # median +9.5%, heavy overlap
    c = compare_samples(a, b)
    assert c.ratio > 1.05 and c.p_value > 0.05
    assert c.verdict == "ambiguous"
    assert compare_samples([1.0, 2.0], [5.0, 6.0]).verdict == "ambiguous"
