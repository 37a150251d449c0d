"""What every figure shares: a fresh matplotlib Figure on the Agg canvas (no pyplot state) laid out in inches,
the encoding (colour: what was measured; line style, marker or hatching: the file), lines with their
interval band, value and size axes and titles; the points they draw are points.py's."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Iterable

from ..reading.names import human_bytes
from .points import Point, whiskers


# The figure is laid out in inches, once, when it is saved: the margins follow from its title, labels and
# legend, so no layout engine is solved (solving one cost most of a figure's time).
AXES_TRIM_W = 0.8  # of a panel's width (Canvas's w): its share of the tick labels beside it
AXES_TRIM_H = 1.0  # of a panel's height (Canvas's h): its share of the title above it and the labels below it
CHAR_W = 0.0085  # inches per character per point of font size, DejaVu Sans on average
LEGEND_FONT = 8


def _lines(text: str) -> int:
    """The lines of a label or title; 0 for none."""
    return text.count("\n") + 1 if text else 0


class Canvas:
    """A figure with a grid of panels and at most one legend, under the panels; saved to every format asked.

    w and h are each panel's share of the figure in inches, its labels included. The margins and the
    figure's size are fixed by settle(), from the labels, titles and legend drawn by then.
    """

    def __init__(self, nrows: int, ncols: int, w: float = 5.0, h: float = 3.6, sharey: bool = False,
                 left: float | None = None):
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        self.box = (max(1.6, w - AXES_TRIM_W), max(1.2, h - AXES_TRIM_H))
        self.left = left
        self.sharey = sharey
        self.fig = Figure(figsize=(max(6.0, w * ncols), h * nrows + 0.8))
        FigureCanvasAgg(self.fig)
        self.axes = self.fig.subplots(nrows, ncols, squeeze=False, sharey=sharey)
        self._legend = None  # (handles, labels, ncols, title, split) for settle()
        self._colorbar = None  # (mappable, label) for settle()
        self._settled = False

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
        `label` would be taller than its panel (measured on its own: no layout is solved for it)."""
        if not axes:
            return
        axes[0].set_ylabel(label)
        extent = axes[0].yaxis.label.get_window_extent(self.fig.canvas.get_renderer())
        fits = extent.height <= self.box[1] * self.fig.dpi
        for ax in axes:
            ax.set_ylabel(label if fits else broken)

    def legend(self, handles=None, labels=None, ncols: int = 3, title: str = "", split: int = 0) -> None:
        """The figure's one legend, under the panels (placed again by settle(), once the figure's size is
        known). split: the entries before it (the colours) and from it (the files) are kept in columns of
        their own where the width allows."""
        if handles is None:
            handles, labels = self.axes[0][0].get_legend_handles_labels()
        if handles:
            self._legend = (list(handles), [str(x) for x in labels], ncols, title, split)
            self._place_legend(self.fig.get_figwidth(), self.fig.get_figheight(), 0.0)

    def colorbar(self, mappable, label: str) -> None:
        """A colour bar right of the panels; placed by settle()."""
        self._colorbar = (mappable, label)

    def _legend_layout(self, width: float) -> tuple[list, list[str], int, str]:
        """The legend's handles, labels, columns and wrapped title in a figure `width` inches wide: blanks
        after the colours where the files then start a column of their own within as many columns."""
        import textwrap

        from matplotlib.patches import Patch

        handles, labels, ncols, title, split = self._legend
        unit = CHAR_W * LEGEND_FONT
        longest = max(len(x) for x in labels)
        fits = max(1, int((width - 0.3) / (0.9 * unit * longest + 0.7)))
        columns = min(ncols, len(handles), fits)
        title = "\n".join(w for ln in title.split("\n") for w in textwrap.wrap(ln, max(30, int((width - 0.4) / unit))))
        if not split or split >= len(handles) or columns < 2:
            return handles, labels, columns, title
        rest = len(handles) - split
        for rows in range(1, len(handles) + 1):
            if math.ceil(split / rows) + math.ceil(rest / rows) <= columns:
                pad = math.ceil(split / rows) * rows - split
                blank = [Patch(visible=False) for _ in range(pad)]
                return (handles[:split] + blank + handles[split:], labels[:split] + [""] * pad + labels[split:],
                        math.ceil(split / rows) + math.ceil(rest / rows), title)
        return handles, labels, columns, title

    def _place_legend(self, width: float, height: float, foot: float) -> None:
        """(Re)makes the legend for a figure of that size, `foot` inches over its bottom edge."""
        from matplotlib.legend_handler import HandlerTuple

        for old in list(self.fig.legends):
            old.remove()
        handles, labels, columns, title = self._legend_layout(width)
        pairs = any(isinstance(h, tuple) for h in handles)  # a bar's patch and a line side by side: wider
        self.fig.legend(handles, labels, loc="lower center", bbox_to_anchor=(0.5, foot / height), ncols=columns,
                        fontsize=LEGEND_FONT, frameon=False, title=title or None, title_fontsize=LEGEND_FONT,
                        handlelength=4.0 if pairs else 2.0, handler_map={tuple: HandlerTuple(ndivide=None, pad=0.5)})

    def settle(self) -> None:
        """Sizes the figure and places its panels, title, legend and colour bar, once."""
        if self._settled:
            return
        self._settled = True
        nrows, ncols = len(self.axes), len(self.axes[0])
        aw, ah = self.box

        def label_lines(ax) -> int:
            return _lines(ax.get_ylabel()) if ax.get_visible() else 0

        def ticks_out(ax) -> float:
            """Inches taken by the value axis's tick labels, from the longest of them (10 pt)."""
            if not ax.get_visible():
                return 0.0
            if ax.get_yscale() == "log":
                return 0.5
            lo, hi = ax.get_ylim()
            digits = max(len(f"{v:.3g}") for v in (lo, hi, (lo + hi) / 2))
            return 0.15 + digits * CHAR_W * 10

        first = [row[0] for row in self.axes]
        left = self.left if self.left is not None else (
            0.25 + max(ticks_out(ax) for ax in first) + 0.19 * max(label_lines(ax) for ax in first))
        others = [ax for row in self.axes for ax in row[1:]]
        if self.sharey:
            wgap = 0.3
        else:
            wgap = 0.25 + max([ticks_out(ax) + 0.19 * label_lines(ax) for ax in others] or [0.0])
        right = 0.3 + (1.3 if self._colorbar else 0.0)
        width = left + ncols * aw + (ncols - 1) * wgap + right
        if width < 6.0:  # a narrow figure's panels widen to the minimum width
            aw += (6.0 - width) / ncols
            width = 6.0

        def below(ax) -> float:
            if not ax.get_visible():
                return 0.0
            ticks = ax.xaxis.get_majorticklabels()
            rotated = any(t.get_rotation() for t in ticks[:1])
            return 0.35 + (0.3 if rotated else 0.0) + 0.19 * _lines(ax.get_xlabel())

        def above(ax) -> float:
            return 0.32 if ax.get_visible() and ax.get_title() else 0.1

        row_below = [max(below(ax) for ax in row) for row in self.axes]
        row_above = [max(above(ax) for ax in row) for row in self.axes]
        hgap = max([row_below[r] + row_above[r + 1] for r in range(nrows - 1)] or [0.0])
        suptitle = self.fig._suptitle
        top = 0.15 + (0.22 * _lines(suptitle.get_text()) if suptitle is not None else 0.0) + row_above[0]
        legend_h = 0.0
        if self._legend:
            handles, _, columns, title = self._legend_layout(width)
            rows = math.ceil(len(handles) / columns)
            legend_h = 0.1 + 0.19 * rows + 0.16 * _lines(title)
        bottom = row_below[-1] + legend_h + 0.05
        height = top + nrows * ah + (nrows - 1) * hgap + bottom
        self.fig.set_size_inches(width, height)
        self.fig.subplots_adjust(left=left / width, right=1 - right / width, top=1 - top / height,
                                 bottom=bottom / height, wspace=wgap / aw, hspace=hgap / ah)
        if suptitle is not None:
            suptitle.set_y(1 - 0.08 / height)
            suptitle.set_va("top")
        if self._legend:
            self._place_legend(width, height, 0.05)
        if self._colorbar:
            mappable, label = self._colorbar
            cax = self.fig.add_axes((1 - (right - 0.2) / width, bottom / height, 0.2 / width,
                                     (height - top - bottom) / height))
            self.fig.colorbar(mappable, cax=cax, label=label)


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
    ax.tick_params(axis="x", labelrotation=30)


# ---------------------------------------------------------------------------------------------
# The encoding every figure shares: colour is what was measured (the series: memory kind, op, schedule...),
# the style is the file (its machine): line style and marker on a line, hatching on a bar.

MAX_COLOURS = 10  # series a figure tells apart by colour (tab10); a legend then has at most about a dozen entries
# Ten files drawn together each have a style no other has: a line style (four), a marker and a hatching.
FILE_STYLES = (("-", "o", ""), ("--", "s", "///"), (":", "^", "..."), ("-.", "D", "xxx"), ("-", "v", "\\\\\\"),
               ("--", "P", "++"), (":", "X", "ooo"), ("-.", "*", "---"), ("-", "<", "|||"), ("--", ">", "**"))
FILE_LINES = "line style and marker: file"
FILE_HATCHES = "hatching: file"
KEY_GREY = "0.3"  # a file's legend entry, whose colour means nothing


def colours(n: int) -> list:
    """n colours, each distinct from the others (tab10, or tab20 beyond ten)."""
    from matplotlib import colormaps

    cmap = colormaps["tab10" if n <= 10 else "tab20"]
    return [cmap(i % cmap.N) for i in range(n)]


def file_style(i: int) -> tuple:
    """(line style, marker, hatch) of the i-th file."""
    return FILE_STYLES[i % len(FILE_STYLES)]


def file_line_handle(i: int, label: str):
    from matplotlib.lines import Line2D

    ls, marker, _ = file_style(i)
    return Line2D([], [], color=KEY_GREY, ls=ls, marker=marker, lw=1.6, ms=5, label=label)


def file_bar_handle(i: int, label: str):
    from matplotlib.patches import Patch

    return Patch(facecolor="0.6", edgecolor="white", hatch=file_style(i)[2], lw=0, label=label)


def colour_handle(colour, label: str, bar: bool = False):
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    if bar:
        return Patch(facecolor=colour, lw=0, label=label)
    return Line2D([], [], color=colour, lw=3, label=label)


def encoded_legend(canvas: "Canvas", entries: list[tuple], files: list[tuple[int, str]], colour_means: str,
                   bar: bool | str = False, notes: Iterable[str] = (), ncols: int = 3) -> None:
    """The figure's legend: an entry per colour (entries: (colour, label)), then one per file (files:
    (index, label)) in its style, titled with what colour and style mean and with `notes` (bands, lines).
    bar: True where the figure draws bars, "both" where it draws lines and bars."""
    handles = [colour_handle(c, lab, bar is True) for c, lab in entries]
    if bar == "both":
        handles += [(file_bar_handle(i, lab), file_line_handle(i, lab)) for i, lab in files]
    else:
        handles += [(file_bar_handle if bar else file_line_handle)(i, lab) for i, lab in files]
    labels = [lab for _, lab in entries] + [lab for _, lab in files]
    key = [f"colour: {colour_means}"] if entries and colour_means else []
    if len(files) > 1:
        key.append({"both": f"{FILE_LINES} (on a bar, hatching)", True: FILE_HATCHES}.get(bar, FILE_LINES))
    title = "; ".join(key)
    notes = [n for n in notes if n]
    if notes:
        title = "\n".join([title] + notes) if title else "\n".join(notes)
    canvas.legend(handles, labels, ncols=ncols, title=title, split=len(entries))


ZERO_NOTE = "hollow marker: its interval reaches zero (noise_pct 100% or more), so no band is drawn there"


def draw_line(ax, pts: list[Point], colour, label: str, file: int = 0, band: bool = True, thin: bool = False,
              marker: str | None = None) -> bool:
    """A line in the file's style with its points' intervals as a band (band=False: only the noise_pct
    ones); thin: a secondary line (a p99) without markers. The first file is drawn a little wider so an
    identical later one leaves it visible. A point whose interval reaches zero gets a hollow marker and no
    band: such a band would fill the panel to its bottom (to the foot of a log axis). True where one did."""
    ls, file_marker, _ = file_style(file)
    pts = sorted(pts, key=lambda p: p.x)
    xs, ys = [p.x for p in pts], [p.y for p in pts]
    if thin:
        ax.plot(xs, ys, ls=ls, color=colour, label=label, lw=0.9, alpha=0.8)
        return False
    marker = marker or file_marker
    ms = 5.5 if file == 0 else 4.5
    ax.plot(xs, ys, marker=marker, ls=ls, color=colour, label=label, ms=ms, lw=2.2 if file == 0 else 1.6)
    shaded = [p.lo is not None and p.hi is not None and (band or p.noise) for p in pts]
    zero = [s and p.lo <= 0 < p.y for p, s in zip(pts, shaded)]
    if any(zero):
        ax.plot([p.x for p, z in zip(pts, zero) if z], [p.y for p, z in zip(pts, zero) if z], ls="none",
                marker=marker, ms=ms + 1, mfc="white", mec=colour, mew=1.5, label="_zero")
    shaded = [s and not z for s, z in zip(shaded, zero)]
    if any(shaded):
        # A point without an interval pinches the band to the line rather than borrowing its neighbours'.
        lo = [p.lo if s else p.y for p, s in zip(pts, shaded)]
        hi = [p.hi if s else p.y for p, s in zip(pts, shaded)]
        ax.fill_between(xs, lo, hi, color=colour, alpha=0.15, lw=0)
    return any(zero)


def draw_bars(ax, pos: list[float], pts: list[Point | None], width: float, colour, file: int, label: str,
              horizontal: bool = False):
    """Bars of one colour in the file's hatching, each with its interval as a whisker."""
    hatch = file_style(file)[2]
    vals = [p.y if p is not None else math.nan for p in pts]
    kw = dict(color=colour, hatch=hatch, edgecolor="white", lw=0, label=label, capsize=2,
              error_kw=dict(elinewidth=1, ecolor="0.15"))
    if horizontal:
        return ax.barh(pos, vals, width, xerr=whiskers(pts), **kw)
    return ax.bar(pos, vals, width, yerr=whiskers(pts), **kw)


def set_title(canvas: Canvas, title: str, subtitle: str = "") -> None:
    """The figure's title and subtitle, each line wrapped to the figure's width (about 11 characters an
    inch at 12 pt, as the heat maps wrap theirs) so that a long one is not cut off by a narrow figure."""
    import textwrap

    width = max(30, int(canvas.fig.get_figwidth() * 11))
    lines = [w for part in (title, subtitle) if part for ln in part.split("\n") for w in textwrap.wrap(ln, width)]
    canvas.fig.suptitle("\n".join(lines), fontsize=12)


def spans_decades(values: Iterable[float], decades: float = 1.0) -> bool:
    """True where the values are all positive and span more than `decades` powers of ten: a linear axis
    would leave most of its height to the largest of them."""
    vals = [v for v in values if v is not None and math.isfinite(v)]
    return bool(vals) and min(vals) > 0 and max(vals) > 10**decades * min(vals)


def fit_value_axes(axes: list, centres: Iterable[float], reach: Iterable[float] = (), which: str = "y") -> None:
    """One scale and one range for sibling panels of one quantity: logarithmic where the figures drawn
    (`centres`: medians, not their intervals) span more than a decade, else linear from zero; the range
    holds the centres and as much of `reach` (their intervals) as lies within a decade under the least
    centre and half as much again over the greatest (three times on a log axis); the rest runs off it."""
    c = [v for v in centres if v is not None and math.isfinite(v)]
    if not axes or not c:
        return
    log = spans_decades(c)
    # An interval of a noisy figure may reach far past every figure; it then runs off the panel.
    most = max(c) * (3.0 if log else 1.5) if max(c) > 0 else max(c)
    r = [v for v in reach if v is not None and math.isfinite(v) and v <= most]
    if log:
        least = min(c)
        lo = min([least] + [v for v in r if least / 10 <= v < least]) / 1.25
        hi = max(c + r) * 1.25
    else:
        lo = 0.0 if min(c) >= 0 else min(c + r)
        hi = max(c + r)
        if hi <= lo:
            hi = lo + 1.0
        pad = 0.04 * (hi - lo)
        hi += pad
        lo -= pad if lo < 0 else 0.0
    for ax in axes:
        if which == "y":
            ax.set_yscale("log" if log else "linear")
            ax.set_ylim(lo, hi)
        else:
            ax.set_xscale("log" if log else "linear")
            ax.set_xlim(lo, hi)
        if log and hi / lo < 1e3:
            # Few decades: ticks at 1, 2 and 5 of each, as plain numbers, where powers of ten alone are too few.
            from matplotlib.ticker import FuncFormatter, LogLocator

            axis = ax.yaxis if which == "y" else ax.xaxis
            axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
            axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))


def value_axis(ax, values: list[float], which: str = "y") -> None:
    """Log scale where the values span more than a decade, else linear from zero."""
    fit_value_axes([ax], values, which=which)
