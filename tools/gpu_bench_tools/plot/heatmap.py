"""Heat maps of a src/dst family: a source x destination matrix per peer access, direction and way of copying
(engine, access), one figure per file."""

from __future__ import annotations

import math
import textwrap
from pathlib import Path
from typing import Callable

from ..reading.load import MAX_GPUS, BenchmarkFile, Case, gpu_summary, topology
from .canvas import Canvas, human_bytes, set_title
from .points import Plot, order_values, slug

PEER_DIR_TITLE = {"oneway": "one way", "bidir": "both ways at once (sum)"}
# The axes a matrix's cell and panel are keyed on; any other axis of a case (engine:sm, access:read) is a way
# of copying that gets panels of its own, never a cell of the plain copy's matrix.
_PANEL_AXES = ("src", "dst", "peer_access", "dir", "bytes")
VARIANT_TITLE = {"engine:sm": "by SMs", "access:read": "read by the destination"}


def _file_slugs(files: list[BenchmarkFile]) -> list[str]:
    """A short unique name part per file, from its file name."""
    slugs = [slug(f.stem) for f in files]
    return [f"{s}-{i + 1}" if slugs.count(s) > 1 else s for i, s in enumerate(slugs)]


def _variant(c: Case) -> tuple[str, ...]:
    """How the case copies beyond its pair, access and direction: its other axes as key:value, in name order
    (() for the plain copy)."""
    return tuple(f"{k}:{v}" for k, v in c.name.axes if k not in _PANEL_AXES)


def _pair_grid(f: BenchmarkFile, family: str, pick_bytes: Callable[[list[int]], int]):
    """Cases of a src/dst family as {((peer_access, variant), dir): (bytes, {(src, dst): case})}, one size per
    panel: each way of copying (_variant) has panels of its own."""
    by_panel: dict[tuple[tuple[str, tuple[str, ...]], str], dict[int, dict[tuple[int, int], Case]]] = {}
    for c in f.cases.values():
        src, dst, b = c.axis_int("src"), c.axis_int("dst"), c.axis_int("bytes")
        if c.family != family or src is None or dst is None or b is None or max(src, dst) >= MAX_GPUS:
            continue
        row = (c.axis("peer_access", "-"), _variant(c))
        by_panel.setdefault((row, c.axis("dir", "-")), {}).setdefault(b, {})[(src, dst)] = c
    out = {}
    for pk, sizes in by_panel.items():
        with_figures = [b for b, cases in sizes.items() if any(c.ok for c in cases.values())]
        b = pick_bytes(with_figures or list(sizes))
        out[pk] = (b, sizes[b])
    return out


def heatmaps(files: list[BenchmarkFile], family: str, kind: str, what: str,
              value: Callable[[Case], float | None], pick_bytes: Callable[[list[int]], int], cbar: str,
              cmap_name: str):
    """One figure per file: a src x dst matrix per peer_access and way of copying (rows: the plain copy's first,
    then each variant's, such as engine:sm or access:read) and dir (columns), cells annotated.

    Source GPUs are rows, destinations columns; the diagonal stays blank. A pair whose case failed reads
    'failed', a pair the run does not have stays empty. The colour scale is shared by the panels.
    """
    import numpy as np
    from matplotlib import colormaps
    from matplotlib.patches import Rectangle

    out = []
    for i, (f, fslug) in enumerate(zip(files, _file_slugs(files))):
        grid = _pair_grid(f, family, pick_bytes)
        if not grid:
            continue
        n = max(max(s, d) + 1 for _, cases in grid.values() for s, d in cases)
        access_order = order_values({a for (a, _), _ in grid}, ("on", "off"))
        rows = sorted({row for row, _ in grid}, key=lambda r: (access_order.index(r[0]), len(r[1]), r[1]))
        dirs = order_values({d for _, d in grid}, ("oneway", "bidir"))
        topo = topology(f)
        side = max(3.0, 0.62 * n + 1.4)
        canvas = Canvas(len(rows), len(dirs), w=side + 0.6, h=side)
        cmap = colormaps[cmap_name].with_extremes(bad="white")
        values = {pk: np.full((n, n), np.nan) for pk in grid}
        for pk, (_, cases) in grid.items():
            for (s, d), c in cases.items():
                v = value(c) if c.ok and s != d else None
                if v is not None and math.isfinite(v):
                    values[pk][s, d] = v
        finite = [v for m in values.values() for v in m.ravel() if math.isfinite(v)]
        vmax = max(finite) if finite else 1.0
        npoints = 0
        image = None
        small = 7 if n <= 4 else 6 if n <= 8 else 5
        for r, row in enumerate(rows):
            for col, d in enumerate(dirs):
                ax = canvas.axes[r][col]
                if (row, d) not in grid:
                    ax.set_visible(False)
                    continue
                b, cases = grid[(row, d)]
                m = values[(row, d)]
                image = ax.imshow(np.ma.masked_invalid(m), cmap=cmap, vmin=0.0, vmax=vmax, aspect="equal")
                for s in range(n):
                    for t in range(n):
                        if s == t:
                            continue
                        c = cases.get((s, t))
                        v = m[s, t]
                        if math.isfinite(v):
                            npoints += 1
                            rgb = cmap(v / vmax if vmax else 0.0)[:3]
                            ink = "black" if 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2] > 0.5 else "white"
                            # The link matters only where the copy goes over it (not staged through the host).
                            link = topo.get((s, t), {}).get("link") if row[0] != "off" else None
                            ax.text(t, s - (0.13 if link and n <= 8 else 0.0), _cell_text(v), ha="center",
                                    va="center", color=ink, fontsize=small + 1, fontweight="bold")
                            if link and n <= 8:
                                ax.text(t, s + 0.22, link, ha="center", va="center", color=ink, fontsize=small - 1)
                        elif c is not None:
                            ax.add_patch(Rectangle((t - 0.5, s - 0.5), 1.0, 1.0, color="0.9", lw=0))
                            ax.text(t, s, "failed" if c.errors else "skipped" if c.skips else "-", ha="center",
                                    va="center", color="0.35", fontsize=small)
                ax.set_xticks(range(n), [f"GPU {t}" for t in range(n)], fontsize=8)
                ax.set_yticks(range(n), [f"GPU {s}" for s in range(n)], fontsize=8)
                ax.set_xlabel("destination")
                ax.set_ylabel("source")
                ax.tick_params(length=0)
                head = [f"peer access {row[0]}"] if row[0] != "-" else []
                if d != "-":
                    head.append(PEER_DIR_TITLE.get(d, d))
                head += [VARIANT_TITLE.get(v, v) for v in row[1]]
                ax.set_title(", ".join(head + [human_bytes(b)]), fontsize=10)
        if image is not None:
            canvas.colorbar(image, cbar)
        gpus = gpu_summary(f) or f"{n} GPUs"
        t = f"{what}: {gpus}"
        driver = f.fact("driver.version")
        sub = ", ".join(x for x in (Path(f.path).name, f"driver {driver}" if driver else "") if x)
        sub = textwrap.fill(f"{sub}; source GPU on the rows, destination on the columns",
                            int(canvas.fig.get_figwidth() * 11))
        set_title(canvas, t, sub)
        out.append((Plot(kind, slug(f"{kind}_{fslug}"), f"{t} ({Path(f.path).name})", points=npoints, machine=i),
                    canvas))
    return out


def _cell_text(v: float) -> str:
    return f"{v:.0f}" if v >= 100 else f"{v:.1f}" if v >= 10 else f"{v:.2f}"


