"""The figure of any family, driven by its descriptor: the headline against the plot hint's x axis, a panel
per value of its panel axis and a line per file (and series value, and GPU); without an x axis, or where
every case of the family is at one x value (a line of one point is a dot), a bar per case and file.  A case
that crosses the host link gets the link's peak from the device profile."""

from __future__ import annotations

import math

from ..reading.families import FamilyDescriptor, host_link_peak
from ..reading.load import Case, headline_of
from .canvas import (
    FILE_MARKERS,
    Canvas,
    Plot,
    PlotContext,
    Point,
    axis_value_key,
    colours,
    detectable_text,
    draw_line,
    headline_label,
    headline_scale,
    human_bytes,
    log2_size_axis,
    merged_handles,
    metric_point,
    noise_band_handle,
    rest_text,
    richest,
    set_title,
    slug,
    spans_decades,
    value_axis,
    whisker_text,
    whiskers,
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


def _headroom(ax, peaks) -> None:
    """Raises the top of the value axis so that each peak line sits at most at 85% of its height, leaving its
    label (drawn above the line) inside the panel; on a log axis the fraction is of the decades shown."""
    if not peaks:
        return
    lo, hi = ax.get_ylim()
    top = max(v for v, _ in peaks)
    if ax.get_yscale() == "log":
        if lo > 0 and top > lo:
            hi = max(hi, lo * (top / lo) ** (1 / 0.85))
    elif top > lo:
        hi = max(hi, lo + (top - lo) / 0.85)
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


def line_plots(ctx: PlotContext, desc: FamilyDescriptor, panels: tuple[str, ...] | None = None,
               kind: str | None = None, title: str | None = None) -> list[tuple[Plot, Canvas]]:
    """The headline against desc.plot['x']: a figure per value of the axes no hint names, a panel per value
    of `panels` (default: the panel hint), a line per file, series value and GPU."""
    x = desc.plot["x"]
    # Several axes may share the series: "series=mem,engine" draws each memory kind's copy-engine and SM
    # lines side by side in one panel.
    series_axes = tuple(a.strip() for a in desc.plot.get("series", "").split(",") if a.strip())
    panel_axes = panels if panels is not None else tuple(a for a in (desc.plot.get("panel"),) if a)
    kind = kind or desc.kind
    used = {x, "device"} | set(panel_axes) | set(series_axes)
    groups: dict[tuple, dict[str, dict[tuple, list[tuple[int, Case]]]]] = {}
    for i, f in enumerate(ctx.files):
        for c in f.ok_cases():
            if c.family != desc.name or c.axis(x) is None:
                continue
            try:
                float(c.axis(x))
            except ValueError:
                continue
            fixed = tuple((k, v) for k, v in c.name.axes if k not in used)
            pv = tuple(c.axis(a, "-") for a in panel_axes)
            sv = tuple(c.axis(a) for a in series_axes)
            sk = (i, sv if any(v is not None for v in sv) else None, c.axis("device"))
            groups.setdefault(fixed, {}).setdefault(pv, {}).setdefault(sk, []).append((i, c))
    groups = richest(groups, ctx.one_per_kind)
    def series_key(sv):
        return tuple(axis_value_key(a, v) for a, v in zip(series_axes, sv)) if sv else ()

    all_series = sorted({sk for panels in groups.values() for per in panels.values() for sk in per},
                        key=lambda sk: (sk[0], series_key(sk[1]), axis_value_key("device", sk[2])))
    one_per_file = all(sk[1] is None and sk[2] is None for sk in all_series)
    palette = colours(len(ctx.files) if one_per_file else len(all_series))
    colour_of = {sk: palette[sk[0] if one_per_file else n] for n, sk in enumerate(all_series)}

    def label(sk) -> str:
        parts = [ctx.labels[sk[0]]]
        if sk[1] is not None:
            parts += [f"{a}: {_show(a, v)}" for a, v in zip(series_axes, sk[1]) if v is not None]
        if sk[2] is not None:
            parts.append(f"GPU {sk[2]}")
        return ", ".join(parts)

    ytitle = headline_label(desc)
    out = []
    for fixed in sorted(groups, key=lambda fx: tuple(axis_value_key(k, v) for k, v in fx)):
        by_panel = groups[fixed]
        pkeys = sorted(by_panel, key=lambda pv: tuple(axis_value_key(a, v) for a, v in zip(panel_axes, pv)))
        ncols = min(3, len(pkeys))
        nrows = math.ceil(len(pkeys) / ncols)
        canvas = Canvas(nrows, ncols)
        npoints = 0
        noise_drawn = False
        for n, pv in enumerate(pkeys):
            ax = canvas.axes[n // ncols][n % ncols]
            xs_all, ys_all = [], []
            for sk in sorted(by_panel[pv], key=all_series.index):
                cases = by_panel[pv][sk]
                pts, upper = [], []
                for i, c in cases:
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
                ys_all += [v for p in pts for v in (p.y, p.lo, p.hi) if v is not None] + [p.y for p in upper]
                draw_line(ax, pts, colour_of[sk], label(sk) + detectable_text([c for _, c in cases]),
                          marker=FILE_MARKERS[sk[0] % len(FILE_MARKERS)], band=band, order=sk[0])
                if upper:
                    draw_line(ax, upper, colour_of[sk], f"{label(sk)} (p99)", marker="", ls="--", band=False,
                              order=sk[0])
            peaks = _peak(ctx, desc, [ic for per in by_panel[pv].values() for ic in per],
                          dict(fixed) | dict(zip(panel_axes, pv)))
            for value, text in peaks:
                ax.axhline(value, color="0.35", ls="--", lw=1)
                ax.annotate(text, (0.01, value), xycoords=("axes fraction", "data"), va="bottom", fontsize=8,
                            color="0.25")
                ys_all.append(value)
            if x == "bytes":
                log2_size_axis(ax, xs_all, f"{desc.plot.get('xlabel', 'transfer size')} (log2 scale)")
            else:
                ax.set_xlabel(x)
                if spans_decades(xs_all):
                    ax.set_xscale("log", base=2)
            value_axis(ax, ys_all)
            _headroom(ax, peaks)
            ax.set_title(", ".join(f"{a}: {_show(a, v)}" for a, v in zip(panel_axes, pv)) or desc.name, fontsize=10)
            ax.grid(True, which="major", alpha=0.3)
        handles, names = merged_handles(canvas)
        if noise_drawn:
            handles.append(noise_band_handle())
            names.append(handles[-1].get_label())
        canvas.legend(handles, names)
        for n in range(len(pkeys), nrows * ncols):
            canvas.axes[n // ncols][n % ncols].set_visible(False)
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
    """A bar per case and file, the cases in the order the files first name them.

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
    palette = colours(len(ctx.files))
    chunks = [keys[k:k + MAX_BARS] for k in range(0, len(keys), MAX_BARS)]
    out = []
    for part, chunk in enumerate(chunks):
        n = len(ctx.files)
        canvas = Canvas(1, 1, w=9.0, h=max(2.5, 0.28 * len(chunk) * max(1, n) ** 0.5 + 1.2))
        ax = canvas.axes[0][0]
        hgt = 0.8 / n
        npoints = 0
        xs_all = []
        drawn: list[Point] = []
        for i, f in enumerate(ctx.files):
            ys, pts, shown = [], [], []
            for k, key in enumerate(chunk):
                c = f.cases.get(key)
                if c is None or not c.ok or not c.has_metric(desc.headline):
                    continue
                p = metric_point(c, desc.headline, 0.0, headline_scale(desc, c), headline=headline_of(f, desc.name))
                if p:
                    ys.append(k - 0.4 + hgt * i + hgt / 2)
                    pts.append(p)
                    shown.append(c)
                    xs_all += [v for v in (p.y, p.lo, p.hi) if v is not None]
            if pts:
                npoints += len(pts)
                drawn += pts
                ax.barh(ys, [p.y for p in pts], hgt, xerr=whiskers(pts), color=palette[i],
                        label=ctx.labels[i] + detectable_text(shown), capsize=2)
                if at:
                    # Past the whisker's end, where the label would otherwise be crossed by it.
                    for y, p in zip(ys, pts):
                        ax.annotate(f"{p.y:.0f}" if p.y >= 100 else f"{p.y:.3g}", (max(p.y, p.hi or p.y), y),
                                    xytext=(3, 0), textcoords="offset points", va="center", fontsize=7)
        ax.set_yticks(range(len(chunk)), ["/".join(seg for seg in k.split("/")[1:] if seg != shared) or k
                                          for k in chunk], fontsize=8)
        ax.invert_yaxis()
        value_axis(ax, xs_all, which="x")
        if at and xs_all:  # room right of the longest bar for its value
            lo, hi = ax.get_xlim()
            ax.set_xlim(lo, hi * 1.5 if ax.get_xscale() == "log" else hi * 1.08)
        spans = whisker_text(drawn)
        ax.set_xlabel(headline_label(desc) + ":\nmedian" + (f"; {spans}" if spans else ""))
        ax.grid(True, axis="x", which="both", alpha=0.3)
        canvas.legend(ncols=2)
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
