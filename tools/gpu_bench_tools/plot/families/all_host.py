"""AllHost: every GPU copying to or from the host at once, the aggregate and each GPU's own rate, and for both
ways at once each direction's total; colour is which of them, hatching the file."""

from __future__ import annotations

import math

from ...reading.load import Case
from ..canvas import Canvas, colours, draw_bars, encoded_legend, human_bytes, set_title
from ..points import DIR_ORDER, DIR_TITLE, Plot, PlotContext, metric_point, order_values, whisker_text

FAMILY = "AllHost"
SECTIONS = {"all_host": "All GPUs and the host at once"}
# Both ways at once: each direction's total over every GPU (gbps_h2d, gbps_d2h), between the aggregate and
# the GPUs' own rates.
DIRECTION_TOTALS = (("gbps_h2d", "h2d, all GPUs"), ("gbps_d2h", "d2h, all GPUs"))


def draw(ctx: PlotContext):
    return all_host_plots(ctx.files, ctx.labels)


def all_host_plots(files, labels):
    """Every GPU copying to or from the host at once: the aggregate and each GPU's own rate, a panel per dir;
    the bidir panel also each direction's total where the cases have it."""
    import numpy as np

    per_dir: dict[str, dict[int, Case]] = {}
    for i, f in enumerate(files):
        best: dict[str, Case] = {}
        for c in f.ok_cases():
            if c.family != "AllHost" or not c.has_metric("gbps"):
                continue
            d = c.axis("dir", "-")
            if d not in best or (c.axis_int("bytes") or 0) > (best[d].axis_int("bytes") or 0):
                best[d] = c
        for d, c in best.items():
            per_dir.setdefault(d, {})[i] = c
    if not per_dir:
        return []

    def gpus_of(c: Case) -> int:
        k = 0
        while c.has_metric(f"gbps_gpu{k}"):
            k += 1
        return k

    dirs = order_values(per_dir, DIR_ORDER)
    aggregate, own, direction = colours(3)
    ngpu = max(gpus_of(c) for cs in per_dir.values() for c in cs.values())
    drawn_files = len({i for cs in per_dir.values() for i in cs})
    ncats = ngpu + 1 + max(sum(1 for m, _ in DIRECTION_TOTALS if any(c.has_metric(m) for c in cs.values()))
                           for cs in per_dir.values())
    canvas = Canvas(1, len(dirs), w=max(4.5, 0.7 * ncats * drawn_files ** 0.5 + 1.5), h=4.0,
                    sharey=True)
    npoints = 0
    drawn = []
    file_text: dict[int, str] = {}
    drew_totals = False
    for col, d in enumerate(dirs):
        ax = canvas.axes[0][col]
        totals = [(m, label) for m, label in DIRECTION_TOTALS if any(c.has_metric(m) for c in per_dir[d].values())]
        drew_totals = drew_totals or bool(totals)
        cats = ["all at once"] + [label for _, label in totals] + [f"GPU {k}" for k in range(ngpu)]
        x = np.arange(len(cats))
        nf = len(per_dir[d])
        width = 0.8 / nf
        for j, (i, c) in enumerate(sorted(per_dir[d].items())):
            metrics = ["gbps"] + [m for m, _ in totals] + [f"gbps_gpu{k}" for k in range(ngpu)]
            desc = files[i].descriptor(FAMILY)
            pts = [metric_point(c, m, 0.0, headline=desc.headline if desc else None) if c.has_metric(m) else None
                   for m in metrics]
            drawn += pts
            ys = [p.y if p is not None else float("nan") for p in pts]
            g = c.center("gpus") if c.has_metric("gpus") else None
            n = int(g) if g else gpus_of(c)
            pos = x - 0.4 + width * (j + 0.5)
            file_text[i] = f"{labels[i]}: {n} GPUs, bytes: {human_bytes(c.axis_int('bytes') or 0)}"
            groups = ((0, 1, aggregate), (1, 1 + len(totals), direction), (1 + len(totals), len(pts), own))
            for lo, hi, colour in groups:
                if hi > lo:
                    bars = draw_bars(ax, list(pos[lo:hi]), pts[lo:hi], width, colour, i, file_text[i])
                    ax.bar_label(bars, labels=[f"{v:.0f}" if math.isfinite(v) else "" for v in ys[lo:hi]],
                                 fontsize=7, padding=2)
            npoints += sum(1 for v in ys if math.isfinite(v))
        ax.set_xticks(x, cats)
        ax.set_title(DIR_TITLE.get(d, d), fontsize=10)
        ax.grid(True, axis="y", alpha=0.3)
    # Once every panel is drawn: the shared value axis then reaches the tallest bar of any (bidir's aggregate).
    for ax in canvas.axes[0]:
        ax.set_ylim(bottom=0)
    canvas.axes[0][0].set_ylabel("bandwidth (GB/s, 1 GB = 1e9 B)")
    entries = [(aggregate, "all GPUs together (aggregate)")]
    if drew_totals:
        entries.append((direction, "one direction, all GPUs (each copy over its own time, added)"))
    entries.append((own, "each GPU's own rate"))
    encoded_legend(canvas, entries, sorted(file_text.items()),
                   "aggregate, one direction or one GPU" if drew_totals else "aggregate or one GPU", bar=True, ncols=2)
    t = "All GPUs copying to or from the host at once"
    spans = whisker_text(drawn)
    sub = ("the aggregate and each GPU's own rate while all copy"
           + (", and each direction's total while all copy both ways" if drew_totals else "")
           + (f"; {spans}" if spans else ""))
    set_title(canvas, t, sub)
    return [(Plot("all_host", "all_host", t, points=npoints), canvas)]


