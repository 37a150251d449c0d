"""SyncPlacement: host-clock against CUDA-event time per sync placement, and the error between them; colour is
the clock, hatching the file."""

from __future__ import annotations

import math
import statistics


from ...reading.load import Case
from ..canvas import Canvas, colours, draw_bars, encoded_legend, fit_value_axes
from ..points import PlotContext, Point, metric_point, order_values, rest_axes, whisker_text
from .overlap import titled

FAMILY = "SyncPlacement"
SECTIONS = {"sync_placement": "Sync placement"}


def draw(ctx: PlotContext):
    return sync_placement_plots(ctx.files, ctx.labels)


def sync_placement_plots(files, labels):
    """Host-clock vs. CUDA-event time per sync placement, with the error between them."""
    import numpy as np

    used = ("sync",)
    groups: dict[tuple, dict[int, dict[str, Case]]] = {}
    for i, f in enumerate(files):
        for c in f.ok_cases():
            if c.family == "SyncPlacement":
                groups.setdefault(rest_axes(c, used), {}).setdefault(i, {})[c.axis("sync", "-")] = c
    out = []
    for gk in sorted(groups):
        per_file = groups[gk]
        syncs = order_values({s for d in per_file.values() for s in d}, ("both", "before", "after", "none", "events"))
        canvas = Canvas(1, 2, w=6.0, h=4.0)
        ax_t, ax_e = canvas.axes[0]
        nf = len(per_file)
        width = 0.8 / (2 * nf)
        x = np.arange(len(syncs))
        npoints = 0

        def stat(c: Case | None, metric: str, headline: str | None) -> Point | None:
            """The median with the noise_pct interval where `metric` is the headline and the file has it,
            else +- the repetitions' standard deviation."""
            if c is None or not c.has_metric(metric):
                return None
            p = metric_point(c, metric, 0.0, headline=headline)
            if p is None or p.noise:
                return p
            vals = c.values(metric)
            sd = statistics.stdev(vals) if len(vals) >= 2 else c.aggregate("stddev", metric)
            return Point(p.x, p.y, p.y - sd, p.y + sd) if sd else Point(p.x, p.y)

        drawn_t, drawn_e = [], []
        clocks = (("host_measured_us", "host clock"), ("event_us", "CUDA events"))
        clock_colour = dict(zip((what for _, what in clocks), colours(len(clocks))))
        for j, (i, d) in enumerate(sorted(per_file.items())):
            desc = files[i].descriptor(FAMILY)
            headline = desc.headline if desc else None
            for k, (metric, what) in enumerate(clocks):
                pts = [stat(d.get(s), metric, headline) for s in syncs]
                drawn_t += pts
                pos = x - 0.4 + width * (2 * j + k) + width / 2
                draw_bars(ax_t, list(pos), pts, width, clock_colour[what], i, f"{labels[i]}, {what}")
                npoints += sum(1 for p in pts if p is not None and not math.isnan(p.y))
            pts = [stat(d.get(s), "error_pct", headline) for s in syncs]
            drawn_e += pts
            w2 = 0.8 / nf
            draw_bars(ax_e, list(x - 0.4 + w2 * j + w2 / 2), pts, w2, clock_colour["host clock"], i, labels[i])
        for ax in (ax_t, ax_e):
            ax.set_xticks(x, syncs)
            ax.set_xlabel("where the host synchronises")
            ax.grid(True, axis="y", alpha=0.3)
        ax_e.axhline(0.0, color="0.35", lw=0.8)
        encoded_legend(canvas, [(c, what) for what, c in clock_colour.items()],
                       [(i, labels[i]) for i in sorted(per_file)], "clock", bar=True, ncols=4)
        for ax, drawn in ((ax_t, drawn_t), (ax_e, drawn_e)):
            fit_value_axes([ax], [p.y for p in drawn if p is not None],
                           [v for p in drawn if p is not None for v in (p.lo, p.hi) if v is not None])
        spans = whisker_text(drawn_t, otherwise="± stddev of the repetitions")
        ax_t.set_ylabel("time per iteration (us), median" + (f";\n{spans}" if spans else ""))
        ax_t.set_title("host-measured vs. CUDA-event time", fontsize=10)
        spans = whisker_text(drawn_e, otherwise="± stddev of the repetitions")
        ax_e.set_ylabel("host clock error vs. events (%)" + (f";\n{spans}" if spans else ""))
        ax_e.set_title("how wrong the host clock is (its colour)", fontsize=10)
        out.append(titled("sync_placement", canvas, "Sync placement", gk, npoints))
    return out


