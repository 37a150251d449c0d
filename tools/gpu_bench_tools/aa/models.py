"""Candidate models of a case's interval, judged on A/A runs: `gpu-bench-aa models DIR... [--centers]`.

Each model says, from one run's rounds alone, what a case's figure is, the interval the next run's figure falls
in, and how two runs are compared. Re-reading committed A/A runs (their round_times_s) with each one shows what
it would have promised and called: coverage of the next run, false calls between identical runs, and how many
pinned and registered copies of 1 MiB and more it calls slower when one run of a pair is made slower. The model
gpu_bench ships is `groups-fastest-half`; the others are the ones tried beside it (docs/methodology.md).
"""

from __future__ import annotations

import math
import statistics
import warnings
from dataclasses import dataclass, field
from typing import Callable, Sequence

from ..reading.results import BenchmarkFile
from ..stats import rounds as model
from .figures import is_detection_copy

SLOWDOWNS = (2.0, 3.0, 5.0, 10.0)


@dataclass(frozen=True)
class Model:
    name: str
    what: str
    center: str  # 'trimmed' (a fifth off each end), 'trimmed25' (a quarter), 'fastest_half', 'median' or 'mean'
    grouping: str  # 'spread' (family, spread axes, size band), 'family' (family and size band), 'none', 'pooled'
    detectable_rule: bool = True  # a change must be at least each side's detectable_pct
    min_effect_pct: float = model.MIN_EFFECT_PCT
    winsorize: bool = False  # a case's own spread over five rounds or more from its winsorized rounds (Yuen)


MODELS = (
    Model("family-floor", "the mean of the rounds; the interval never narrower than the case's spread pooled with "
          "its family's typical spread; Welch's test on the rounds, 2% minimum effect (gpu_bench before)",
          "mean", "pooled", detectable_rule=False, min_effect_pct=2.0),
    Model("own-rounds", "the median of the rounds, their own spread alone (R - 1 degrees of freedom)",
          "median", "none"),
    Model("family-median", "the median; the spread moderated by a prior over the family's cases of its size band",
          "median", "family"),
    Model("groups-mean", "the mean of the rounds; the spread moderated by a prior over its spread group",
          "mean", "spread"),
    Model("groups-median", "the median of the rounds; the spread moderated by a prior over its spread group",
          "median", "spread"),
    Model("groups-trimmed", "the mean of the rounds less the fastest and the slowest; the spread moderated by a "
          "prior over its spread group", "trimmed", "spread"),
    Model("groups-trimmed-test-only", "as groups-trimmed, but a change is called on the test and the minimum "
          "effect alone, not also each side's detectable_pct", "trimmed", "spread", detectable_rule=False),
    Model("groups-trimmed-winsorized", "as groups-trimmed, but a case of five rounds or more takes its own spread "
          "from its rounds winsorized (the fastest and the slowest set to their neighbours: Yuen's estimate of "
          "the trimmed mean's variance, on the degrees of freedom of a chi-square with its moments), so one round far "
          "off does not widen it; a fifth of the rounds trimmed and winsorized at each end from ten on "
          "(gpu_bench until its center became trimmed25)", "trimmed", "spread", winsorize=True),
    Model("groups-quarter-winsorized", "as groups-trimmed-winsorized, but a quarter of the rounds trimmed and "
          "winsorized at each end (two of eight), so two rounds a burst slowed neither move the figure nor widen it "
          "(gpu_bench until its center became fastest_half)",
          "trimmed25", "spread", winsorize=True),
    Model("groups-fastest-half", "from five rounds, the mean of the fastest half of them, which rounds a busy link "
          "slowed cannot move however many they are; its spread from the rounds with the slower half set to the "
          "slowest one kept, on the degrees of freedom of a chi-square with its moments; the median below five "
          "(gpu_bench now)", "fastest_half", "spread", winsorize=True),
)


def _spread(m: Model):
    """What gives a side's (variance, degrees of freedom) under model `m`."""
    if not m.winsorize:
        return model.moderated_plain
    return lambda times, prior: model.moderated(times, prior, True, m.center)


@dataclass
class Judged:
    """One case of one run under a model."""
    rounds: list[float]
    center: float
    half_width: float  # relative
    detectable: float  # relative
    prior: model.Prior
    tick_rel: float


@dataclass
class ModelResult:
    model: Model
    covered: int = 0
    pairs: int = 0
    called: int = 0
    compared: int = 0
    detection: dict[float, list[int]] = field(default_factory=dict)  # pct -> [later slowed, earlier slowed, cases]
    detection_noise: list[float] = field(default_factory=list)
    detection_detectable: list[float] = field(default_factory=list)

    def rate(self, pct: float, earlier: bool) -> float:
        later_n, earlier_n, n = self.detection.get(pct, [0, 0, 0])
        return (earlier_n if earlier else later_n) / n if n else math.nan


def drop_extra_rounds(f: BenchmarkFile) -> None:
    """Each case of `f` as if it had taken no extra rounds: its first gpu_bench.link_rounds - 1 rounds (the
    rounds before the extra ones, in the order they ran) and its last. A file without that key is left as is."""
    try:
        planned = int(f.fact("gpu_bench.link_rounds") or 0)
    except ValueError:
        return
    if planned < 2:
        return
    for case in f.cases.values():
        if case.samples and case.samples[0].round_times_s and len(case.samples[0].round_times_s) > planned:
            times = case.samples[0].round_times_s
            case.samples[0].round_times_s = list(times[:planned - 1]) + [times[-1]]


def _rounds_of(f: BenchmarkFile) -> dict[str, list[float]]:
    out = {}
    for key, case in f.cases.items():
        d = f.descriptor(case.family)
        if not case.ok or (d is not None and d.headline_kind not in ("rate", "time")):
            continue
        times = case.samples[0].round_times_s if case.samples else None
        if times and len(times) >= 2 and all(t > 0 for t in times):
            out[key] = list(times)
    return out


def _family_pooled_sd(rounds: dict[str, list[float]]) -> dict[str, float]:
    """Per family, the typical relative sd of its earlier rounds (the median variance scaled to a variance
    estimate), as gpu_bench pooled it before spread groups."""
    from scipy.stats import chi2

    by_family: dict[str, list[list[float]]] = {}
    for key, times in rounds.items():
        by_family.setdefault(key.split("/", 1)[0], []).append(times[:-1])
    out = {}
    for family, cases in by_family.items():
        n = min(len(c) for c in cases)
        variances = [statistics.variance(c[:n]) / statistics.fmean(c[:n]) ** 2 for c in cases if n >= 2]
        if len(variances) >= 3:
            out[family] = math.sqrt(statistics.median(variances) * (n - 1) / float(chi2.median(n - 1)))
    return out


def judge_run(f: BenchmarkFile, m: Model) -> dict[str, Judged]:
    rounds = _rounds_of(f)
    tick = f.event_tick_s()

    def axes_of(family: str):
        return () if m.grouping == "family" else f.spread_axes(family)

    priors = (model.fit_file_priors(rounds, axes_of, tick, m.winsorize, m.center)
              if m.grouping in ("spread", "family") else {})
    pooled = _family_pooled_sd(rounds) if m.grouping == "pooled" else {}
    out = {}
    for key, times in rounds.items():
        center = model.center_of(times, m.center)
        tick_rel = tick / center if center > 0 else 0.0
        prior = priors.get(key, model.NO_PRIOR)
        if m.grouping == "pooled":
            half, detectable = _pooled_interval(times, pooled.get(key.split("/", 1)[0], 0.0), tick_rel)
        else:
            fig = model.combine(times, tick_rel, prior, m.min_effect_pct, m.center, _spread(m))
            half, detectable = fig.half_width, fig.detectable
        out[key] = Judged(times, center, half, detectable, prior, tick_rel)
    return out


def _pooled_interval(times: Sequence[float], family_sd: float, tick_rel: float) -> tuple[float, float]:
    n = len(times)
    mean = statistics.fmean(times)
    own = statistics.stdev(times) / mean
    half = model.t975(n - 1) * own * math.sqrt(2.0 / n)
    if family_sd > 0:
        pooled = math.sqrt((own ** 2 + family_sd ** 2) / 2.0)
        half = max(half, model.t975(2 * (n - 1)) * pooled * math.sqrt(2.0 / n))
    return max(half, tick_rel), max(half, tick_rel)


def _called(m: Model, a: Judged, b: Judged, slower_by: float = 0.0) -> int:
    """+1 when run b (made `slower_by` percent slower) is called slower than a, -1 faster, 0 neither: compare's
    verdict on the model's test, the timer's tick and (where the model has the rule) each side's detectable."""
    from scipy.stats import ttest_ind

    from ..compare.verdicts import verdict

    rb = [t * (1.0 + slower_by / 100.0) for t in b.rounds]
    if m.grouping == "pooled":
        la, lb = [math.log(t) for t in a.rounds], [math.log(t) for t in rb]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # rounds that agree to the last digit: p is then 0 or 1, below
            p = float(ttest_ind(la, lb, equal_var=False).pvalue)
        if not math.isfinite(p):
            p = 1.0 if abs(statistics.fmean(la) - statistics.fmean(lb)) < 1e-12 else 0.0
    else:
        _, p = model.moderated_test(a.rounds, a.prior, rb, b.prior, m.center, _spread(m))
    least = max(a.tick_rel, b.tick_rel, *((a.detectable, b.detectable) if m.detectable_rule else ()))
    speed = a.center / (b.center * (1.0 + slower_by / 100.0))  # > 1: b faster, as compare's speed of a time
    return {"slower": 1, "faster": -1}.get(verdict(speed, p, model.ALPHA, m.min_effect_pct, 100.0 * least), 0)


def judge_set(files: list[BenchmarkFile], m: Model, slowdowns: Sequence[float] = SLOWDOWNS) -> ModelResult:
    """Consecutive runs of one command on one machine, under model `m`."""
    res = ModelResult(m, detection={float(p): [0, 0, 0] for p in slowdowns})
    judged = [judge_run(f, m) for f in files]
    for f, a, b in zip(files, judged, judged[1:]):
        for key, ja in a.items():
            jb = b.get(key)
            if jb is None:
                continue
            res.pairs += 1
            res.covered += abs(math.log(jb.center / ja.center)) <= math.log1p(ja.half_width)
            res.compared += 1
            res.called += _called(m, ja, jb) != 0
            if is_detection_copy(f, f.cases[key]):
                res.detection_noise.append(100.0 * ja.half_width)
                res.detection_detectable.append(100.0 * ja.detectable)
                for pct, counts in res.detection.items():
                    counts[0] += _called(m, ja, jb, pct) == 1
                    counts[1] += _called(m, jb, ja, pct) == 1
                    counts[2] += 1
    return res


def render(sets: list[tuple[str, list[ModelResult]]], slowdowns: Sequence[float] = SLOWDOWNS) -> str:
    def pct(x: float) -> str:
        return "n/a" if math.isnan(x) else f"{100.0 * x:.1f}%"

    lines = ["Models of a case's interval, judged on A/A runs (consecutive runs of one set; detection: the later "
             "run slowed / the earlier run slowed, pinned and registered copies of 1 MiB and more)"]
    for m in MODELS:
        lines.append(f"  {m.name}: {m.what}")
    for label, results in sets:
        lines.append(f"{label}:")
        head = f"  {'model':24s} {'coverage':>9s} {'false':>6s} " + " ".join(
            f"{p:g}% slower".rjust(14) for p in slowdowns) + "  noise/detectable (copies)"
        lines.append(head)
        for r in results:
            cov = r.covered / r.pairs if r.pairs else math.nan
            fc = r.called / r.compared if r.compared else math.nan
            det = " ".join(f"{pct(r.rate(p, False))}/{pct(r.rate(p, True))}".rjust(14) for p in slowdowns)
            noise = statistics.median(r.detection_noise) if r.detection_noise else math.nan
            detect = statistics.median(r.detection_detectable) if r.detection_detectable else math.nan
            lines.append(f"  {r.model.name:24s} {pct(cov):>9s} {pct(fc):>6s} {det}  {noise:.2f}%/{detect:.2f}%")
    return "\n".join(lines) + "\n"


# Centers of a case's rounds, set against the one gpu_bench uses: how far each moves between two runs of one
# machine says how sharp a figure it could carry, before any interval is built on it.
CENTERS = (
    ("trimmed25", "the mean of the rounds less a quarter at each end (gpu_bench's before fastest_half)"),
    ("median", "the median of the rounds"),
    ("fastest_half", "the mean of the fastest half of five rounds or more (the middle one counted where they are "
     "odd); their median below five (gpu_bench now)"),
    ("fastest", "the fastest round"),
)


def center_value(times: Sequence[float], center: str) -> float:
    """A center of round times: the CENTERS' own, else the rounds module's (trimmed25, median, ...)."""
    if center == "fastest":
        return min(times)
    return model.center_of(list(times), center)


@dataclass
class CenterAgreement:
    center: str
    moves_pct: list[float]  # |log(later / earlier)| in percent, one per detection copy and consecutive pair

    def quantile(self, q: float) -> float:
        """The move at quantile q, one of the moves (the higher where q falls between two)."""
        import numpy

        return float(numpy.quantile(self.moves_pct, q, method="higher")) if self.moves_pct else math.nan


def center_agreement(files: list[BenchmarkFile], centers: Sequence[str] = tuple(c for c, _ in CENTERS)
                     ) -> list[CenterAgreement]:
    """How far each center of the pinned and registered copies of 1 MiB and more moves between consecutive
    runs of one set."""
    rounds = [_rounds_of(f) for f in files]
    out = []
    for c in centers:
        moves = []
        for f, a, b in zip(files, rounds, rounds[1:]):
            for key, ta in a.items():
                tb = b.get(key)
                if tb is not None and is_detection_copy(f, f.cases[key]):
                    moves.append(100.0 * abs(math.log(center_value(tb, c) / center_value(ta, c))))
        out.append(CenterAgreement(c, moves))
    return out


def render_centers(sets: list[tuple[str, list[CenterAgreement]]]) -> str:
    lines = ["How far a center of a copy's rounds moves between consecutive runs of one set (pinned and "
             "registered copies of 1 MiB and more; |log ratio|, percent)"]
    for name, what in CENTERS:
        lines.append(f"  {name}: {what}")
    for label, results in sets:
        lines.append(f"{label}:")
        lines.append(f"  {'center':14s} {'copies':>7s} {'median':>7s} {'90th':>7s} {'largest':>8s}")
        for r in results:
            lines.append(f"  {r.center:14s} {len(r.moves_pct):7d} {r.quantile(0.5):6.2f}% {r.quantile(0.9):6.2f}% "
                         f"{r.quantile(1.0):7.2f}%")
    return "\n".join(lines) + "\n"


def judge_sets(sets: list[tuple[str, list[BenchmarkFile]]],
               models: Sequence[Model] = MODELS,
               progress: Callable[[str], None] | None = None) -> list[tuple[str, list[ModelResult]]]:
    out = []
    for label, files in sets:
        if progress:
            progress(label)
        out.append((label, [judge_set(files, m) for m in models]))
    return out
