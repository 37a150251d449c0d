"""The figure of any family, driven by its descriptor: the headline against the plot hint's x axis, a panel
per value of its panel axis and a line per file and series value (and GPU); without an x axis, or where
every case of the family is at one x value (a line of one point is a dot), a bar per case and file.  Colour
is the series value, line style and marker (or a bar's hatching) the file.  A case that crosses the host
link gets the link's peak from the device profile."""

from __future__ import annotations

import math

from ..reading.facts import host_link_peak
from ..reading.families import FamilyDescriptor
from ..reading.load import Case, headline_of
from .canvas import (
    CHAR_W,
    MAX_COLOURS,
    Canvas,
    colours,
    draw_bars,
    draw_line,
    encoded_legend,
    fit_value_axes,
    human_bytes,
    log2_size_axis,
    set_title,
    spans_decades,
    ZERO_NOTE,
)
from .points import (
    BAND_NOTE,
    Plot,
    PlotContext,
    Point,
    axis_value_key,
    detectable_text,
    headline_label,
    headline_scale,
    metric_point,
    rest_text,
    richest,
    slug,
    whisker_text,
)

MAX_BARS = 40  # cases per bar chart; more are split over several figures


def _show(axis: str, v: str) -> str:
    return human_bytes(int(v)) if axis == "bytes" and v.isdigit() else v


def _peak(ctx: PlotContext, desc: FamilyDescriptor, cases: list[tuple[int, Case]], fixed: dict[str, str]):
    """(value, label) of the host link's peak where the panel's cases cross it and the headline is a rate."""
    if desc.headline_kind != "rate" or desc.unit != "GB/s":
        return []
    out = []
    # Each GPU's own link: under --device=all a panel may hold GPUs of different links.
    for i, gpu in sorted({(i, _gpu_of(c)) for i, c in cases if desc.crosses_host_link(c)},
                         key=lambda ig: (ig[0], -1 if ig[1] is None else ig[1])):
        peak = host_link_peak(ctx.files[i], gpu)
        if peak is None:
            continue
        both = "bidir" in fixed.values() or any(c.axis("dir") == "bidir" for _, c in cases)
        line = (2 * peak[0], f"host link peak: 2 x {peak[1]} {2 * peak[0]:.1f} GB/s") if both else \
            (peak[0], f"host link peak: {peak[1]} {peak[0]:.1f} GB/s per direction")
        if line not in out:
            out.append(line)
    return out


def _gpu_of(c: Case) -> int | None:
    """The GPU a case ran on where its name says (device, or the source of a pair); None: the file's GPU."""
    where = c.axis("device") or c.axis("src")
    return int(where) if where is not None and where.isdigit() else None


def _headroom(axes: list, peaks) -> None:
    """Raises the top of the value axes so that each peak line sits at most at 92% of their height, leaving
    its label (drawn above the line) inside the panel; on a log axis the fraction is of the decades shown."""
    if not peaks or not axes:
        return
    lo, hi = axes[0].get_ylim()
    top = max(v for v, _ in peaks)
    if axes[0].get_yscale() == "log":
        if lo > 0 and top > lo:
            hi = max(hi, lo * (top / lo) ** (1 / 0.92))
    elif top > lo:
        hi = max(hi, lo + (top - lo) / 0.92)
    for ax in axes:
        ax.set_ylim(lo, hi)


def x_values(ctx: PlotContext, desc: FamilyDescriptor) -> dict[float, str]:
    """The numeric values of desc.plot['x'] over the family's good cases in every file (value -> as named)."""
    x = desc.plot["x"]
    out: dict[float, str] = {}
    for f in ctx.files:
        for c in f.ok_cases():
            v = c.axis(x) if c.family == desc.name else None
            if v is None:
                continue
            try:
                out.setdefault(float(v), v)
            except ValueError:
                continue
    return out


def twins_adjacent(cases: list[Case]) -> list[str]:
    """The cases' keys ordered by their axes (each axis in axis_value_key order, a case without the axis
    first), so that a case and its twin that only adds an axis sit next to each other:
    dir:h2d/mem:pinned/bytes:N directly followed by dir:h2d/mem:pinned/engine:sm/bytes:N.

    An axis is a twin axis where removing it from a case leaves another case's axes; the twin axes are
    sorted on last, the others in the order they first appear in the names."""
    axes: list[str] = []
    for c in cases:
        axes += [k for k, _ in c.name.axes if k not in axes]
    have = {frozenset(c.name.axes) for c in cases}
    twin = {k for c in cases for k, v in c.name.axes if frozenset(c.name.axes) - {(k, v)} in have}
    order = sorted(axes, key=lambda a: (a in twin, axes.index(a)))

    def key(c: Case):
        return tuple((0,) if c.axis(a) is None else (1, axis_value_key(a, c.axis(a))) for a in order)

    return [c.key for c in sorted(cases, key=key)]


def _series_text(axes: tuple[str, ...], sv: tuple | None, device: str | None = None) -> str:
    """'mem: pinned, engine: sm, GPU 1': a colour's legend entry ('' for none)."""
    parts = [f"{a}: {_show(a, v)}" for a, v in zip(axes, sv or ()) if v is not None]
    if device is not None:
        parts.append(f"GPU {device}")
    return ", ".join(parts)


def _series_of(c: Case, axes: tuple[str, ...]) -> tuple | None:
    sv = tuple(c.axis(a) for a in axes)
    return sv if any(v is not None for v in sv) else None


def _series_key(axes: tuple[str, ...], sv: tuple | None) -> tuple:
    return tuple(axis_value_key(a, v) for a, v in zip(axes, sv)) if sv else ()


def line_plots(ctx: PlotContext, desc: FamilyDescriptor, panels: tuple[str, ...] | None = None,
               kind: str | None = None, title: str | None = None) -> list[tuple[Plot, Canvas]]:
    """The headline against desc.plot['x']: a figure per value of the axes no hint names, a panel per value
    of `panels` (default: the panel hint), a line per file, series value and GPU: its colour the series
    value (and GPU), its line style and marker the file."""
    from matplotlib.ticker import NullLocator

    x = desc.plot["x"]
    # Several axes may share the series: "series=mem,engine" draws each memory kind's copy-engine and SM
    # lines side by side in one panel.
    series_axes = tuple(a.strip() for a in desc.plot.get("series", "").split(",") if a.strip())
    panel_axes = panels if panels is not None else tuple(a for a in (desc.plot.get("panel"),) if a)
    kind = kind or desc.kind
    used = {x, "device"} | set(panel_axes) | set(series_axes)
    picked: list[tuple[int, Case]] = []
    for i, f in enumerate(ctx.files):
        for c in f.ok_cases():
            if c.family != desc.name or c.axis(x) is None:
                continue
            try:
                float(c.axis(x))
            except ValueError:
                continue
            picked.append((i, c))
    devices = {c.axis("device") for _, c in picked}
    # Each GPU of a --device=all run is a colour of its own while the colours stay few, else a figure.
    gpu_figures = len(devices) > 1 and len({_series_of(c, series_axes) for _, c in picked}) * len(devices) > \
        MAX_COLOURS
    groups: dict[tuple, dict[tuple, dict[tuple, list[tuple[int, Case]]]]] = {}
    for i, c in picked:
        fixed = tuple((k, v) for k, v in c.name.axes if k not in used)
        if gpu_figures and c.axis("device") is not None:
            fixed += (("device", c.axis("device")),)
        pv = tuple(c.axis(a, "-") for a in panel_axes)
        ck = (_series_of(c, series_axes), None if gpu_figures else c.axis("device"))
        groups.setdefault(fixed, {}).setdefault(pv, {}).setdefault((i, ck), []).append((i, c))
    groups = richest(groups, ctx.one_per_kind)

    def colour_keys_of(figures) -> list:
        return sorted({ck for panels in figures for per in panels.values() for _, ck in per},
                      key=lambda ck: (_series_key(series_axes, ck[0]), axis_value_key("device", ck[1])))

    # A colour per series value (and GPU): the same in every figure of the family where the family's
    # colours are few enough to tell apart, else counted afresh in each figure.
    family_keys = colour_keys_of(groups.values())

    def label(i: int, ck) -> str:
        return ", ".join(p for p in (ctx.labels[i], _series_text(series_axes, *ck)) if p)

    ytitle = headline_label(desc)
    out = []
    for fixed in sorted(groups, key=lambda fx: tuple(axis_value_key(k, v) for k, v in fx)):
        by_panel = groups[fixed]
        colour_keys = family_keys if len(family_keys) <= MAX_COLOURS else colour_keys_of([by_panel])
        colour_of = dict(zip(colour_keys, colours(len(colour_keys))))
        pkeys = sorted(by_panel, key=lambda pv: tuple(axis_value_key(a, v) for a, v in zip(panel_axes, pv)))
        ncols = min(3, len(pkeys))
        nrows = math.ceil(len(pkeys) / ncols)
        canvas = Canvas(nrows, ncols)
        npoints = 0
        noise_drawn = p99_drawn = zero_drawn = False
        xs_all: list[float] = []
        centres: list[float] = []
        reach: list[float] = []
        all_peaks = []
        cases_of: dict[tuple, list[Case]] = {}  # colour key -> its cases, every file's
        files_drawn: dict[int, list[Case]] = {}
        panels_drawn = []
        for n, pv in enumerate(pkeys):
            ax = canvas.axes[n // ncols][n % ncols]
            panels_drawn.append(ax)
            for i, ck in sorted(by_panel[pv], key=lambda ick: (colour_keys.index(ick[1]), ick[0])):
                cases = by_panel[pv][(i, ck)]
                pts, upper = [], []
                for _, c in cases:
                    scale = headline_scale(desc, c)
                    p = metric_point(c, desc.headline, float(c.axis(x)), scale,
                                     headline=headline_of(ctx.files[i], desc.name))
                    if p:
                        pts.append(p)
                    u = c.aggregate("p99", desc.headline)
                    if u is not None and math.isfinite(u):
                        upper.append(Point(float(c.axis(x)), scale(u)))
                if not pts:
                    continue
                # The p99 line already shows how far the repetitions reach; noise_pct bands are drawn anyway.
                band = not upper
                npoints += len(pts)
                noise_drawn |= any(p.noise for p in pts)
                xs_all += [p.x for p in pts]
                centres += [p.y for p in pts] + [p.y for p in upper]
                reach += [v for p in pts if (band or p.noise) and not (p.lo is not None and p.lo <= 0 < p.y)
                          for v in (p.lo, p.hi) if v is not None]
                cases_of.setdefault(ck, []).extend(c for _, c in cases)
                files_drawn.setdefault(i, []).extend(c for _, c in cases)
                zero_drawn |= draw_line(ax, pts, colour_of[ck], label(i, ck), file=i, band=band)
                if upper:
                    p99_drawn = True
                    draw_line(ax, upper, colour_of[ck], f"{label(i, ck)} (p99)", file=i, band=False, thin=True)
            peaks = _peak(ctx, desc, [ic for per in by_panel[pv].values() for ic in per],
                          dict(fixed) | dict(zip(panel_axes, pv)))
            for value, text in peaks:
                ax.axhline(value, color="0.35", ls="--", lw=1)
                ax.annotate(text, (0.01, value), xycoords=("axes fraction", "data"), va="bottom", fontsize=8,
                            color="0.25")
            all_peaks += peaks
            ax.set_title(", ".join(f"{a}: {_show(a, v)}" for a, v in zip(panel_axes, pv)) or desc.name, fontsize=10)
            ax.grid(True, which="major", alpha=0.3)
        # The panels show one quantity: one value scale and range, one x range.
        fit_value_axes(panels_drawn, centres, reach)
        _headroom(panels_drawn, all_peaks)
        for ax in panels_drawn:
            if x == "bytes":
                log2_size_axis(ax, xs_all, f"{desc.plot.get('xlabel', 'transfer size')} (log2 scale)")
            else:
                ax.set_xlabel(x)
                if spans_decades(xs_all):
                    ax.set_xscale("log", base=2)
                    ticks = sorted(set(xs_all))
                    if len(ticks) <= 12:  # each count as a plain number, not as a power of two
                        ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
                        ax.xaxis.set_minor_locator(NullLocator())
            if xs_all and ax.get_xscale() == "log":
                ax.set_xlim(min(xs_all) / 1.4, max(xs_all) * 1.4)
        for n in range(len(pkeys), nrows * ncols):
            canvas.axes[n // ncols][n % ncols].set_visible(False)
        entries = [(colour_of[ck], _series_text(series_axes, *ck) + detectable_text(cases_of[ck]))
                   for ck in colour_keys if ck in cases_of and ck != (None, None)]
        files = [(i, ctx.labels[i] + ("" if entries else detectable_text(files_drawn[i])))
                 for i in sorted(files_drawn)]
        notes = [BAND_NOTE if noise_drawn else "", ZERO_NOTE if zero_drawn else "",
                 "thin line without markers: p99" if p99_drawn else ""]
        encoded_legend(canvas, entries, files, ", ".join(series_axes + (("GPU",) if len(devices) > 1 and
                                                                        not gpu_figures else ())), notes=notes)
        what = "bandwidth" if desc.headline == "gbps" else "time" if desc.is_time else desc.headline
        # The x axis as its label names it: a Latency footprint is not a transfer's size.
        head = title or f"{desc.name} {what} vs. {desc.plot.get('xlabel', 'size') if x == 'bytes' else x}"
        sub = rest_text(fixed)
        set_title(canvas, head + (f": {sub}" if sub else ""), desc.summary)
        # The panels share the quantity: its label once per row, left of the first panel, over two lines
        # where one would be taller than the panel (and run into the title or the panel below).
        canvas.fit_ylabel([row[0] for row in canvas.axes], ytitle, headline_label(desc, sep=",\n"))
        stem = slug("_".join([kind] + [f"{k}-{v}" for k, v in fixed]))
        out.append((Plot(kind, stem, head + (f" ({sub})" if sub else ""), points=npoints), canvas))
    return out


def bar_plots(ctx: PlotContext, desc: FamilyDescriptor,
              at: tuple[str, str] | None = None) -> list[tuple[Plot, Canvas]]:
    """A bar per case and file, the cases in the order the files first name them; a bar's colour is the
    case's series value, its hatching the file.

    at: (axis, value), the one x value every case of a family with an x hint is at.  The cases are then
    ordered by their axes, twins side by side (twins_adjacent), each bar carries its value so that twins
    compare at a glance, and the value goes into the title instead of every case's label."""
    first: dict[str, Case] = {}
    for f in ctx.files:
        for c in f.ok_cases():
            if c.family == desc.name and c.key not in first:
                first[c.key] = c
    keys = twins_adjacent(list(first.values())) if at else list(first)
    shared = f"{at[0]}:{at[1]}" if at else None
    if not keys:
        return []
    series_axes = tuple(a.strip() for a in desc.plot.get("series", "").split(",") if a.strip())
    svs = sorted({_series_of(first[k], series_axes) for k in keys}, key=lambda sv: _series_key(series_axes, sv))
    palette = colours(len(svs))
    colour_of = {sv: palette[n] for n, sv in enumerate(svs)}
    chunks = [keys[k:k + MAX_BARS] for k in range(0, len(keys), MAX_BARS)]
    out = []
    for part, chunk in enumerate(chunks):
        # A slot in each row per file that has a case of the chunk: a file without any leaves no gap.
        slot = {i: n for n, i in enumerate(i for i, f in enumerate(ctx.files) if any(
            key in f.cases and f.cases[key].ok for key in chunk))}
        n = max(1, len(slot))
        names = ["/".join(seg for seg in k.split("/")[1:] if seg != shared) or k for k in chunk]
        canvas = Canvas(1, 1, w=9.0, h=max(2.5, 0.28 * len(chunk) * max(1, n) ** 0.5 + 1.2),
                        left=0.35 + max(len(t) for t in names) * CHAR_W * 8)
        ax = canvas.axes[0][0]
        hgt = 0.8 / n
        npoints = 0
        centres, reach = [], []
        drawn: list[Point] = []
        cases_of: dict = {}
        files_drawn: dict[int, list[Case]] = {}
        for i, f in enumerate(ctx.files):
            by_sv: dict = {}
            for k, key in enumerate(chunk):
                c = f.cases.get(key)
                if c is None or not c.ok or not c.has_metric(desc.headline):
                    continue
                p = metric_point(c, desc.headline, 0.0, headline_scale(desc, c), headline=headline_of(f, desc.name))
                if p:
                    ys, pts, shown = by_sv.setdefault(_series_of(c, series_axes), ([], [], []))
                    ys.append(k - 0.4 + hgt * slot[i] + hgt / 2)
                    pts.append(p)
                    shown.append(c)
                    centres.append(p.y)
                    reach += [v for v in (p.lo, p.hi) if v is not None]
            for sv, (ys, pts, shown) in sorted(by_sv.items(), key=lambda kv: svs.index(kv[0])):
                npoints += len(pts)
                drawn += pts
                cases_of.setdefault(sv, []).extend(shown)
                files_drawn.setdefault(i, []).extend(shown)
                draw_bars(ax, ys, pts, hgt, colour_of[sv], i,
                          ", ".join(t for t in (ctx.labels[i], _series_text(series_axes, sv)) if t), horizontal=True)
                if at:
                    # Past the whisker's end, where the label would otherwise be crossed by it.
                    for y, p in zip(ys, pts):
                        ax.annotate(f"{p.y:.0f}" if p.y >= 100 else f"{p.y:.3g}", (max(p.y, p.hi or p.y), y),
                                    xytext=(3, 0), textcoords="offset points", va="center", fontsize=7)
        ax.set_yticks(range(len(chunk)), names, fontsize=8)
        ax.set_ylim(len(chunk) - 0.5, -0.5)
        fit_value_axes([ax], centres, reach, which="x")
        if at and centres:  # room right of the longest bar for its value
            lo, hi = ax.get_xlim()
            ax.set_xlim(lo, hi * 1.5 if ax.get_xscale() == "log" else hi * 1.08)
        spans = whisker_text(drawn)
        ax.set_xlabel(headline_label(desc) + ":\nmedian" + (f"; {spans}" if spans else ""))
        ax.grid(True, axis="x", alpha=0.3)
        entries = [(colour_of[sv], _series_text(series_axes, sv) + detectable_text(cases_of[sv]))
                   for sv in svs if sv in cases_of and sv is not None]
        files = [(i, ctx.labels[i] + ("" if entries else detectable_text(files_drawn[i])))
                 for i in sorted(files_drawn)]
        encoded_legend(canvas, entries, files, ", ".join(series_axes), bar=True, ncols=2)
        what = "bandwidth" if desc.headline == "gbps" else "time" if desc.is_time else desc.headline
        title = f"{desc.name}: {what} per case" + (f", {at[0]}: {_show(*at)}" if at else "") + (
            f" ({part + 1} of {len(chunks)})" if len(chunks) > 1 else "")
        set_title(canvas, title, desc.summary)
        stem = slug(f"{desc.kind}" + (f"_{part + 1}" if len(chunks) > 1 else ""))
        out.append((Plot(desc.kind, stem, title, points=npoints), canvas))
    return out


def generic_plots(ctx: PlotContext, desc: FamilyDescriptor) -> list[tuple[Plot, Canvas]]:
    """Line plots against the x hint; a bar chart without one, or where every case is at the same x (its
    lines would be single dots stacked in a column), with the cases that differ in one axis side by side."""
    if not desc.plot.get("x"):
        return bar_plots(ctx, desc)
    xs = x_values(ctx, desc)
    if len(xs) == 1:
        x = desc.plot["x"]
        return bar_plots(ctx, desc, at=(x, next(iter(xs.values()))))
    return line_plots(ctx, desc)
