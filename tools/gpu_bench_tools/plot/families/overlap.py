"""Overlap: speedup and efficiency against stream count, a column per sync placement run at several stream
counts, and bars for those run at one; colour is the schedule, line style and marker (or hatching) the file."""

from __future__ import annotations

import statistics
from collections import Counter

from ..canvas import CHAR_W, Canvas, colours, draw_bars, draw_line, encoded_legend, fit_value_axes, set_title, ZERO_NOTE
from ..points import (
    NOISE_LEGEND,
    Plot,
    PlotContext,
    Point,
    metric_point,
    order_values,
    rest_axes,
    rest_text,
    richest,
    slug,
)
from ...reading.load import Case
from ..points import MEM_ORDER

FAMILY = "Overlap"
SECTIONS = {"overlap": "Copy/compute overlap"}
SCHEDULES = ("serial", "depth_first", "breadth_first")
SYNCS = ("end", "per_stream", "per_chunk", "event_join")
ROWS = (("speedup", "speedup over serial (x)"), ("efficiency", "efficiency (ideal time / time)"))
IDEAL_NOTE = "wide grey line: ideal speedup (speedup / efficiency); dashed grey line: ideal efficiency (1.0)"

Series = dict[tuple[int, str, str], list[Case]]  # (file, schedule, sync) -> its cases


def draw(ctx: PlotContext):
    return overlap_plots(ctx.files, ctx.labels, ctx.one_per_kind)


def overlap_plots(files, labels, one_per_kind: bool = False):
    """A figure per group of cases (the axes other than schedule, streams and sync) that runs a sync placement
    at several stream counts: speedup and efficiency against streams, a column per such placement, and a
    column of bars for the placements run at one stream count. The groups run at one stream count alone
    share one bar figure, a row per group."""
    used = ("schedule", "streams", "sync")
    groups: dict[tuple, Series] = {}
    for i, f in enumerate(files):
        for c in f.ok_cases():
            if c.family != "Overlap" or c.axis_int("streams") is None:
                continue
            gk = rest_axes(c, used)
            groups.setdefault(gk, {}).setdefault((i, c.axis("schedule", "-"), c.axis("sync", "-")), []).append(c)
    groups = richest(groups, one_per_kind)

    def group_order(gk):
        d = dict(gk)
        mem = d.get("mem", "")
        return (MEM_ORDER.index(mem) if mem in MEM_ORDER else 99, -int(d.get("bytes", "0") or 0)
                if str(d.get("bytes", "0")).isdigit() else 0, gk)

    scheds = order_values({sc for series in groups.values() for _, sc, _ in series}, SCHEDULES)
    colour_of = dict(zip(scheds, colours(len(scheds))))
    out, flat = [], []
    for gk in sorted(groups, key=group_order):
        if _swept_syncs(groups[gk]):
            out.append(_sweep_figure(files, labels, gk, groups[gk], colour_of))
        else:
            flat.append(gk)
    if flat:
        out.append(_flat_figure(files, labels, {gk: groups[gk] for gk in flat}, list(groups), colour_of))
    return out


def _swept_syncs(series: Series) -> list[str]:
    """The sync placements some file and schedule ran at more than one stream count."""
    return order_values({sy for (_, _, sy), cases in series.items()
                         if len({c.axis_int("streams") for c in cases}) > 1}, SYNCS)


def _points(files, i: int, c: Case) -> dict[str, Point | None]:
    desc = files[i].descriptor(FAMILY)
    headline = desc.headline if desc else None
    x = c.axis_int("streams")
    return {m: metric_point(c, m, x, headline=headline) for m, _ in ROWS}


def _slots(series: Series, keep) -> list[tuple[str, int]]:
    """(schedule, file) of each bar in a group of bars: schedules in their usual order, then files."""
    have = {(sc, i) for (i, sc, sy), cases in series.items() for c in cases if keep(sy, c)}
    return sorted(have, key=lambda si: (SCHEDULES.index(si[0]) if si[0] in SCHEDULES else 9, si[0], si[1]))


def _sweep_figure(files, labels, gk, series: Series, colour_of: dict):
    from matplotlib.ticker import NullLocator

    swept = _swept_syncs(series)
    single = [s for s in order_values({sy for _, _, sy in series}, SYNCS) if s not in swept]
    ncols = len(swept) + (1 if single else 0)
    canvas = Canvas(2, ncols, w=4.6, h=3.3)
    drawn_cases: set[int] = set()  # the cases drawn, on a line or a bar (the latter may repeat a line's)
    noise_drawn = zero_drawn = False
    centres = {m: [] for m, _ in ROWS}
    reach = {m: [] for m, _ in ROWS}
    files_drawn: set[int] = set()
    scheds_drawn: set[str] = set()
    for col, sync in enumerate(swept):
        ax_s, ax_e = canvas.axes[0][col], canvas.axes[1][col]
        ideal: dict[int, dict[int, list[float]]] = {}
        xs_all: list[int] = []
        for (i, sched, s), cases in sorted(series.items(), key=lambda kv: (
                SCHEDULES.index(kv[0][1]) if kv[0][1] in SCHEDULES else 9, kv[0][1], kv[0][0])):
            if s != sync:
                continue
            drawn = {m: [] for m, _ in ROWS}
            for c in cases:
                pts = _points(files, i, c)
                xs_all.append(c.axis_int("streams"))
                if pts["speedup"] is not None:
                    drawn_cases.add(id(c))
                for m, p in pts.items():
                    if p:
                        drawn[m].append(p)
                        noise_drawn |= p.noise
                        centres[m].append(p.y)
                        if not (p.lo is not None and p.lo <= 0 < p.y):
                            reach[m] += [v for v in (p.lo, p.hi) if v is not None]
                sp, ef = pts["speedup"], pts["efficiency"]
                if sp and ef and ef.y > 0:
                    ideal.setdefault(i, {}).setdefault(sp.x, []).append(sp.y / ef.y)
            for ax, m in ((ax_s, "speedup"), (ax_e, "efficiency")):
                if drawn[m]:
                    zero_drawn |= draw_line(ax, drawn[m], colour_of[sched], f"{labels[i]}, schedule: {sched}", file=i)
                    files_drawn.add(i)
                    scheds_drawn.add(sched)
        for i, by_x in sorted(ideal.items()):
            xs = sorted(by_x)
            ideal_ys = [statistics.median(by_x[x]) for x in xs]
            ax_s.plot(xs, ideal_ys, color="0.55", lw=5, alpha=0.35, solid_capstyle="round", zorder=1)
            centres["speedup"] += ideal_ys
        for ax in (ax_s, ax_e):
            ax.set_xscale("log", base=2)
            if xs_all:
                ticks = sorted(set(xs_all))
                ax.set_xticks(ticks, [str(t) for t in ticks])
                ax.xaxis.set_minor_locator(NullLocator())
            ax.set_xlabel("streams")
            ax.set_title(f"sync: {sync}", fontsize=10)
    if single:
        # The placements run at one stream count, and the swept ones at the same count beside them.
        at = {c.axis_int("streams") for (_, _, sy), cases in series.items() if sy in single for c in cases}
        cats = [(sy, n) for sy in swept + single for n in sorted(at)
                if any(s == sy and c.axis_int("streams") == n for (_, _, s), cases in series.items() for c in cases)]
        drawn_bars = _bars([canvas.axes[0][-1], canvas.axes[1][-1]], files, labels, series, cats,
                           lambda sy, c: (sy, c.axis_int("streams")), colour_of, centres, reach)
        drawn_cases |= drawn_bars["cases"]
        noise_drawn |= drawn_bars["noise"]
        files_drawn |= drawn_bars["files"]
        scheds_drawn |= drawn_bars["scheds"]
        for ax in (canvas.axes[0][-1], canvas.axes[1][-1]):
            one = len(at) == 1
            ax.set_xticks(range(len(cats)), [sy if one else f"{sy}\n{n} streams" for sy, n in cats])
            ax.set_xlabel(f"sync, at {next(iter(at))} streams" if one else "sync")
            ax.set_title("each sync at one stream count", fontsize=10)
    for row, (m, what) in enumerate(ROWS):
        fit_value_axes(list(canvas.axes[row]), centres[m], reach[m])
        canvas.axes[row][0].set_ylabel(what)  # the row's panels share it
        for ax in canvas.axes[row]:
            ax.grid(True, axis="y" if ax in (canvas.axes[0][-1], canvas.axes[1][-1]) and single else "both",
                    alpha=0.3)
    for ax in canvas.axes[1]:
        ax.axhline(1.0, color="0.35", ls="--", lw=1)
        lo, hi = ax.get_ylim()
        ax.set_ylim(lo, max(1.1, hi))
    interval = ("band or whisker" if single else "band") + f": {NOISE_LEGEND}"
    _legend(canvas, colour_of, scheds_drawn, labels, files_drawn, bar="both" if single else False,
            notes=[IDEAL_NOTE, interval if noise_drawn else "", ZERO_NOTE if zero_drawn else ""])
    return titled("overlap", canvas, "Copy/compute overlap: speedup and efficiency vs. streams", gk, len(drawn_cases))


def _bars(axes, files, labels, series: Series, cats: list, cat_of, colour_of: dict, centres: dict, reach: dict,
          horizontal: bool = False) -> dict:
    """Speedup bars on axes[0], efficiency bars on axes[1]: a group per category (cat_of(sync, case) says a
    case's; None leaves it out), a bar per schedule and file in it."""
    keep = {(sy, id(c)) for (_, _, sy), cases in series.items() for c in cases if cat_of(sy, c) in cats}
    slots = _slots(series, lambda sy, c: (sy, id(c)) in keep)
    width = 0.8 / max(1, len(slots))
    out = {"cases": set(), "noise": False, "files": set(), "scheds": set()}
    for n, (sched, i) in enumerate(slots):
        per_cat: dict = {}
        for (fi, sc, sy), cases in series.items():
            if fi != i or sc != sched:
                continue
            for c in cases:
                cat = cat_of(sy, c)
                if cat in cats:
                    per_cat[cat] = _points(files, i, c)
                    if per_cat[cat]["speedup"] is not None:
                        out["cases"].add(id(c))
        if not per_cat:
            continue
        pos = [k - 0.4 + width * (n + 0.5) for k, cat in enumerate(cats) if cat in per_cat]
        for ax, (m, _) in zip(axes, ROWS):
            pts = [per_cat[cat][m] for cat in cats if cat in per_cat]
            draw_bars(ax, pos, pts, width, colour_of[sched], i, f"{labels[i]}, schedule: {sched}",
                      horizontal=horizontal)
            for p in pts:
                if p is not None:
                    centres[m].append(p.y)
                    reach[m] += [v for v in (p.lo, p.hi) if v is not None]
                    out["noise"] |= p.noise
        out["files"].add(i)
        out["scheds"].add(sched)
    return out


def _flat_figure(files, labels, groups: dict[tuple, Series], every_group: list[tuple], colour_of: dict):
    """The groups run at one stream count per schedule: a row of bars per group (and sync placement), each
    group named by the axes where it differs from the most usual value of that axis."""
    usual = {}
    for k in {k for gk in every_group for k, _ in gk}:
        usual[k] = Counter(dict(gk).get(k) for gk in every_group).most_common(1)[0][0]
    syncs = order_values({sy for series in groups.values() for _, _, sy in series}, SYNCS)

    def name(gk, sync) -> str:
        differs = [(k, v) for k, v in gk if v != usual[k]] or list(gk)
        text = rest_text(tuple(differs))
        return text + (f", sync: {sync}" if len(syncs) > 1 else "")

    cats = [(gk, sy) for gk in groups for sy in syncs if any(s == sy for _, _, s in groups[gk])]
    merged: Series = {}
    for gk, series in groups.items():
        for (i, sc, sy), cases in series.items():
            merged.setdefault((i, sc, sy), []).extend(cases)
    group_of = {id(c): gk for gk, series in groups.items() for cases in series.values() for c in cases}
    names = [name(gk, sy) for gk, sy in cats]
    nslots = len(_slots(merged, lambda sy, c: True))
    canvas = Canvas(1, 2, w=5.2, h=max(2.6, 0.22 * len(cats) * max(1, nslots) ** 0.6 + 1.4), sharey=True,
                    left=0.35 + max(len(t) for t in names) * CHAR_W * 9)
    centres = {m: [] for m, _ in ROWS}
    reach = {m: [] for m, _ in ROWS}
    drawn = _bars(list(canvas.axes[0]), files, labels, merged, cats, lambda sy, c: (group_of[id(c)], sy),
                  colour_of, centres, reach, horizontal=True)
    ax_s, ax_e = canvas.axes[0]
    ax_s.set_yticks(range(len(cats)), names, fontsize=9)
    ax_s.set_ylim(len(cats) - 0.5, -0.5)
    for ax, (m, what) in zip((ax_s, ax_e), ROWS):
        fit_value_axes([ax], centres[m], reach[m], which="x")
        ax.set_xlabel(what)
        ax.grid(True, axis="x", alpha=0.3)
    ax_s.axvline(1.0, color="0.35", ls=":", lw=1)
    ax_e.axvline(1.0, color="0.35", ls="--", lw=1)
    lo, hi = ax_e.get_xlim()
    ax_e.set_xlim(lo, max(1.1, hi))
    _legend(canvas, colour_of, drawn["scheds"], labels, drawn["files"], bar=True,
            notes=["dotted grey line: no speedup (1.0); dashed grey line: ideal efficiency (1.0)",
                   f"whiskers: {NOISE_LEGEND}" if drawn["noise"] else ""])
    streams: dict[str, set[int]] = {}
    for (_, sc, _), cases in merged.items():
        streams.setdefault(sc, set()).update(c.axis_int("streams") for c in cases)
    at = "; ".join(f"{sc} at {', '.join(map(str, sorted(n)))} stream{'s' if max(n) > 1 else ''}"
                   for sc, n in sorted(streams.items(), key=lambda kv: SCHEDULES.index(kv[0])
                                       if kv[0] in SCHEDULES else 9))
    rest = rest_text(tuple(sorted((k, v) for k, v in usual.items() if v is not None)))
    set_title(canvas, "Copy/compute overlap at one stream count", f"{at}; where not named: {rest}")
    stem = "overlap_one_stream_count"
    return Plot("overlap", stem, "Copy/compute overlap at one stream count", points=len(drawn["cases"])), canvas


def _legend(canvas: Canvas, colour_of: dict, scheds: set[str], labels, files: set[int], bar: bool | str,
            notes: list[str]) -> None:
    entries = [(colour_of[sc], f"schedule: {sc}") for sc in colour_of if sc in scheds]
    encoded_legend(canvas, entries, [(i, labels[i]) for i in sorted(files)], "schedule", bar=bar, notes=notes,
                   ncols=3)


def titled(kind: str, canvas: Canvas, title: str, gk, npoints: int):
    """Titles a figure of one group of cases (`gk`: its fixed axes) and names it after the kind and group."""
    sub = rest_text(gk)
    set_title(canvas, title, sub)
    stem = slug(f"{kind}_" + "_".join(f"{k}-{v}" for k, v in gk))
    return Plot(kind, stem, f"{title} ({sub})", points=npoints), canvas
