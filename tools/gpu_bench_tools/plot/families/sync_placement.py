"""SyncPlacement: host-clock against CUDA-event time per sync placement, and the error between them."""

from __future__ import annotations

import math
import statistics


from ...load import Case
from ..canvas import Canvas, PlotContext, colours, order_values, rest_axes
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
    palette = colours(len(files))
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

        def stat(c: Case | None, metric: str) -> tuple[float, float]:
            if c is None or not c.has_metric(metric):
                return float("nan"), 0.0
            vals = c.values(metric)
            sd = c.aggregate("stddev", metric)
            if len(vals) >= 2:
                sd = statistics.stdev(vals)
            return c.center(metric), sd or 0.0

        for j, (i, d) in enumerate(sorted(per_file.items())):
            for k, (metric, hatch, what) in enumerate((("host_measured_us", "", "host clock"),
                                                       ("event_us", "///", "CUDA events"))):
                ys = [stat(d.get(s), metric) for s in syncs]
                pos = x - 0.4 + width * (2 * j + k) + width / 2
                ax_t.bar(pos, [y for y, _ in ys], width, yerr=[e for _, e in ys], color=palette[i], alpha=0.85,
                         hatch=hatch, edgecolor="white", capsize=2, label=f"{labels[i]}, {what}")
                npoints += sum(1 for y, _ in ys if not math.isnan(y))
            ys = [stat(d.get(s), "error_pct") for s in syncs]
            w2 = 0.8 / nf
            ax_e.bar(x - 0.4 + w2 * j + w2 / 2, [y for y, _ in ys], w2, yerr=[e for _, e in ys], color=palette[i],
                     capsize=2, label=labels[i])
        for ax in (ax_t, ax_e):
            ax.set_xticks(x, syncs)
            ax.set_xlabel("where the host synchronises")
            ax.grid(True, axis="y", alpha=0.3)
        canvas.legend(*ax_t.get_legend_handles_labels(), ncols=2)
        ax_t.set_ylabel("time per iteration (us), median ± stddev")
        ax_t.set_title("host-measured vs. CUDA-event time", fontsize=10)
        ax_e.set_ylabel("host clock error vs. events (%)")
        ax_e.set_title("how wrong the host clock is", fontsize=10)
        out.append(titled("sync_placement", canvas, "Sync placement", gk, npoints))
    return out


