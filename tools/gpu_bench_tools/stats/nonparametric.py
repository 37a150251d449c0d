"""Statistics the tools need, each from scipy (imported here only when called) or the standard library.

- A Mann-Whitney U test per case, on that case's own values: its p-value never depends on which other
  cases are compared. The method is chosen per case: exact where there are no ties and the samples are
  small (n1 x n2 <= 400), the exact permutation distribution where there are ties and at most 10,000
  ways to split the values, else the normal approximation with the tie correction.
- Benjamini-Hochberg's adjusted p-values (q-values) over many cases' tests at once.
- The noise of a set of values: the relative half-width, in percent, of the distribution-free 95%
  confidence interval of their median (scipy.stats.quantile_test); fewer than six values cannot reach 95%,
  so their full range stands in (it covers the median with probability 1 - 2^(1-n), 94% for five).
"""

from __future__ import annotations

import math
import statistics
import warnings
from functools import lru_cache
from typing import Sequence

EXACT_MAX_PRODUCT = 400
PERMUTATION_MAX_SPLITS = 10_000


def smallest_p(n1: int, n2: int) -> float:
    """The smallest two-sided p-value a rank test can give n1 against n2 values (no ties)."""
    if n1 < 1 or n2 < 1:
        return 1.0
    # Integer true division: exact for any size, 0.0 where the value is below the smallest float (a float
    # numerator would first turn the count of splits into a float, which overflows past about 1e308).
    return min(1.0, 2 / math.comb(n1 + n2, n1))


def _method(a: Sequence[float], b: Sequence[float]) -> str:
    tied = len(set(a) | set(b)) < len(a) + len(b)
    if not tied and len(a) * len(b) <= EXACT_MAX_PRODUCT:
        return "exact"
    if tied and math.comb(len(a) + len(b), len(a)) <= PERMUTATION_MAX_SPLITS:
        return "permutation"
    return "asymptotic"


def u_test_pvalues(pairs: list[tuple[Sequence[float], Sequence[float]]]) -> list[tuple[float, str]]:
    """(two-sided p-value, method) of a Mann-Whitney U test per pair, each on its own values only.

    Pairs of the same sizes and method are computed in one vectorised call: with the method fixed per
    pair, a row's p-value is the same alone as in any batch.
    """
    if not pairs:
        return []
    import numpy as np
    from scipy.stats import PermutationMethod, mannwhitneyu

    out: list[tuple[float, str]] = [(1.0, "none")] * len(pairs)
    groups: dict[tuple[int, int, str], list[int]] = {}
    for i, (a, b) in enumerate(pairs):
        if len(a) and len(b):
            groups.setdefault((len(a), len(b), _method(a, b)), []).append(i)
    for (n1, n2, method), idx in groups.items():
        a = np.array([pairs[i][0] for i in idx], dtype=float)
        b = np.array([pairs[i][1] for i in idx], dtype=float)
        how = PermutationMethod(n_resamples=PERMUTATION_MAX_SPLITS) if method == "permutation" else method
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            p = np.atleast_1d(mannwhitneyu(a, b, axis=1, alternative="two-sided", method=how).pvalue)
        for j, i in enumerate(idx):
            out[i] = (float(p[j]) if math.isfinite(p[j]) else 1.0, method)
    return out


@lru_cache(maxsize=512)
def _median_ci_ranks(n: int) -> tuple[int, int]:
    """0-based ranks of the order statistics bounding the 95% confidence interval of a median of n values."""
    import numpy as np
    from scipy.stats import quantile_test

    ci = quantile_test(np.arange(n, dtype=float), q=(n - 1) / 2, p=0.5).confidence_interval(0.95)
    if not (math.isfinite(ci.low) and math.isfinite(ci.high)):
        return 0, n - 1
    return int(ci.low), int(ci.high)


def median_ci(values: Sequence[float]) -> tuple[float, float] | None:
    """The 95% confidence interval of the median (its bounding order statistics; every value's range where
    too few values reach 95%); None under two finite values."""
    vals = sorted(v for v in values if math.isfinite(v))
    if len(vals) < 2:
        return None
    lo, hi = _median_ci_ranks(len(vals))
    return vals[lo], vals[hi]


def noise_pct(values: Sequence[float]) -> float | None:
    """Relative half-width (percent) of the 95% confidence interval of the median; None under two values."""
    ci = median_ci(values)
    if ci is None:
        return None
    mid = statistics.median(v for v in values if math.isfinite(v))
    if not mid:
        return None
    return (ci[1] - ci[0]) / 2.0 / abs(mid) * 100.0


def gmean(values: Sequence[float]) -> float | None:
    """Geometric mean of positive values (None where there are none)."""
    vals = [v for v in values if v > 0 and math.isfinite(v)]
    if not vals:
        return None
    return statistics.geometric_mean(vals)


def bh_adjusted(p_values: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg's q-value of each p-value among all of them (scipy.stats.false_discovery_control):
    calling the cases whose q is below alpha calls, of those, a share alpha by chance at most."""
    if not p_values:
        return []
    from scipy.stats import false_discovery_control

    return [float(q) for q in false_discovery_control([min(max(p, 0.0), 1.0) for p in p_values], method="bh")]
