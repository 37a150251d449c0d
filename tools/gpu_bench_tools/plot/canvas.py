"""What every figure shares: a fresh matplotlib Figure on the Agg canvas (no pyplot state), colours,
lines with their interval band, size axes, titles and file names."""

from __future__ import annotations

import math
import statistics
import re
from dataclasses import dataclass, field
from pathlib import Path
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


class Canvas:
    """A figure with a grid of axes, saved to every requested format."""

    def __init__(self, nrows: int, ncols: int, w: float = 5.0, h: float = 3.6, sharey: bool = False):
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        # No layout engine: settle() places the panels once, from one measurement (matplotlib's constrained
        # layout measures every panel four times and took most of a report's time).
        self.fig = Figure(figsize=(max(6.0, w * ncols), h * nrows + 0.8))
        FigureCanvasAgg(self.fig)
        self.axes = self.fig.subplots(nrows, ncols, squeeze=False, sharey=sharey)
        self._ylabel = None  # (axes, label, broken) for settle()
        self._placed = False

    def save(self, out_dir: Path, stem: str, formats: tuple[str, ...], dpi: int) -> list[str]:
        import matplotlib

        # Laid out and drawn at the dpi it is saved at, so the text sizes measured for the layout serve the
        # drawing too (matplotlib keeps them per dpi).
        self.fig.set_dpi(dpi)
        self.settle()
        paths = []
        with matplotlib.rc_context({"svg.hashsalt": "gpu_bench", "svg.fonttype": "none"}):
            for fmt in formats:
                p = out_dir / f"{stem}.{fmt}"
                meta = {"Date": None} if fmt == "svg" else None
                self.fig.savefig(p, dpi=dpi, metadata=meta)
                paths.append(str(p))
        return paths

    def fit_ylabel(self, axes: list, label: str, broken: str) -> None:
        """Labels the value axis of `axes` with `label`, or with `broken` (the same over two lines) where
        `label` would be taller than its panel once the layout is solved: decided by settle(), when the
        figure is saved, so that a figure never saved is never laid out."""
        for ax in axes:
            ax.set_ylabel(label)
        self._ylabel = (axes, label, broken) if label != broken and axes else None

    def settle(self) -> None:
        """Places the panels once and keeps them there: drawing the figure then moves nothing.

        Each panel's surroundings (tick labels, axis labels, its title) are measured once; every column gets
        the widest of its panels' on each side, every row the tallest, the title above and the legend below
        their own height, and the panels share what is left equally. Where fit_ylabel's label is taller than
        its panel, it is broken and its column widened by what that adds. A figure with a colour bar is left
        to matplotlib's constrained layout, which knows how to place one."""
        if self._placed:
            return
        self._placed = True
        fig = self.fig
        panels = [ax for row in self.axes for ax in row]
        if any(ax not in panels for ax in fig.axes):
            self._settle_constrained()
            return
        renderer = fig.canvas.get_renderer()
        inch = fig.dpi
        pad = 3 / 72 * inch  # constrained layout's padding around each element
        width, height = fig.bbox.width, fig.bbox.height
        nrows, ncols = len(self.axes), len(self.axes[0])
        left, right = [0.0] * ncols, [0.0] * ncols
        top, bottom = [0.0] * nrows, [0.0] * nrows
        for r, row in enumerate(self.axes):
            for c, ax in enumerate(row):
                if not ax.get_visible():
                    continue
                box, tight = ax.get_window_extent(renderer), ax.get_tightbbox(renderer, for_layout_only=True)
                if tight is None:
                    continue
                left[c], right[c] = max(left[c], box.x0 - tight.x0), max(right[c], tight.x1 - box.x1)
                bottom[r], top[r] = max(bottom[r], box.y0 - tight.y0), max(top[r], tight.y1 - box.y1)
        above = pad
        title = fig._suptitle
        if title is not None and title.get_visible() and title.get_text():
            above = height - title.get_window_extent(renderer).y0 + pad
        below = pad
        for legend in fig.legends:
            below = max(below, legend.get_window_extent(renderer).y1 + pad)
        gap_x, gap_y = 0.02 * width, 0.02 * height  # constrained layout's space between panels
        panel_h = (height - above - below - sum(top) - sum(bottom) - gap_y * (nrows - 1)) / nrows
        if self._ylabel is not None:
            axes, _, broken = self._ylabel
            self._ylabel = None
            if any(ax.yaxis.label.get_window_extent(renderer).height > panel_h for ax in axes):
                for ax in axes:
                    before = ax.yaxis.label.get_window_extent(renderer).width
                    ax.set_ylabel(broken)
                    c = next(c for row in self.axes for c, a in enumerate(row) if a is ax)
                    left[c] += max(0.0, ax.yaxis.label.get_window_extent(renderer).width - before)
        panel_w = (width - 2 * pad - sum(left) - sum(right) - gap_x * (ncols - 1)) / ncols
        if panel_w <= 0 or panel_h <= 0:  # too small a figure for its labels: leave matplotlib's defaults
            return
        y = height - above
        for r, row in enumerate(self.axes):
            y -= top[r] + panel_h
            x = pad
            for c, ax in enumerate(row):
                x += left[c]
                ax.set_position([x / width, y / height, panel_w / width, panel_h / height])
                x += panel_w + right[c] + gap_x
            y -= bottom[r] + gap_y

    def _settle_constrained(self) -> None:
        """Solves matplotlib's constrained layout once (twice where fit_ylabel's label is taller than its
        panel and is broken), then leaves it off so that drawing the figure solves it no more."""
        from matplotlib.layout_engine import ConstrainedLayoutEngine

        engine = ConstrainedLayoutEngine()
        engine.execute(self.fig)
        if self._ylabel is not None:
            axes, _, broken = self._ylabel
            self._ylabel = None
            renderer = self.fig.canvas.get_renderer()
            if any(ax.yaxis.label.get_window_extent(renderer).height > ax.get_window_extent(renderer).height
                   for ax in axes):
                for ax in axes:
                    ax.set_ylabel(broken)
                engine.execute(self.fig)

    def legend(self, handles=None, labels=None, ncols: int = 3) -> None:
        """One legend for the whole figure, under the panels, instead of one per panel."""
        if handles is None:
            handles, labels = self.axes[0][0].get_legend_handles_labels()
        if handles:
            longest = max(len(str(lab)) for lab in labels)
            fits = max(1, int(self.fig.get_figwidth() / (0.075 * longest + 0.6)))  # about 0.075 in per character
            columns = min(ncols, len(handles), fits)
            self.fig.legend(handles, labels, loc="outside lower center", ncols=columns, fontsize=8, frameon=False)
            # The legend's rows (about 0.17 in each at 8 pt) are added to the figure rather than taken from its
            # panels, which many rows would squeeze to nothing.
            w, h = self.fig.get_size_inches()
            self.fig.set_size_inches(w, h + 0.17 * math.ceil(len(handles) / columns))


def log2_size_axis(ax, xs: list[float], label: str = "transfer size (log2 scale)") -> None:
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    ax.set_xscale("log", base=2)
    if xs:
        lo, hi = int(math.floor(math.log2(min(xs)))), int(math.ceil(math.log2(max(xs))))
        step = max(1, math.ceil((hi - lo + 1) / 7))
        ax.xaxis.set_major_locator(FixedLocator([2.0**e for e in range(lo, hi + 1, step)]))
        ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: human_bytes(v)))
    ax.set_xlabel(label)
    for t in ax.get_xticklabels():
        t.set_rotation(30)


def colours(n: int) -> list:
    from matplotlib import colormaps

    cmap = colormaps["tab10"]
    return [cmap(i % 10) for i in range(n)]


FILE_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "*")


def draw_line(ax, pts: list[Point], colour, label: str, marker="o", ls="-", band: bool = True,
               order: int = 0) -> None:
    """A line with its points' intervals as a band (band=False: only the noise_pct ones); earlier files are
    drawn wider so an identical later one leaves them visible."""
    pts = sorted(pts, key=lambda p: p.x)
    xs, ys = [p.x for p in pts], [p.y for p in pts]
    lw = max(1.2, 3.2 - 0.7 * order)
    ax.plot(xs, ys, marker=marker, ls=ls, color=colour, label=label, ms=max(3.0, 6.5 - 1.2 * order), lw=lw)
    shaded = [p.lo is not None and p.hi is not None and (band or p.noise) for p in pts]
    if any(shaded):
        # A point without an interval pinches the band to the line rather than borrowing its neighbours'.
        lo = [p.lo if s else p.y for p, s in zip(pts, shaded)]
        hi = [p.hi if s else p.y for p, s in zip(pts, shaded)]
        ax.fill_between(xs, lo, hi, color=colour, alpha=0.18, lw=0)


def noise_band_handle():
    """A legend entry for the bands drawn from noise_pct."""
    from matplotlib.patches import Patch

    return Patch(facecolor="0.45", alpha=0.3, lw=0, label=f"band: {NOISE_LEGEND}")


def merged_handles(canvas: Canvas) -> tuple[list, list[str]]:
    handles, labels = [], []
    for row in canvas.axes:
        for ax in row:
            for h, lab in zip(*ax.get_legend_handles_labels()):
                if lab not in labels:
                    handles.append(h)
                    labels.append(lab)
    return handles, labels


def set_title(canvas: Canvas, title: str, subtitle: str = "") -> None:
    """The figure's title and subtitle, each line wrapped to the figure's width (about 11 characters an
    inch at 12 pt, as the heat maps wrap theirs) so that a long one is not cut off by a narrow figure."""
    import textwrap

    width = max(30, int(canvas.fig.get_figwidth() * 11))
    lines = [w for part in (title, subtitle) if part for ln in part.split("\n") for w in textwrap.wrap(ln, width)]
    canvas.fig.suptitle("\n".join(lines), fontsize=12)




def spans_decades(values: Iterable[float]) -> bool:
    """True where positive values span more than a factor of ten: a linear axis would leave most of it empty."""
    vals = [v for v in values if v is not None and math.isfinite(v)]
    return bool(vals) and min(vals) > 0 and max(vals) > 10 * min(vals)


def value_axis(ax, values: list[float], which: str = "y") -> None:
    """Log scale where the values span more than a decade, else linear from zero."""
    if spans_decades(values):
        (ax.set_yscale if which == "y" else ax.set_xscale)("log")
    elif which == "y":
        ax.set_ylim(bottom=0)
    else:
        ax.set_xlim(left=0)


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
