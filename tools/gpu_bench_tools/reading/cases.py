"""A case of a benchmark file once read: its repetitions, aggregates and problems; how its rounds make its
figure; and what a metric's name says of its unit and direction."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

from .names import CaseName

TIME_UNIT_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
TIME_METRICS = ("real_time", "cpu_time")
HIGHER_IS_BETTER = ("gbps", "bytes_per_second", "items_per_second", "speedup", "efficiency")
# What a case's link_errors_rose counter (docs/json.md) says wherever the tools show the case.
LINK_ERRORS_NOTE = "link error counters rose during this case"
# Counter-name endings that carry a unit (DESIGN.md: counter names carry their unit).
_SUFFIX_UNITS = (("gbps", "GB/s"), ("_us", "us"), ("_ms", "ms"), ("_ns", "ns"), ("_pct", "%"), ("_bytes", "B"))


@dataclass
class Sample:
    """One repetition (a Google Benchmark run entry): its figure, counters and, when written, every sample."""

    repetition: int
    real_time: float
    cpu_time: float
    iterations: int
    counters: dict[str, float]
    sample_times_s: list[float] | None = None
    round_times_s: list[float] | None = None  # each round's median sample, where the run had several rounds
    # (s0, d0): the spread prior gpu_bench moderated the rounds' spread with (stats/rounds.py), where it wrote one
    round_prior: tuple[float, float] | None = None


@dataclass
class Case:
    key: str
    name: CaseName
    time_unit: str = "ns"
    samples: list[Sample] = field(default_factory=list)
    aggregates: dict[str, dict[str, float]] = field(default_factory=dict)
    aggregate_units: dict[str, str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    skips: list[str] = field(default_factory=list)
    label: str | None = None
    non_finite: str | None = None  # a figure written as NaN or infinity ('real_time'), which no tool can judge
    # How the figure combines the rounds (gpu_bench.round_center, round_center below): in older files their mean.
    round_center: str = "mean"

    @property
    def family(self) -> str:
        return self.name.family

    @property
    def axes(self) -> dict[str, str]:
        return dict(self.name.axes)

    def axis(self, name: str, default: str | None = None) -> str | None:
        return self.name.axis(name, default)

    def axis_int(self, name: str) -> int | None:
        v = self.name.axis(name)
        try:
            return int(v) if v is not None else None
        except ValueError:
            return None

    @property
    def ok(self) -> bool:
        """True when the case has a figure to report (at least one good repetition or aggregate)."""
        return bool(self.samples) or any(n in self.aggregates for n in ("median", "mean"))

    def notes(self) -> list[str]:
        """What the case's counters say happened while it ran, in words: its link error counters rose
        (link_errors_rose, by as much as its repetitions' rises add up to)."""
        rose = sum(v for s in self.samples if math.isfinite(v := s.counters.get("link_errors_rose", 0.0)) and v > 0)
        return [f"{LINK_ERRORS_NOTE} (by {rose:.0f})"] if rose > 0 else []

    @property
    def problem(self) -> str | None:
        if self.ok:
            return None
        if self.errors:
            return "error: " + self.errors[0]
        if self.skips:
            return "skipped: " + self.skips[0]
        return "no figures"

    def has_metric(self, metric: str) -> bool:
        m = canonical_metric(metric)
        if m in TIME_METRICS:
            return self.ok
        if self.samples:
            return any(m in s.counters for s in self.samples)
        return any(m in a for a in self.aggregates.values())

    def values(self, metric: str) -> list[float]:
        """One value per good repetition, time in this case's time unit."""
        m = canonical_metric(metric)
        if m == "real_time":
            vals = [s.real_time for s in self.samples]
        elif m == "cpu_time":
            vals = [s.cpu_time for s in self.samples]
        else:
            vals = [s.counters[m] for s in self.samples if m in s.counters]
        return [v for v in vals if math.isfinite(v)]

    def sample_values(self, metric: str, headline: str, headline_kind: str) -> list[float]:
        """Every timed sample's value of `metric`, where the file has them (docs/json.md, sample_times_s).

        Only the time and the headline follow from a sample's time; any other counter has no per-sample
        value, and the list is empty.
        """
        return self._values_from_times(metric, headline, headline_kind, lambda s: s.sample_times_s, statistics.median)

    def round_values(self, metric: str, headline: str, headline_kind: str) -> list[float]:
        """Each round's value of `metric`, over every repetition, where the file has them (round_times_s).

        A round's median time gives the time and the headline as a sample's does; the figure itself is the
        rounds' center (round_center), so a rate scales by that time over the round's.
        """
        return self._values_from_times(metric, headline, headline_kind, lambda s: s.round_times_s,
                                       lambda times: round_center(times, self.round_center))

    def round_prior(self) -> tuple[float, float] | None:
        """(s0, d0): the spread prior gpu_bench wrote for the case's rounds (its first repetition's), or None."""
        return next((s.round_prior for s in self.samples if s.round_prior is not None), None)

    def _values_from_times(self, metric, headline, headline_kind, times_of, center_of) -> list[float]:
        """`metric` for each time `times_of` gives a repetition, the headline scaled from the repetition's
        figure (which stands for `center_of` its times); [] where a repetition has no times or the metric
        does not follow from a time."""
        m = canonical_metric(metric)
        out: list[float] = []
        for s in self.samples:
            times = times_of(s)
            if not times:
                return []
            center = center_of(times)
            if m == "real_time":
                out += [t * 1e9 / TIME_UNIT_NS[self.time_unit] for t in times]
            elif m == canonical_metric(headline) and m in s.counters and center > 0 and headline_kind in ("rate", "time"):
                h = s.counters[m]
                out += [h * center / t for t in times if t > 0] if headline_kind == "rate" else \
                    [h * t / center for t in times]
            else:
                return []
        return [v for v in out if math.isfinite(v)]

    def written_noise_pct(self) -> float | None:
        """The noise gpu_bench wrote (median over repetitions of `noise_pct`), or None for older files."""
        return self._written("noise_pct")

    def written_detectable_pct(self) -> float | None:
        """The smallest change gpu-bench-compare calls against a run like this one, as gpu_bench wrote it
        (median over repetitions of `detectable_pct`); None for a run of one round or an older file."""
        return self._written("detectable_pct")

    def _written(self, counter: str) -> float | None:
        vals = [s.counters[counter] for s in self.samples if math.isfinite(s.counters.get(counter, math.nan))]
        return statistics.median(vals) if vals else None

    def aggregate(self, agg: str, metric: str) -> float | None:
        m = canonical_metric(metric)
        a = self.aggregates.get(agg)
        if a is None:
            return None
        return a.get(m)

    def center(self, metric: str) -> float | None:
        """The robust middle: median of the repetitions, else the median or mean aggregate."""
        vals = self.values(metric)
        if vals:
            return statistics.median(vals)
        for agg in ("median", "mean"):
            v = self.aggregate(agg, metric)
            if v is not None and math.isfinite(v):
                return v
        return None

    def spread(self, metric: str) -> float | None:
        """Coefficient of variation in percent, from the repetitions or the cv aggregate."""
        vals = self.values(metric)
        if len(vals) >= 2:
            return cv_pct(vals)
        v = self.aggregate("cv", metric)
        return v * 100.0 if v is not None else None


ROUND_CENTERS = ("fastest_half", "trimmed25", "trimmed", "median", "mean")


def rounds_trimmed(n: int, per: int) -> int:
    """How many rounds a trimmed center drops at each end: one in `per` (TRIMMED_PER: 4 for trimmed25, 5 for
    trimmed), and one from three rounds on."""
    return 0 if n < 3 else max(1, n // per)


def rounds_kept(n: int) -> int:
    """How many of the fastest rounds the "fastest_half" center keeps (gpu_bench's rounds_kept): ceil(n / 2) from
    five rounds on, 0 below five, where the center is their median."""
    return 0 if n < 5 else (n + 1) // 2


# Each trimmed center's share dropped at each end, one round in so many: "trimmed25" (a quarter) and "trimmed"
# (a fifth), gpu_bench's before fastest_half (its older files, and models `gpu-bench-aa models` judges beside it).
TRIMMED_PER = {"trimmed": 5, "trimmed25": 4}


def round_center(times: list[float], how: str = "fastest_half") -> float:
    """A case's figure from its rounds' times, as gpu_bench.round_center names it: "fastest_half" (below);
    "trimmed25" or "trimmed", their mean less the rounds_trimmed(n) lowest and highest (a quarter or a fifth;
    the median of three or four); "median"; or "mean" (files before that key)."""
    if how == "median":
        return statistics.median(times)
    if how == "fastest_half":
        # gpu_bench's: the mean of the fastest half of five rounds or more (the middle one counted where they
        # are odd), which rounds a busy link slowed cannot move however many they are; their median below five.
        kept = rounds_kept(len(times))
        return statistics.fmean(sorted(times)[:kept]) if kept else statistics.median(times)
    g = rounds_trimmed(len(times), TRIMMED_PER.get(how, 5))
    if how == "mean" or g == 0:
        return statistics.fmean(times)
    return statistics.fmean(sorted(times)[g:-g])


def cv_pct(vals: list[float]) -> float | None:
    """Sample standard deviation over the mean, in percent (numpy: statistics.stdev works in exact fractions,
    ten times slower over a full matrix)."""
    if len(vals) < 2:
        return None
    import numpy as np

    a = np.asarray(vals, dtype=float)  # one conversion for both figures
    mean = float(a.mean())
    if not mean:
        return None
    return float(a.std(ddof=1)) / abs(mean) * 100.0


# ---------------------------------------------------------------------------------------------
# metrics by name (a family's headline takes its unit and direction from its descriptor instead)


def canonical_metric(metric: str) -> str:
    return "real_time" if metric in ("time", "real_time") else metric


def higher_is_better(metric: str) -> bool:
    m = canonical_metric(metric)
    return m in HIGHER_IS_BETTER or m.endswith("_per_second") or m.endswith("gbps")


def metric_unit(metric: str, time_unit: str = "ns") -> str:
    m = canonical_metric(metric)
    if m in TIME_METRICS:
        return time_unit
    if m.endswith("_per_second"):
        return "/s" if m.startswith("items") else "B/s"
    for suffix, unit in _SUFFIX_UNITS:
        if m.endswith(suffix):
            return unit
    if m == "speedup":
        return "x"
    return ""


def metric_title(metric: str) -> str:
    m = canonical_metric(metric)
    return {"real_time": "time", "gbps": "bandwidth"}.get(m, m)
