"""Overlap: speedup and efficiency against stream count, a column per sync placement, the ideal dotted."""

from __future__ import annotations

import statistics

from ..canvas import (
    Canvas,
    Plot,
    PlotContext,
    colours,
    draw_line,
    metric_point,
    noise_band_handle,
    order_values,
    rest_axes,
    rest_text,
    richest,
    set_title,
    slug,
)
from ...reading.load import Case
from ..canvas import MEM_ORDER

FAMILY = "Overlap"
SECTIONS = {"overlap": "Copy/compute overlap"}
SCHEDULE_STYLE = {"serial": ("o", ":"), "depth_first": ("s", "--"), "breadth_first": ("^", "-")}


def draw(ctx: PlotContext):
    return overlap_plots(ctx.files, ctx.labels, ctx.one_per_kind)


def overlap_plots(files, labels, one_per_kind: bool = False):
    """Speedup and efficiency against stream count: rows are the two counters, columns the sync placements."""
    used = ("schedule", "streams", "sync")
    groups: dict[tuple, dict[tuple[int, str, str], list[Case]]] = {}
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

    palette = colours(len(files))
    out = []
    for gk in sorted(groups, key=group_order):
        series = groups[gk]
        syncs = order_values({s for _, _, s in series}, ("end", "per_stream", "per_chunk", "event_join"))
        canvas = Canvas(2, len(syncs), w=4.6, h=3.3)
        npoints = 0
        noise_drawn = False
        for col, sync in enumerate(syncs):
            ax_s, ax_e = canvas.axes[0][col], canvas.axes[1][col]
            ideal: dict[int, dict[int, list[float]]] = {}
            xs_all: list[int] = []
            for (i, sched, s), cases in sorted(series.items(), key=lambda kv: (
                    kv[0][0], list(SCHEDULE_STYLE).index(kv[0][1]) if kv[0][1] in SCHEDULE_STYLE else 9, kv[0][1])):
                if s != sync:
                    continue
                marker, ls = SCHEDULE_STYLE.get(sched, ("D", "-."))
                desc = files[i].descriptor(FAMILY)
                headline = desc.headline if desc else None
                sp, ef = [], []
                for c in cases:
                    x = c.axis_int("streams")
                    xs_all.append(x)
                    p = metric_point(c, "speedup", x, headline=headline)
                    e = metric_point(c, "efficiency", x, headline=headline)
                    noise_drawn |= bool(p and p.noise) or bool(e and e.noise)
                    if p:
                        sp.append(p)
                    if e:
                        ef.append(e)
                    if p and e and e.y > 0:
                        ideal.setdefault(i, {}).setdefault(x, []).append(p.y / e.y)
                npoints += len(sp)
                if sp:
                    draw_line(ax_s, sp, palette[i], f"{labels[i]}, {sched}", marker, ls, order=i)
                if ef:
                    draw_line(ax_e, ef, palette[i], f"{labels[i]}, {sched}", marker, ls, order=i)
            for i, by_x in sorted(ideal.items()):
                xs = sorted(by_x)
                ax_s.plot(xs, [statistics.median(by_x[x]) for x in xs], color=palette[i], ls=(0, (1, 1)), lw=2.2, alpha=0.6)
            ax_e.axhline(1.0, color="0.35", ls="--", lw=1)
            for ax, what in ((ax_s, "speedup over serial (x)"), (ax_e, "efficiency (ideal time / time)")):
                ax.set_xscale("log", base=2)
                if xs_all:
                    ticks = sorted(set(xs_all))
                    ax.set_xticks(ticks, [str(t) for t in ticks])
                    ax.minorticks_off()
                ax.set_xlabel("streams")
                ax.set_ylabel(what)
                ax.grid(True, alpha=0.3)
                ax.set_ylim(bottom=0)
                ax.set_title(f"sync: {sync}", fontsize=10)
            ax_e.set_ylim(0, max(1.1, ax_e.get_ylim()[1]))
        from matplotlib.lines import Line2D

        used_files = sorted({i for i, _, _ in series})
        used_scheds = [s for s in SCHEDULE_STYLE if any(sc == s for _, sc, _ in series)]
        used_scheds += sorted({sc for _, sc, _ in series} - set(used_scheds))
        handles = [Line2D([], [], color=palette[i], lw=3) for i in used_files]
        names = [labels[i] for i in used_files]
        for sc in used_scheds:
            marker, ls = SCHEDULE_STYLE.get(sc, ("D", "-."))
            handles.append(Line2D([], [], color="0.2", marker=marker, ls=ls))
            names.append(f"schedule: {sc}")
        handles += [Line2D([], [], color="0.4", ls=(0, (1, 1)), lw=2.2), Line2D([], [], color="0.35", ls="--")]
        names += ["ideal speedup (speedup / efficiency)", "ideal efficiency (1.0)"]
        if noise_drawn:
            handles.append(noise_band_handle())
            names.append(handles[-1].get_label())
        canvas.legend(handles, names, ncols=4)
        out.append(titled("overlap", canvas, "Copy/compute overlap: speedup and efficiency vs. streams", gk, npoints))
    return out


def titled(kind: str, canvas: Canvas, title: str, gk, npoints: int):
    """Titles a figure of one group of cases (`gk`: its fixed axes) and names it after the kind and group."""
    sub = rest_text(gk)
    set_title(canvas, title, sub)
    stem = slug(f"{kind}_" + "_".join(f"{k}-{v}" for k, v in gk))
    return Plot(kind, stem, f"{title} ({sub})", points=npoints), canvas


