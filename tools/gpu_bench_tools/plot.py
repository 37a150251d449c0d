"""Figures from gpu_bench JSON: one line (or bar) per input file, labelled by GPU and driver.

Every function here draws on a fresh matplotlib Figure with the Agg canvas, so nothing touches
pyplot's global state and the module works without a display.
"""

from __future__ import annotations

import math
import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from .load import (
    MAX_GPUS,
    TIME_UNIT_NS,
    BenchmarkFile,
    Case,
    Timeline,
    file_labels,
    median,
)

MEM_ORDER = ("pinned", "registered", "write_combined", "mapped", "pageable", "managed_prefetch",
             "managed_fault", "managed", "device")
DIR_ORDER = ("h2d", "d2h", "bidir", "d2d")
DIR_TITLE = {"h2d": "host to device", "d2h": "device to host", "bidir": "both directions at once",
             "d2d": "device to device"}
SCHEDULE_STYLE = {"serial": ("o", ":"), "depth_first": ("s", "--"), "breadth_first": ("^", "-")}
# Usable bytes per second per lane after line coding (gen6 counts FLIT overhead).
PCIE_LANE_GBPS = {1: 0.25, 2: 0.5, 3: 0.9846, 4: 1.9692, 5: 3.9385, 6: 7.5625}
KIND_ORDER = ("transfer", "peer_matrix", "peer", "peer_latency", "all_host", "overlap", "sync_placement",
              "small_copy", "host_blocking", "other", "timeline")
SPAN_COLOURS = {"h2d": "#1f77b4", "d2h": "#ff7f0e", "kernel": "#2ca02c", "d2d": "#9467bd", "other": "#7f7f7f"}


@dataclass
class Plot:
    kind: str
    stem: str
    title: str
    paths: list[str] = field(default_factory=list)
    points: int = 0


@dataclass
class _Point:
    x: float
    y: float
    lo: float | None = None
    hi: float | None = None


# ---------------------------------------------------------------------------------------------
# small helpers


def human_bytes(n: float) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            v = n / size
            return f"{v:.0f} {unit}" if v == int(v) else f"{v:.1f} {unit}"
    return f"{n:.0f} B"


def pcie_peak_gbps(f: BenchmarkFile) -> tuple[float, str] | None:
    """The link's usable peak per direction, from the widest the link can run (current as fallback)."""
    gen = f.fact("gpu.pcie_gen_max") or f.fact("gpu.pcie_gen")
    width = f.fact("gpu.pcie_width_max") or f.fact("gpu.pcie_width")
    try:
        g, w = int(gen), int(width)
    except (TypeError, ValueError):
        return None
    if g not in PCIE_LANE_GBPS or w <= 0:
        return None
    return PCIE_LANE_GBPS[g] * w, f"PCIe gen{g} x{w}"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-").lower()[:120] or "plot"


def _order(values: Iterable[str], preferred: tuple[str, ...]) -> list[str]:
    def key(v: str):
        if v in preferred:
            return (0, preferred.index(v), 0, v)
        try:
            return (1, 0, int(v), v)
        except ValueError:
            return (2, 0, 0, v)

    return sorted(set(values), key=key)


def _rest(case: Case, used: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    return tuple((k, v) for k, v in case.name.axes if k not in used)


def _rest_text(rest: tuple[tuple[str, str], ...]) -> str:
    return ", ".join(f"{k}: {human_bytes(int(v)) if k == 'bytes' and v.isdigit() else v}" for k, v in rest)


def _to_us(case: Case, v: float) -> float:
    return v * TIME_UNIT_NS[case.time_unit] / 1e3


def _metric_point(case: Case, metric: str, x: float, scale: Callable[[float], float] | None = None) -> _Point | None:
    vals = case.values(metric)
    c = case.center(metric)
    if c is None:
        return None
    s = scale or (lambda v: v)
    if len(vals) >= 2:
        return _Point(x, s(c), s(min(vals)), s(max(vals)))
    return _Point(x, s(c))


class _Canvas:
    """A figure with a grid of axes, saved to every requested format."""

    def __init__(self, nrows: int, ncols: int, w: float = 5.0, h: float = 3.6, sharey: bool = False):
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        self.fig = Figure(figsize=(max(6.0, w * ncols), h * nrows + 0.8), layout="constrained")
        FigureCanvasAgg(self.fig)
        self.axes = self.fig.subplots(nrows, ncols, squeeze=False, sharey=sharey)

    def save(self, out_dir: Path, stem: str, formats: tuple[str, ...], dpi: int) -> list[str]:
        import matplotlib

        paths = []
        with matplotlib.rc_context({"svg.hashsalt": "gpu_bench", "svg.fonttype": "none"}):
            for fmt in formats:
                p = out_dir / f"{stem}.{fmt}"
                meta = {"Date": None} if fmt == "svg" else None
                self.fig.savefig(p, dpi=dpi, metadata=meta)
                # The layout is settled by the first save; solving it again per format only costs time.
                self.fig.set_layout_engine("none")
                paths.append(str(p))
        return paths

    def legend(self, handles=None, labels=None, ncols: int = 3) -> None:
        """One legend for the whole figure, under the panels, instead of one per panel."""
        if handles is None:
            handles, labels = self.axes[0][0].get_legend_handles_labels()
        if handles:
            longest = max(len(str(lab)) for lab in labels)
            fits = max(1, int(self.fig.get_figwidth() / (0.075 * longest + 0.6)))  # about 0.075 in per character
            self.fig.legend(handles, labels, loc="outside lower center", ncols=min(ncols, len(handles), fits),
                            fontsize=8, frameon=False)


def _log2_size_axis(ax, xs: list[float], label: str = "transfer size (log2 scale)") -> None:
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    ax.set_xscale("log", base=2)
    if xs:
        lo, hi = int(math.floor(math.log2(min(xs)))), int(math.ceil(math.log2(max(xs))))
        step = max(1, math.ceil((hi - lo + 1) / 7))
        ax.xaxis.set_major_locator(FixedLocator([2.0**e for e in range(lo, hi + 1, step)]))
        ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: human_bytes(v)))
    ax.set_xlabel(label)
    for t in ax.get_xticklabels():
        t.set_rotation(30)


def _colours(n: int) -> list:
    from matplotlib import colormaps

    cmap = colormaps["tab10"]
    return [cmap(i % 10) for i in range(n)]


FILE_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "*")


def _draw_line(ax, pts: list[_Point], colour, label: str, marker="o", ls="-", band: bool = True,
               order: int = 0) -> None:
    """A line with its min-max band; earlier files are drawn wider so an identical later one leaves them visible."""
    pts = sorted(pts, key=lambda p: p.x)
    xs, ys = [p.x for p in pts], [p.y for p in pts]
    lw = max(1.2, 3.2 - 0.7 * order)
    ax.plot(xs, ys, marker=marker, ls=ls, color=colour, label=label, ms=max(3.0, 6.5 - 1.2 * order), lw=lw)
    if band and any(p.lo is not None for p in pts):
        lo = [p.lo if p.lo is not None else p.y for p in pts]
        hi = [p.hi if p.hi is not None else p.y for p in pts]
        ax.fill_between(xs, lo, hi, color=colour, alpha=0.18, lw=0)


def _merged_handles(canvas: _Canvas) -> tuple[list, list[str]]:
    handles, labels = [], []
    for row in canvas.axes:
        for ax in row:
            for h, lab in zip(*ax.get_legend_handles_labels()):
                if lab not in labels:
                    handles.append(h)
                    labels.append(lab)
    return handles, labels


def _title(canvas: _Canvas, title: str, subtitle: str = "") -> None:
    canvas.fig.suptitle(title + (f"\n{subtitle}" if subtitle else ""), fontsize=12)


# ---------------------------------------------------------------------------------------------
# the plot kinds


def _size_family(
    files: list[BenchmarkFile], labels: list[str], family: str, figure_axes: tuple[str, ...],
    panel_axes: tuple[str, ...], metric: str, ylabel: str, title: Callable[[dict], str], kind: str,
    value_scale: Callable[[Case, float], float] | None = None,
    bound: Callable[[BenchmarkFile, dict], tuple[float, str] | None] | None = None,
    upper_aggregate: str | None = None, preferred: dict[str, tuple[str, ...]] | None = None,
    series_axis: str | None = "device",
) -> list[tuple[Plot, _Canvas]]:
    """Metric against bytes: a figure per value of figure_axes, a panel per value of panel_axes.

    A line per file, or, where cases carry series_axis (gpu_bench --device=all), a line per file and device.
    """
    used = ("bytes",) + figure_axes + panel_axes + ((series_axis,) if series_axis else ())
    preferred = preferred or {}
    groups: dict[tuple, dict[tuple, dict[tuple[int, str | None], list[Case]]]] = {}
    for i, f in enumerate(files):
        for c in f.ok_cases():
            if c.family != family or c.axis_int("bytes") is None:
                continue
            fk = tuple(c.axis(a, "-") for a in figure_axes) + (_rest(c, used),)
            pk = tuple(c.axis(a, "-") for a in panel_axes)
            sk = (i, c.axis(series_axis) if series_axis else None)
            groups.setdefault(fk, {}).setdefault(pk, {}).setdefault(sk, []).append(c)
    # Colours follow the file, or the file and device where there are devices, the same in every figure.
    series = sorted({sk for panels in groups.values() for per in panels.values() for sk in per},
                    key=lambda sk: (sk[0], -1 if sk[1] is None else int(sk[1]) if sk[1].isdigit() else 0, sk[1] or ""))
    if all(d is None for _, d in series):
        colours = _colours(len(files))
        colour_of = {sk: colours[sk[0]] for sk in series}
    else:
        colours = _colours(len(series))
        colour_of = {sk: colours[n] for n, sk in enumerate(series)}

    def series_label(sk: tuple[int, str | None]) -> str:
        return labels[sk[0]] if sk[1] is None else f"{labels[sk[0]]}, GPU {sk[1]}"

    out = []

    def pref(names: tuple[str, ...], values: tuple) -> tuple:
        key = []
        for a, v in zip(names, values):
            order = preferred.get(a, ())
            key.append((order.index(v) if v in order else 99, int(v) if str(v).isdigit() else -1, str(v)))
        return tuple(key)

    for fk in sorted(groups, key=lambda fk: (pref(figure_axes, fk[:-1]), fk[-1])):
        panels = groups[fk]
        pkeys = sorted(panels, key=lambda pk: pref(panel_axes, pk))
        ncols = min(3, len(pkeys))
        nrows = math.ceil(len(pkeys) / ncols)
        canvas = _Canvas(nrows, ncols)
        fixed = dict(zip(figure_axes, fk[:-1]))
        npoints = 0
        for n, pk in enumerate(pkeys):
            ax = canvas.axes[n // ncols][n % ncols]
            xs_all: list[float] = []
            for sk, cases in sorted(panels[pk].items(), key=lambda kv: series.index(kv[0])):
                i = sk[0]
                pts = []
                upper = []
                for c in cases:
                    x = float(c.axis_int("bytes"))
                    scale = (lambda v, c=c: value_scale(c, v)) if value_scale else None
                    p = _metric_point(c, metric, x, scale)
                    if p:
                        pts.append(p)
                    if upper_aggregate:
                        u = c.aggregate(upper_aggregate, metric)
                        if u is not None:
                            upper.append(_Point(x, scale(u) if scale else u))
                if not pts:
                    continue
                npoints += len(pts)
                xs_all += [p.x for p in pts]
                _draw_line(ax, pts, colour_of[sk], series_label(sk), marker=FILE_MARKERS[i % len(FILE_MARKERS)],
                           band=not upper, order=i)
                if upper:
                    _draw_line(ax, upper, colour_of[sk], f"{series_label(sk)} ({upper_aggregate})", marker="",
                               ls="--", band=False, order=i)
            if bound:
                seen = set()
                for i in sorted({sk[0] for sk in panels[pk]}):
                    b = bound(files[i], dict(zip(panel_axes, pk)) | fixed)
                    if b and b not in seen:
                        seen.add(b)
                        ax.axhline(b[0], color="0.35", ls="--", lw=1)
                        ax.annotate(f"ideal: {b[1]} {b[0]:.1f} GB/s", (0.01, b[0]), xycoords=("axes fraction", "data"),
                                    va="bottom", fontsize=8, color="0.25")
                if seen:
                    ax.set_ylim(top=max(ax.get_ylim()[1], max(b[0] for b in seen) * 1.08))
            _log2_size_axis(ax, xs_all)
            ax.set_ylabel(ylabel)
            ax.set_title(", ".join(f"{a}: {v}" for a, v in zip(panel_axes, pk)) or family, fontsize=10)
            ax.grid(True, which="major", alpha=0.3)
            ax.set_ylim(bottom=0)
        canvas.legend(*_merged_handles(canvas))
        for n in range(len(pkeys), nrows * ncols):
            canvas.axes[n // ncols][n % ncols].set_visible(False)
        t = title(fixed)
        sub = _rest_text(fk[-1])
        _title(canvas, t, sub)
        stem = _slug("_".join([kind] + [f"{a}-{v}" for a, v in fixed.items() if v != "-"]
                              + [f"{k}-{v}" for k, v in fk[-1]]))
        out.append((Plot(kind, stem, t + (f" ({sub})" if sub else ""), points=npoints), canvas))
    return out


def _transfer_bound(f: BenchmarkFile, axes: dict) -> tuple[float, str] | None:
    d = axes.get("dir")
    if d not in ("h2d", "d2h", "bidir") or axes.get("mem") == "device":
        return None
    peak = pcie_peak_gbps(f)
    if not peak:
        return None
    if d == "bidir":
        return 2 * peak[0], f"2 x {peak[1]}"
    return peak


def transfer_plots(files, labels):
    return _size_family(
        files, labels, "Transfer", ("dir",), ("mem",), "gbps", "bandwidth (GB/s, 1 GB = 1e9 B)",
        lambda fx: f"Transfer bandwidth vs. size: {DIR_TITLE.get(fx.get('dir'), fx.get('dir'))}",
        "transfer", bound=_transfer_bound, preferred={"dir": DIR_ORDER, "mem": MEM_ORDER},
    )


PEER_DIR_TITLE = {"oneway": "one way", "bidir": "both ways at once (sum)"}


def peer_plots(files, labels):
    def title(fx):
        d = fx.get("dir", "-")
        return (f"Peer copy bandwidth vs. size (peer access {fx.get('peer_access')}"
                + (f", {PEER_DIR_TITLE.get(d, d)})" if d != "-" else ")"))

    return _size_family(
        files, labels, "Peer", ("peer_access", "dir"), ("src", "dst"), "gbps", "bandwidth (GB/s, 1 GB = 1e9 B)",
        title, "peer", preferred={"dir": ("oneway", "bidir")},
    )


def small_copy_plots(files, labels):
    return _size_family(
        files, labels, "SmallCopy", ("dir",), ("mem",), "time", "latency (us), median and p99",
        lambda fx: f"Small-copy latency: {DIR_TITLE.get(fx.get('dir'), fx.get('dir'))}", "small_copy",
        value_scale=_to_us, upper_aggregate="p99", preferred={"dir": DIR_ORDER, "mem": MEM_ORDER},
    )


def host_blocking_plots(files, labels):
    return _size_family(
        files, labels, "HostBlocking", ("mem",), ("mode",), "host_blocked_us", "host blocked (us)",
        lambda fx: f"Time the host thread is held, {fx.get('mem')} memory", "host_blocking",
        preferred={"mem": MEM_ORDER, "mode": ("sync_copy", "async_copy", "async_then_cpu_work")},
    )


def overlap_plots(files, labels):
    """Speedup and efficiency against stream count: rows are the two counters, columns the sync placements."""
    used = ("schedule", "streams", "sync")
    groups: dict[tuple, dict[tuple[int, str, str], list[Case]]] = {}
    for i, f in enumerate(files):
        for c in f.ok_cases():
            if c.family != "Overlap" or c.axis_int("streams") is None:
                continue
            gk = _rest(c, used)
            groups.setdefault(gk, {}).setdefault((i, c.axis("schedule", "-"), c.axis("sync", "-")), []).append(c)

    def group_order(gk):
        d = dict(gk)
        mem = d.get("mem", "")
        return (MEM_ORDER.index(mem) if mem in MEM_ORDER else 99, -int(d.get("bytes", "0") or 0)
                if str(d.get("bytes", "0")).isdigit() else 0, gk)

    colours = _colours(len(files))
    out = []
    for gk in sorted(groups, key=group_order):
        series = groups[gk]
        syncs = _order({s for _, _, s in series}, ("end", "per_stream", "per_chunk", "event_join"))
        canvas = _Canvas(2, len(syncs), w=4.6, h=3.3)
        npoints = 0
        for col, sync in enumerate(syncs):
            ax_s, ax_e = canvas.axes[0][col], canvas.axes[1][col]
            ideal: dict[int, dict[int, list[float]]] = {}
            xs_all: list[int] = []
            for (i, sched, s), cases in sorted(series.items(), key=lambda kv: (
                    kv[0][0], list(SCHEDULE_STYLE).index(kv[0][1]) if kv[0][1] in SCHEDULE_STYLE else 9, kv[0][1])):
                if s != sync:
                    continue
                marker, ls = SCHEDULE_STYLE.get(sched, ("D", "-."))
                sp, ef = [], []
                for c in cases:
                    x = c.axis_int("streams")
                    xs_all.append(x)
                    p = _metric_point(c, "speedup", x)
                    e = _metric_point(c, "efficiency", x)
                    if p:
                        sp.append(p)
                    if e:
                        ef.append(e)
                    if p and e and e.y > 0:
                        ideal.setdefault(i, {}).setdefault(x, []).append(p.y / e.y)
                npoints += len(sp)
                if sp:
                    _draw_line(ax_s, sp, colours[i], f"{labels[i]}, {sched}", marker, ls, order=i)
                if ef:
                    _draw_line(ax_e, ef, colours[i], f"{labels[i]}, {sched}", marker, ls, order=i)
            for i, by_x in sorted(ideal.items()):
                xs = sorted(by_x)
                ax_s.plot(xs, [median(by_x[x]) for x in xs], color=colours[i], ls=(0, (1, 1)), lw=2.2, alpha=0.6)
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
        handles = [Line2D([], [], color=colours[i], lw=3) for i in used_files]
        names = [labels[i] for i in used_files]
        for sc in used_scheds:
            marker, ls = SCHEDULE_STYLE.get(sc, ("D", "-."))
            handles.append(Line2D([], [], color="0.2", marker=marker, ls=ls))
            names.append(f"schedule: {sc}")
        handles += [Line2D([], [], color="0.4", ls=(0, (1, 1)), lw=2.2), Line2D([], [], color="0.35", ls="--")]
        names += ["ideal speedup (speedup / efficiency)", "ideal efficiency (1.0)"]
        canvas.legend(handles, names, ncols=4)
        out.append(_titled("overlap", canvas, "Copy/compute overlap: speedup and efficiency vs. streams", gk, npoints))
    return out


def _titled(kind: str, canvas: _Canvas, title: str, gk, npoints: int):
    """Titles a figure of one group of cases (`gk`: its fixed axes) and names it after the kind and group."""
    sub = _rest_text(gk)
    _title(canvas, title, sub)
    stem = _slug(f"{kind}_" + "_".join(f"{k}-{v}" for k, v in gk))
    return Plot(kind, stem, f"{title} ({sub})", points=npoints), canvas


def sync_placement_plots(files, labels):
    """Host-clock vs. CUDA-event time per sync placement, with the error between them."""
    import numpy as np

    used = ("sync",)
    groups: dict[tuple, dict[int, dict[str, Case]]] = {}
    for i, f in enumerate(files):
        for c in f.ok_cases():
            if c.family == "SyncPlacement":
                groups.setdefault(_rest(c, used), {}).setdefault(i, {})[c.axis("sync", "-")] = c
    colours = _colours(len(files))
    out = []
    for gk in sorted(groups):
        per_file = groups[gk]
        syncs = _order({s for d in per_file.values() for s in d}, ("both", "before", "after", "none", "events"))
        canvas = _Canvas(1, 2, w=6.0, h=4.0)
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
                m = sum(vals) / len(vals)
                sd = math.sqrt(sum((v - m) ** 2 for v in vals) / (len(vals) - 1))
            return c.center(metric), sd or 0.0

        for j, (i, d) in enumerate(sorted(per_file.items())):
            for k, (metric, hatch, what) in enumerate((("host_measured_us", "", "host clock"),
                                                       ("event_us", "///", "CUDA events"))):
                ys = [stat(d.get(s), metric) for s in syncs]
                pos = x - 0.4 + width * (2 * j + k) + width / 2
                ax_t.bar(pos, [y for y, _ in ys], width, yerr=[e for _, e in ys], color=colours[i], alpha=0.85,
                         hatch=hatch, edgecolor="white", capsize=2, label=f"{labels[i]}, {what}")
                npoints += sum(1 for y, _ in ys if not math.isnan(y))
            ys = [stat(d.get(s), "error_pct") for s in syncs]
            w2 = 0.8 / nf
            ax_e.bar(x - 0.4 + w2 * j + w2 / 2, [y for y, _ in ys], w2, yerr=[e for _, e in ys], color=colours[i],
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
        out.append(_titled("sync_placement", canvas, "Sync placement", gk, npoints))
    return out


def _file_slugs(files: list[BenchmarkFile]) -> list[str]:
    """A short unique name part per file, from its file name."""
    slugs = [_slug(f.stem) for f in files]
    return [f"{s}-{i + 1}" if slugs.count(s) > 1 else s for i, s in enumerate(slugs)]


def _pair_grid(f: BenchmarkFile, family: str, pick_bytes: Callable[[list[int]], int]):
    """Cases of a src/dst family as {(peer_access, dir): (bytes, {(src, dst): case})}, one size per panel."""
    by_panel: dict[tuple[str, str], dict[int, dict[tuple[int, int], Case]]] = {}
    for c in f.cases.values():
        src, dst, b = c.axis_int("src"), c.axis_int("dst"), c.axis_int("bytes")
        if c.family != family or src is None or dst is None or b is None or max(src, dst) >= MAX_GPUS:
            continue
        by_panel.setdefault((c.axis("peer_access", "-"), c.axis("dir", "-")), {}).setdefault(b, {})[(src, dst)] = c
    out = {}
    for pk, sizes in by_panel.items():
        with_figures = [b for b, cases in sizes.items() if any(c.ok for c in cases.values())]
        b = pick_bytes(with_figures or list(sizes))
        out[pk] = (b, sizes[b])
    return out


def _heatmaps(files: list[BenchmarkFile], family: str, kind: str, what: str,
              value: Callable[[Case], float | None], pick_bytes: Callable[[list[int]], int], cbar: str,
              cmap_name: str):
    """One figure per file: a src x dst matrix per peer_access (rows) and dir (columns), cells annotated.

    Source GPUs are rows, destinations columns; the diagonal stays blank. A pair whose case failed reads
    'failed', a pair the run does not have stays empty. The colour scale is shared by the panels.
    """
    import numpy as np
    from matplotlib import colormaps
    from matplotlib.patches import Rectangle

    from .load import gpu_summary, topology

    out = []
    for i, (f, slug) in enumerate(zip(files, _file_slugs(files))):
        grid = _pair_grid(f, family, pick_bytes)
        if not grid:
            continue
        n = max(max(s, d) + 1 for _, cases in grid.values() for s, d in cases)
        accesses = _order({a for a, _ in grid}, ("on", "off"))
        dirs = _order({d for _, d in grid}, ("oneway", "bidir"))
        topo = topology(f)
        side = max(3.0, 0.62 * n + 1.4)
        canvas = _Canvas(len(accesses), len(dirs), w=side + 0.6, h=side)
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
        for r, access in enumerate(accesses):
            for col, d in enumerate(dirs):
                ax = canvas.axes[r][col]
                if (access, d) not in grid:
                    ax.set_visible(False)
                    continue
                b, cases = grid[(access, d)]
                m = values[(access, d)]
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
                            link = topo.get((s, t), {}).get("link") if access != "off" else None
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
                head = [f"peer access {access}"] if access != "-" else []
                if d != "-":
                    head.append(PEER_DIR_TITLE.get(d, d))
                ax.set_title(", ".join(head + [human_bytes(b)]), fontsize=10)
        if image is not None:
            canvas.fig.colorbar(image, ax=[a for row in canvas.axes for a in row if a.get_visible()],
                                label=cbar, shrink=0.85)
        gpus = gpu_summary(f) or f"{n} GPUs"
        t = f"{what}: {gpus}"
        driver = f.fact("driver.version")
        sub = ", ".join(x for x in (Path(f.path).name, f"driver {driver}" if driver else "") if x)
        sub = textwrap.fill(f"{sub}; source GPU on the rows, destination on the columns",
                            int(canvas.fig.get_figwidth() * 11))
        _title(canvas, t, sub)
        out.append((Plot(kind, _slug(f"{kind}_{slug}"), f"{t} ({Path(f.path).name})", points=npoints), canvas))
    return out


def _cell_text(v: float) -> str:
    return f"{v:.0f}" if v >= 100 else f"{v:.1f}" if v >= 10 else f"{v:.2f}"


def peer_matrix_plots(files, labels):
    """Peer bandwidth between every ordered pair of GPUs at the largest size, one figure per file."""
    return _heatmaps(files, "Peer", "peer_matrix", "Peer copy bandwidth (GB/s)",
                     lambda c: c.center("gbps") if c.has_metric("gbps") else None, max,
                     "bandwidth (GB/s, 1 GB = 1e9 B), higher is better", "viridis")


def _latency_us(c: Case) -> float | None:
    if c.has_metric("latency_us"):
        return c.center("latency_us")
    t = c.center("time")
    return _to_us(c, t) if t is not None else None


def peer_latency_plots(files, labels):
    """GPU time of one small (4-byte) peer copy between every ordered pair of GPUs, one figure per file."""
    return _heatmaps(files, "PeerLatency", "peer_latency", "Peer copy latency (us)", _latency_us,
                     lambda sizes: 4 if 4 in sizes else min(sizes), "latency (us), lower is better", "viridis_r")


def all_host_plots(files, labels):
    """Every GPU copying to or from the host at once: the aggregate and each GPU's own rate, a panel per dir."""
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

    dirs = _order(per_dir, DIR_ORDER)
    colours = _colours(len(files))
    ngpu = max(gpus_of(c) for cs in per_dir.values() for c in cs.values())
    canvas = _Canvas(1, len(dirs), w=max(4.5, 0.7 * (ngpu + 1) * max(1, len(files)) ** 0.5 + 1.5), h=4.0,
                     sharey=True)
    npoints = 0
    for col, d in enumerate(dirs):
        ax = canvas.axes[0][col]
        cats = ["all at once"] + [f"GPU {k}" for k in range(ngpu)]
        x = np.arange(len(cats))
        nf = len(per_dir[d])
        width = 0.8 / nf
        for j, (i, c) in enumerate(sorted(per_dir[d].items())):
            metrics = ["gbps"] + [f"gbps_gpu{k}" for k in range(ngpu)]
            ys, lo, hi = [], [], []
            for m in metrics:
                v = c.center(m) if c.has_metric(m) else None
                vals = c.values(m)
                ys.append(v if v is not None else float("nan"))
                lo.append(v - min(vals) if v is not None and len(vals) >= 2 else 0.0)
                hi.append(max(vals) - v if v is not None and len(vals) >= 2 else 0.0)
            g = c.center("gpus") if c.has_metric("gpus") else None
            n = int(g) if g else gpus_of(c)
            pos = x - 0.4 + width * (j + 0.5)
            bars = ax.bar(pos, ys, width, yerr=[lo, hi], color=colours[i], capsize=2,
                          label=f"{labels[i]}: {n} GPUs, bytes: {human_bytes(c.axis_int('bytes') or 0)}")
            for bar in list(bars)[1:]:
                bar.set_alpha(0.55)
            ax.bar_label(bars, labels=[f"{v:.0f}" if math.isfinite(v) else "" for v in ys], fontsize=7, padding=2)
            npoints += sum(1 for v in ys if math.isfinite(v))
        ax.set_xticks(x, cats)
        ax.set_title(DIR_TITLE.get(d, d), fontsize=10)
        ax.grid(True, axis="y", alpha=0.3)
        ax.set_ylim(bottom=0)
    canvas.axes[0][0].set_ylabel("bandwidth (GB/s, 1 GB = 1e9 B)")
    canvas.legend(*_merged_handles(canvas), ncols=2)
    t = "All GPUs copying to or from the host at once"
    sub = "aggregate (solid) and each GPU's own rate (light); whiskers from the slowest to the fastest repetition"
    _title(canvas, t, sub)
    return [(Plot("all_host", "all_host", t, points=npoints), canvas)]


HANDLED = {"Transfer", "Peer", "PeerLatency", "AllHost", "SmallCopy", "HostBlocking", "Overlap", "SyncPlacement"}


def other_plots(files, labels, max_cases: int = 40):
    """Families without a dedicated figure: median time per case as horizontal bars, if few enough."""
    fams: dict[str, list[str]] = {}
    for f in files:
        for c in f.ok_cases():
            if c.family not in HANDLED:
                keys = fams.setdefault(c.family, [])
                if c.key not in keys:
                    keys.append(c.key)
    colours = _colours(len(files))
    out = []
    for fam, keys in fams.items():
        if len(keys) > max_cases:
            continue
        canvas = _Canvas(1, 1, w=9.0, h=max(2.5, 0.28 * len(keys) * max(1, len(files)) ** 0.5 + 1.2))
        ax = canvas.axes[0][0]
        n = len(files)
        hgt = 0.8 / n
        npoints = 0
        for i, f in enumerate(files):
            ys, xs, errs = [], [], []
            for k, key in enumerate(keys):
                c = f.cases.get(key)
                if c is None or not c.ok:
                    continue
                p = _metric_point(c, "time", 0.0, lambda v, c=c: _to_us(c, v))
                if p:
                    ys.append(k - 0.4 + hgt * i + hgt / 2)
                    xs.append(p.y)
                    errs.append([p.y - (p.lo if p.lo is not None else p.y), (p.hi if p.hi is not None else p.y) - p.y])
            if xs:
                npoints += len(xs)
                ax.barh(ys, xs, hgt, xerr=list(zip(*errs)), color=colours[i], label=labels[i], capsize=2)
        ax.set_yticks(range(len(keys)), [k.split("/", 1)[1] if "/" in k else k for k in keys], fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel("time per iteration (us), median, min-max bar")
        ax.grid(True, axis="x", alpha=0.3)
        ax.legend(fontsize=7)
        _title(canvas, f"{fam}: time per case")
        out.append((Plot("other", _slug(f"family_{fam}"), f"{fam}: time per case", points=npoints), canvas))
    return out


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
        canvas = _Canvas(1, 1, w=10.0, h=max(2.4, 0.45 * len(tids) + 1.6))
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
        ax.set_yticks(range(len(tids)), [case.thread_names.get(t, f"stream {t}") for t in tids])
        ax.invert_yaxis()
        ax.set_xlim(0, span * scale * 1.01)
        ax.set_xlabel(f"time since the first operation ({unit})")
        ax.grid(True, axis="x", alpha=0.3)
        legend = {"h2d": "copy host to device", "d2h": "copy device to host", "kernel": "kernel",
                  "d2d": "copy device to device", "other": "other"}
        canvas.legend([Patch(color=c) for c in kinds_seen.values()], [legend[k] for k in kinds_seen], ncols=5)
        title = "Timeline: " + "\n".join(textwrap.wrap(case.name, 90))
        _title(canvas, title, f"{label or tl.stem}: {len(case.spans)} operations in {span * scale:.4g} {unit}")
        stem = _slug(f"timeline_{tl.stem}_{pid}")
        out.append((Plot("timeline", stem, f"Timeline: {case.name}", points=len(case.spans)), canvas))
    return out


def _span_kind(name: str, cat: str) -> str:
    head = name.lower().split()[0] if name.strip() else ""
    if head in ("h2d", "d2h", "d2d"):
        return head
    if cat == "kernel" or head in ("kernel", "work", "compute"):
        return "kernel"
    return "other"


# ---------------------------------------------------------------------------------------------
# driver


def make_plots(
    inputs: list[BenchmarkFile | Timeline], out_dir: str | Path, formats: tuple[str, ...] = ("png", "svg"),
    dpi: int = 110, kinds: Iterable[str] | None = None, one_per_kind: bool = False,
) -> list[Plot]:
    """Draw every plot kind the inputs have data for; returns what was written, in reading order."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = [x for x in inputs if isinstance(x, BenchmarkFile)]
    timelines = [x for x in inputs if isinstance(x, Timeline)]
    labels = file_labels(files)
    wanted = set(kinds) if kinds else set(KIND_ORDER)
    makers = [
        ("transfer", lambda: transfer_plots(files, labels)),
        ("peer_matrix", lambda: peer_matrix_plots(files, labels)),
        ("peer", lambda: peer_plots(files, labels)),
        ("peer_latency", lambda: peer_latency_plots(files, labels)),
        ("all_host", lambda: all_host_plots(files, labels)),
        ("overlap", lambda: overlap_plots(files, labels)),
        ("sync_placement", lambda: sync_placement_plots(files, labels)),
        ("small_copy", lambda: small_copy_plots(files, labels)),
        ("host_blocking", lambda: host_blocking_plots(files, labels)),
        ("other", lambda: other_plots(files, labels)),
        ("timeline", lambda: [p for tl in timelines for p in gantt_plots(tl)]),
    ]
    written: list[Plot] = []
    for kind, make in makers:
        if kind not in wanted:
            continue
        made = make() if (files or kind == "timeline") else []
        if one_per_kind and made:
            made = [max(made, key=lambda pc: pc[0].points) if kind not in ("transfer", "small_copy") else made[0]]
        for plot, canvas in made:
            stem = plot.kind if one_per_kind else plot.stem
            plot.stem = stem
            plot.paths = canvas.save(out, stem, formats, dpi)
            canvas.fig.clear()
            written.append(plot)
    return written
