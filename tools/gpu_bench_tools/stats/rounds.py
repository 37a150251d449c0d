"""How a case's rounds make its figure, its interval and a comparison's verdict (docs/methodology.md, "Rounds").

gpu_bench measures a case in R rounds, each a process of its own, and works on the logarithm of each round's
median (harness/measure/stats.cpp does the same in C++; `tests/data/round_model.json` holds figures both must
reproduce):
- the figure is, from five rounds, the mean of their fastest half (CENTER, below), which rounds slowed by other
  traffic cannot move; under five rounds it is their median;
- a round's variance s^2 (own_spread: R - 1 degrees of freedom under five rounds, Yuen's winsorized estimate
  from five on) is moderated by a prior (s0, d0) fitted by empirical Bayes
  (Smyth 2004, limma's fitFDist) over the cases of its family: s0 per spread group (the family, the values of
  its spread axes, the band of its size), one d0 per family from how far its cases' variances spread around
  their groups' beyond what their own degrees of freedom explain;
- noise_pct is a 95% prediction interval for the next run's median of as many rounds, detectable_pct the
  critical difference of the comparison's test against a run like it (never under the minimum effect);
- two files are compared by a moderated Welch test on the two figures: each side's variance is
  c_R * s_moderated^2 (c_R the variance of that center of R normal values), with Welch-Satterthwaite's degrees
  of freedom.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Sequence

from ..reading.families import DEFAULT_SPREAD_AXES
from ..reading.cases import TRIMMED_PER, round_center, rounds_kept, rounds_trimmed

# No smaller change is called faster or slower (compare's --min-effect default): between files with rounds, as
# the A/A runs chose it; between files without (one process a side, whose spread between runs is unknown
# where no between-run floor speaks for the family), twice that.
MIN_EFFECT_PCT = 1.0
MIN_EFFECT_ONE_ROUND_PCT = 2.0
ALPHA = 0.05
MIN_REL_SD = 1e-5  # the smallest spread of a round's logarithm a variance is taken to have
MIN_PRIOR_CASES = 3  # a spread group of fewer cases gets no prior
MIN_PRIOR_RESIDUALS = 6  # a family with fewer cases in groups of two or more gets none
UNBOUNDED_DOF = 1e6
SMALL_BYTES = 64 << 10
LARGE_BYTES = 1 << 20

# How a case's rounds make its figure: "fastest_half", from five rounds the mean of the fastest half of them (three
# of five, four of eight), which rounds a busy link slowed cannot move however many they are, and their median
# below five; the candidates judged beside it (aa/models.py): "trimmed25" (a quarter at each end, gpu_bench's
# before), "trimmed" (a fifth), "median", "mean".
CENTER = "fastest_half"

# The variance of the median of n standard normal values, by numerical integration over the order statistics'
# densities (n = 1 to 16); pi / 2n past that.
_MEDIAN_VARIANCE = (1.0, 0.5, 0.448671, 0.298200, 0.286834, 0.214743, 0.210447, 0.168181,
                    0.166101, 0.138326, 0.137162, 0.117516, 0.116799, 0.102168, 0.101695, 0.090375)
# The variance of the mean of n standard normal values less rounds_trimmed(n) at each end (n = 1 to 20; the
# plain mean below three): exact to n = 4, where it is the median, then from 2e7 draws each (within 1e-4).
_TRIMMED_VARIANCE = (1.0, 0.5, 0.448671, 0.298200, 0.2271, 0.1840, 0.1549, 0.1339, 0.1179, 0.1133,
                     0.1016, 0.0921, 0.0842, 0.0776, 0.0757, 0.0703, 0.0656, 0.0615, 0.0579, 0.0568)
# The same for a quarter dropped at each end ("trimmed25", gpu_bench's center), from 4e6 draws each.
_TRIMMED25_VARIANCE = (1.0, 0.5, 0.448671, 0.298200, 0.2273, 0.1839, 0.1549, 0.1476, 0.1282, 0.1132,
                       0.1017, 0.0986, 0.0895, 0.0820, 0.0757, 0.0740, 0.0689, 0.0642, 0.0603, 0.0593)

# "fastest_half" (gpu_bench's center): the variance of the mean of the fastest ceil(n / 2) of n standard normal
# values, n = 5 to 20, from 4e6 draws each; 1.36 / n past that (the median's below five).
_FASTEST_HALF_VARIANCE = (0.2453, 0.2242, 0.1797, 0.1683, 0.1418, 0.1347, 0.1173, 0.1126, 0.1001, 0.0966,
                          0.0872, 0.0845, 0.0773, 0.0753, 0.0694, 0.0677)


def median_variance_factor(n: int) -> float:
    if n < 1:
        raise ValueError("a median needs at least one value")
    return _MEDIAN_VARIANCE[n - 1] if n <= len(_MEDIAN_VARIANCE) else math.pi / (2.0 * n)


def variance_factor(n: int, center: str = CENTER) -> float:
    """The variance of `center` of n standard normal values."""
    if n < 1:
        raise ValueError("a center needs at least one value")
    if center == "median":
        return median_variance_factor(n)
    if center == "mean":
        return 1.0 / n
    if center == "fastest_half":  # below five rounds the center is their median
        return (_FASTEST_HALF_VARIANCE[n - 5] if n <= 20 else 1.36 / n) if n >= 5 else median_variance_factor(n)
    if center == "trimmed25":
        return _TRIMMED25_VARIANCE[n - 1] if n <= len(_TRIMMED25_VARIANCE) else 1.19 / n
    return _TRIMMED_VARIANCE[n - 1] if n <= len(_TRIMMED_VARIANCE) else 1.14 / n


def center_of(times: Sequence[float], center: str = CENTER) -> float:
    """`center` of the rounds' times: "fastest_half", "trimmed25", "trimmed", "median" or "mean"."""
    return round_center(list(times), center)


def size_band(nbytes: int) -> str:
    """Where a copy's time is mostly fixed costs (small), or the link's throughput (large)."""
    return "small" if nbytes < SMALL_BYTES else "medium" if nbytes < LARGE_BYTES else "large"


def spread_group(name: str, spread_axes: Iterable[str] = DEFAULT_SPREAD_AXES) -> str:
    """The group a case shares its spread between processes with: its family, the values of the family's
    spread axes it carries and its size band, e.g. Transfer/dir:d2h/mem:pinned/size:large (as gpu_bench's
    spread_group: the axes in the name's order)."""
    parts = name.removesuffix("/manual_time").split("/")
    axes = set(spread_axes)
    out = [parts[0]]
    for part in parts[1:]:
        key, sep, value = part.partition(":")
        if not sep:
            continue
        if key == "bytes":
            try:
                out.append("size:" + size_band(int(value)))
            except ValueError:
                continue
        elif key in axes:
            out.append(part)
    return "/".join(out)


@dataclass(frozen=True)
class Prior:
    rel_sd: float  # s0: the standard deviation of a round's logarithm typical of the case's group
    dof: float  # d0: the degrees of freedom it carries; 0 for none

    @property
    def usable(self) -> bool:
        return self.dof > 0 and self.rel_sd > 0


NO_PRIOR = Prior(0.0, 0.0)


# The degrees of freedom of own_spread's winsorized estimate for n = 5 to 20 rounds of normal values: those of the
# chi-square with its first two moments (2 m^2 / v over 2e6 draws each), fewer than Yuen's h - 1, on which
# intervals held the next run's figure 93.8% of the time rather than 95%: a fifth winsorized ("trimmed").
_WINSORIZED_DOF = (1.60, 2.50, 3.43, 4.37, 5.31, 4.00, 4.90, 5.80, 6.73, 7.67, 6.37, 7.26, 8.18, 9.11, 10.01, 8.75)
# The same for a quarter winsorized at each end ("trimmed25", gpu_bench's winsorized_dof), from 4e6 draws each.
_WINSORIZED25_DOF = (1.60, 2.50, 3.43, 2.24, 3.11, 3.99, 4.89, 3.73, 4.60, 5.47, 6.37, 5.22, 6.09, 6.96, 7.84, 6.71)
# The same for "fastest_half" (gpu_bench's winsorized_dof): its slower half winsorized to the slowest round it keeps, from 4e6
# draws each (the estimate's mean came to 1.004-1.007 of the variance it estimates).
_FASTEST_HALF_DOF = (1.68, 1.61, 2.48, 2.41, 3.28, 3.21, 4.09, 4.01, 4.89, 4.81, 5.70, 5.62, 6.48, 6.40, 7.28, 7.21)


def winsorized_dof(n: int, center: str = CENTER) -> float:
    if n < 5:
        raise ValueError("rounds are winsorized from five on")
    if center == "fastest_half":
        return _FASTEST_HALF_DOF[n - 5] if n <= 20 else 0.81 * rounds_kept(n) - 0.8
    table = _WINSORIZED25_DOF if center == "trimmed25" else _WINSORIZED_DOF
    return table[n - 5] if n <= 20 else 0.73 * (n - 2 * rounds_trimmed(n, TRIMMED_PER.get(center, 5)))


def own_spread(times: Sequence[float], winsorize: bool = True, center: str = CENTER) -> tuple[float, float]:
    """(variance of one round's logarithm, degrees of freedom) from two or more positive times, as gpu_bench's
    rounds_own_spread: under five rounds (or without `winsorize`) their sample variance on R - 1; from five on,
    Yuen's: the rounds winsorized by g = rounds_trimmed(R) at each end give the trimmed mean's variance,
    (R - 1) s_w^2 / (h (h - 1)) with h = R - 2g, taken back to one round's over the center's variance factor,
    on winsorized_dof(R) degrees of freedom."""
    logs = sorted(math.log(t) for t in times)
    n = len(logs)
    if center == "fastest_half" and winsorize and n >= 5:
        # The slower half set to the slowest round the center keeps (h of them).
        h = rounds_kept(n)
        w = logs[:h] + [logs[h - 1]] * (n - h)
        return (n - 1) * statistics.variance(w) / (h * (h - 1)) / variance_factor(n, center), winsorized_dof(n, center)
    g = rounds_trimmed(n, TRIMMED_PER[center]) if winsorize and n >= 5 and center in TRIMMED_PER else 0
    if g == 0:
        return statistics.variance(logs), n - 1.0
    w = [logs[g]] * g + logs[g:n - g] + [logs[n - 1 - g]] * g
    h = n - 2 * g
    return ((n - 1) * statistics.variance(w) / (h * (h - 1)) / variance_factor(n, center),
            winsorized_dof(n, center))


def log_variance(times: Sequence[float], floor_rel: float = 0.0, winsorize: bool = True,
                 center: str = CENTER) -> tuple[float, float]:
    """own_spread's (variance, degrees of freedom), the variance never below floor_rel^2 or MIN_REL_SD^2."""
    variance, dof = own_spread(times, winsorize, center)
    least = max(floor_rel, MIN_REL_SD)
    return max(variance, least * least), dof


def _trigamma_inverse(y: float) -> float:
    from scipy.optimize import brentq
    from scipy.special import polygamma

    # trigamma falls from infinity to 0 over (0, inf): bracket its root, then solve.
    lo, hi = 1e-8, 1.0
    while float(polygamma(1, hi)) > y:
        hi *= 2.0
    return float(brentq(lambda x: float(polygamma(1, x)) - y, lo, hi, xtol=1e-12, rtol=1e-12))


def fit_priors(cases: Iterable[tuple[str, float, int]]) -> dict[str, Prior]:
    """Smyth's prior for the cases of one family, each (spread group, variance, degrees of freedom): s0 per
    group of at least MIN_PRIOR_CASES cases, one d0 for the family, capped per group at the degrees of
    freedom its own cases hold. {} where the family holds fewer than MIN_PRIOR_RESIDUALS cases in groups of
    two or more."""
    import numpy as np
    from scipy.special import digamma, polygamma

    kept = [(g, v, d) for g, v, d in cases if d >= 1 and v > 0]
    if not kept:
        return {}
    names = [g for g, _, _ in kept]
    dof = np.array([d for _, _, d in kept], dtype=float)
    # Each case's log variance, corrected for its expectation under its degrees of freedom: mean ln s0^2 -
    # digamma(d0/2) + ln(d0/2), variance trigamma(d/2) + trigamma(d0/2) where sigma^2 follows the prior.
    e = np.log([v for _, v, _ in kept]) - digamma(dof / 2.0) + np.log(dof / 2.0)
    tri = polygamma(1, dof / 2.0)
    members: dict[str, list[int]] = {}
    for i, g in enumerate(names):
        members.setdefault(g, []).append(i)
    means, residuals, trigammas, count = {}, 0.0, 0.0, 0
    for g, idx in members.items():
        means[g] = float(e[idx].mean())
        if len(idx) >= 2:
            residuals += float(((e[idx] - means[g]) ** 2).sum()) * len(idx) / (len(idx) - 1)
            trigammas += float(tri[idx].sum())
            count += len(idx)
    if count < MIN_PRIOR_RESIDUALS:
        return {}
    excess = (residuals - trigammas) / count
    d0 = min(UNBOUNDED_DOF, 2.0 * _trigamma_inverse(excess)) if excess > 0 else UNBOUNDED_DOF
    shift = float(digamma(d0 / 2.0)) - math.log(d0 / 2.0)
    return {g: Prior(math.exp((means[g] + shift) / 2.0), min(d0, float(dof[idx].sum())))
            for g, idx in members.items() if len(idx) >= MIN_PRIOR_CASES}


@dataclass(frozen=True)
class RoundFigure:
    center: float  # the rounds' center (center_of), in their unit
    half_width: float  # relative: 0.01 is 1%
    detectable: float  # relative
    rel_sd: float  # the moderated standard deviation of a round's logarithm
    dof: float  # its degrees of freedom; 0 for one round


@lru_cache(maxsize=4096)
def t975(dof: float) -> float:
    """Student's t quantile (0.975) for `dof` degrees of freedom: the cases of one spread group share theirs."""
    from scipy.stats import t

    return float(t.ppf(0.975, dof))


def moderated(times: Sequence[float], prior: Prior = NO_PRIOR, winsorize: bool = True,
              center: str = CENTER) -> tuple[float, float]:
    """(moderated variance of a round's logarithm, its degrees of freedom) of two or more rounds."""
    variance, own = own_spread(times, winsorize, center)
    if prior.usable:
        return (prior.dof * prior.rel_sd ** 2 + own * variance) / (prior.dof + own), prior.dof + own
    return variance, own


def moderated_plain(times: Sequence[float], prior: Prior = NO_PRIOR) -> tuple[float, float]:
    """`moderated` on the rounds' plain sample variance, never winsorized (the candidate models')."""
    return moderated(times, prior, winsorize=False)


def combine(times: Sequence[float], floor: float = 0.0, prior: Prior = NO_PRIOR,
            min_effect_pct: float = MIN_EFFECT_PCT, center: str = CENTER, spread=None) -> RoundFigure:
    """A case's figure from its rounds, as gpu_bench's combine_rounds makes it; `floor` (relative) is what one
    round's samples and the timer resolve. `spread`: as moderated_test's."""
    mid = center_of(times, center)
    floor = max(0.0, floor)
    if len(times) < 2:
        return RoundFigure(mid, floor, max(floor, min_effect_pct / 100.0), 0.0, 0.0)
    variance, dof = (spread or moderated)(times, prior)
    spread = math.sqrt(2.0 * variance_factor(len(times), center) * variance)
    return RoundFigure(mid, max(floor, math.expm1(t975(dof) * spread)),
                       max(floor, math.expm1(t975(2.0 * dof) * spread), min_effect_pct / 100.0),
                       math.sqrt(variance), dof)


def moderated_test(a: Sequence[float], a_prior: Prior, b: Sequence[float], b_prior: Prior,
                   center: str = CENTER, spread=None) -> tuple[float, float]:
    """(log(center b / center a), two-sided p) of the moderated Welch test on two sides' rounds (two or more
    each). Where neither side varies, the sides differ for certain (p = 0) or not at all (p = 1). `spread`:
    what gives a side's (variance, degrees of freedom) in place of `moderated` (a candidate model's)."""
    from scipy.stats import t

    spread = spread or moderated
    diff = math.log(center_of(b, center)) - math.log(center_of(a, center))
    (va, da), (vb, db) = spread(a, a_prior), spread(b, b_prior)
    sa, sb = variance_factor(len(a), center) * va, variance_factor(len(b), center) * vb
    se2 = sa + sb
    if not se2 > 0:
        return diff, (1.0 if abs(diff) < 1e-12 else 0.0)
    dof = se2 ** 2 / (sa ** 2 / da + sb ** 2 / db)
    return diff, float(2.0 * t.sf(abs(diff) / math.sqrt(se2), dof))


def fit_file_priors(rounds_by_case: dict[str, Sequence[float]], spread_axes_of=lambda family: DEFAULT_SPREAD_AXES,
                    tick_s: float = 0.0, winsorize: bool = True, center: str = CENTER) -> dict[str, Prior]:
    """The prior each case of a file would have had in gpu_bench's last round: fitted per family on every
    round but the last (the earlier rounds' processes), for a file that does not carry its own."""
    by_family: dict[str, list[tuple[str, str, float, int]]] = {}
    for name, times in rounds_by_case.items():
        earlier = list(times[:-1])
        if len(earlier) < 2:
            continue
        family = name.split("/", 1)[0]
        group = spread_group(name, spread_axes_of(family))
        median = statistics.median(earlier)
        variance, dof = log_variance(earlier, tick_s / median / 2.0 if median > 0 else 0.0, winsorize, center)
        by_family.setdefault(family, []).append((name, group, variance, dof))
    out: dict[str, Prior] = {}
    for members in by_family.values():
        priors = fit_priors((g, v, d) for _, g, v, d in members)
        for name, group, _, _ in members:
            out[name] = priors.get(group, NO_PRIOR)
    for name in rounds_by_case:
        out.setdefault(name, NO_PRIOR)
    return out
