"""What a figure is drawn from: each case's point with its interval, the order of axis values, the
headline's unit and scale, and the names a figure is saved and titled by."""

from __future__ import annotations

import math
import statistics
import re
from dataclasses import dataclass, field
from typing import Callable, Iterable

from ..reading.load import TIME_UNIT_NS, Case, canonical_metric
from ..reading.names import human_bytes


MEM_ORDER = ("pinned", "registered", "write_combined", "mapped", "pageable", "managed_prefetch",
             "managed_fault", "managed", "device")
DIR_ORDER = ("h2d", "d2h", "bidir", "d2d")
DIR_TITLE = {"h2d": "host to device", "d2h": "device to host", "bidir": "both directions at once",
             "d2d": "device to device"}
# Value orders that read naturally wherever an axis of that name appears, in any family.
PREFERRED_ORDER = {"dir": DIR_ORDER + ("oneway",), "mem": MEM_ORDER, "peer_access": ("on", "off"),
                   "timing": ("on", "off"),
                   "sync": ("both", "before", "after", "none", "events", "end", "per_stream", "per_chunk",
                            "event_join"),
                   "schedule": ("serial", "depth_first", "breadth_first")}


def axis_value_key(axis: str, v: str | None):
    """Sorts an axis's values: the preferred order first, then numbers by size, then the rest by name."""
    order = PREFERRED_ORDER.get(axis, ())
    v = "-" if v is None else v
    return (order.index(v) if v in order else 99, int(v) if v.isdigit() else -1, v)


@dataclass
class Plot:
    kind: str
    stem: str
    title: str
    paths: list[str] = field(default_factory=list)
    points: int = 0
    machine: int | None = None  # the one file a figure is drawn from (heat maps), else None: every file


@dataclass
class PlotContext:
    """What every plot maker gets: the files, one label per file, and the files' family descriptors."""

    files: list
    labels: list[str]
    # Only each kind's figure with the most points is wanted (make_plots' one_per_kind): a maker may draw
    # that one alone (richest).
    one_per_kind: bool = False

    def descriptor(self, family: str):
        """The family's descriptor from the first file that has the family."""
        for f in self.files:
            d = f.descriptor(family)
            if d is not None and family in {c.family for c in f.cases.values()}:
                return d
        return None


def richest(groups: dict, one: bool) -> dict:
    """`groups` (a figure's key -> its cases, grouped any way), or with `one` only the group of the most
    cases: the figure make_plots(one_per_kind=True) keeps, drawn without the others."""
    if not one or len(groups) < 2:
        return groups

    def count(v) -> int:
        return sum(count(x) for x in v.values()) if isinstance(v, dict) else len(v)

    best = max(groups, key=lambda k: count(groups[k]))
    return {best: groups[best]}


@dataclass
class Point:
    x: float
    y: float
    lo: float | None = None
    hi: float | None = None
    noise: bool = False  # lo..hi is the interval gpu_bench wrote (noise_pct), not the repetitions' range


# What an interval drawn from noise_pct means, for legends and axis labels.
NOISE_LEGEND = "interval of the next run's figure (noise_pct)"
BAND_NOTE = f"band: {NOISE_LEGEND}"


# ---------------------------------------------------------------------------------------------
# small helpers


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-").lower()[:120] or "plot"


def order_values(values: Iterable[str], preferred: tuple[str, ...]) -> list[str]:
    def key(v: str):
        if v in preferred:
            return (0, preferred.index(v), 0, v)
        try:
            return (1, 0, int(v), v)
        except ValueError:
            return (2, 0, 0, v)

    return sorted(set(values), key=key)


def rest_axes(case: Case, used: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    return tuple((k, v) for k, v in case.name.axes if k not in used)


def rest_text(rest: tuple[tuple[str, str], ...]) -> str:
    return ", ".join(f"{k}: {human_bytes(int(v)) if k == 'bytes' and v.isdigit() else v}" for k, v in rest)


def to_us(case: Case, v: float) -> float:
    return v * TIME_UNIT_NS[case.time_unit] / 1e3


def noise_bounds(case: Case, value: float) -> tuple[float, float] | None:
    """value -+ |value| x noise_pct / 100, where the file has the case's noise_pct; else None."""
    pct = case.written_noise_pct()
    if pct is None or value is None or not math.isfinite(value):
        return None
    half = abs(value) * pct / 100.0
    return value - half, value + half


def metric_point(case: Case, metric: str, x: float, scale: Callable[[float], float] | None = None,
                 headline: str | None = None) -> Point | None:
    """The case's median of `metric` at x, from its slowest to its fastest repetition; where `metric` is
    the family's `headline` and the file has the case's noise_pct, that interval instead: gpu_bench's
    noise is known for the headline alone."""
    vals = case.values(metric)
    c = case.center(metric)
    if c is None:
        return None
    s = scale or (lambda v: v)
    if headline is not None and canonical_metric(metric) == canonical_metric(headline):
        bounds = noise_bounds(case, s(c))
        if bounds is not None:
            return Point(x, s(c), *bounds, noise=True)
    if len(vals) >= 2:
        return Point(x, s(c), s(min(vals)), s(max(vals)))
    return Point(x, s(c))


def detectable_text(cases: list[Case]) -> str:
    """' (detects >= 1.2%)': the median over `cases` of the smallest change gpu-bench-compare calls against a
    run like each (detectable_pct), for a series' legend entry; '' where no case has one."""
    vals = [d for d in (c.written_detectable_pct() for c in cases) if d is not None]
    if not vals:
        return ""
    mid = statistics.median(vals)
    return f" (detects \u2265{mid:.2g}%)" if mid < 10 else f" (detects \u2265{mid:.0f}%)"


def whiskers(pts: list[Point | None]) -> list[list[float]]:
    """[below, above] per point for errorbar(yerr=...) and bar(yerr=...); NaN where a point has no interval,
    which matplotlib leaves undrawn, where 0 would still draw its caps."""
    below, above = [], []
    for p in pts:
        if p is None or p.lo is None or p.hi is None:
            below.append(math.nan)
            above.append(math.nan)
        else:
            below.append(p.y - p.lo)
            above.append(p.hi - p.y)
    return [below, above]


def whisker_text(pts: list[Point | None], otherwise: str = "the slowest to the fastest repetition") -> str:
    """What the whiskers of `pts` span: the noise_pct interval, `otherwise`, or both where they mix."""
    noise = any(p is not None and p.noise for p in pts)
    other = any(p is not None and not p.noise and p.lo is not None for p in pts)
    if noise and other:
        return f"whiskers: {NOISE_LEGEND}, else {otherwise}"
    if noise:
        return f"whiskers: {NOISE_LEGEND}"
    return f"whiskers: {otherwise}" if other else ""


def headline_unit(desc) -> str:
    """The unit a family's headline is shown in: the descriptor's, or us for the time of older files."""
    return desc.unit or "us"


def headline_scale(desc, case: Case) -> Callable[[float], float]:
    """Turns a case's headline value into headline_unit(desc) (times are kept per case in its time unit)."""
    unit = headline_unit(desc)
    if desc.is_time and unit in TIME_UNIT_NS:
        f = TIME_UNIT_NS[case.time_unit] / TIME_UNIT_NS[unit]
        return lambda v: v * f
    return lambda v: v


def headline_label(desc, sep: str = ", ") -> str:
    """'bandwidth (GB/s, 1 GB = 1e9 B), higher is better'; sep=",\n" breaks it before which way is better."""
    what = "time" if desc.is_time else desc.headline
    if desc.headline == "gbps":
        what = "bandwidth"
    unit = headline_unit(desc)
    unit = "GB/s, 1 GB = 1e9 B" if unit == "GB/s" else unit
    return f"{what} ({unit}){sep}{desc.better} is better" if unit else f"{what}{sep}{desc.better} is better"
