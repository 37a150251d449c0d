"""Gantt charts of gpu_bench --timeline traces: a row per stream, a bar per copy or kernel."""

from __future__ import annotations

import textwrap

from ..reading.load import Timeline
from .canvas import CHAR_W, Canvas, set_title
from .points import Plot, slug

SPAN_COLOURS = {"h2d": "#1f77b4", "d2h": "#ff7f0e", "kernel": "#2ca02c", "d2d": "#9467bd", "other": "#7f7f7f"}


def gantt_plots(tl: Timeline, label: str | None = None, max_cases: int = 24):
    """One Gantt chart per traced case: a row per stream, a bar per copy or kernel."""
    from matplotlib.patches import Patch

    out = []
    for pid, case in list(sorted(tl.cases.items()))[:max_cases]:
        t0 = min(s.start_us for s in case.spans)
        t1 = max(s.start_us + s.dur_us for s in case.spans)
        span = t1 - t0
        scale, unit = (1e-3, "ms") if span >= 5000 else (1.0, "us")
        tids = sorted({s.tid for s in case.spans})
        names = [case.thread_names.get(t, f"stream {t}") for t in tids]
        canvas = Canvas(1, 1, w=10.0, h=max(2.4, 0.45 * len(tids) + 1.6),
                        left=0.35 + max(len(n) for n in names) * CHAR_W * 10)
        ax = canvas.axes[0][0]
        kinds_seen: dict[str, str] = {}
        for row, tid in enumerate(tids):
            by_kind: dict[str, list[tuple[float, float]]] = {}
            for s in case.spans:
                if s.tid != tid:
                    continue
                kind = _span_kind(s.name, s.cat)
                by_kind.setdefault(kind, []).append(((s.start_us - t0) * scale, max(s.dur_us * scale, 1e-9)))
            for kind, bars in by_kind.items():
                ax.broken_barh(bars, (row - 0.38, 0.76), facecolors=SPAN_COLOURS[kind], edgecolor="white", lw=0.4)
                kinds_seen[kind] = SPAN_COLOURS[kind]
        ax.set_yticks(range(len(tids)), names)
        ax.invert_yaxis()
        ax.set_xlim(0, span * scale * 1.01)
        ax.set_xlabel(f"time since the first operation ({unit})")
        ax.grid(True, axis="x", alpha=0.3)
        legend = {"h2d": "copy host to device", "d2h": "copy device to host", "kernel": "kernel",
                  "d2d": "copy device to device", "other": "other"}
        canvas.legend([Patch(color=c) for c in kinds_seen.values()], [legend[k] for k in kinds_seen], ncols=5)
        title = "Timeline: " + "\n".join(textwrap.wrap(case.name, 90))
        set_title(canvas, title, f"{label or tl.stem}: {len(case.spans)} operations in {span * scale:.4g} {unit}")
        stem = slug(f"timeline_{tl.stem}_{pid}")
        out.append((Plot("timeline", stem, f"Timeline: {case.name}", points=len(case.spans)), canvas))
    return out


def _span_kind(name: str, cat: str) -> str:
    head = name.lower().split()[0] if name.strip() else ""
    if head in ("h2d", "d2h", "d2d"):
        return head
    if cat == "kernel" or head in ("kernel", "work", "compute"):
        return "kernel"
    return "other"


