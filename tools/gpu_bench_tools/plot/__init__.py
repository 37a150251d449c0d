"""Figures from gpu_bench JSON: one line (or bar) per input file, labelled by GPU and driver.

Every family is drawn by the generic, descriptor-driven figure (:mod:`.generic`) unless a module in
:mod:`.families` names it in its FAMILY: those draw figures of their own (heat maps, speedup curves...).
A --timeline trace becomes a Gantt chart (:mod:`.gantt`).  Every figure is a fresh matplotlib Figure on
the Agg canvas, so nothing touches pyplot's global state and no display is needed.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache
from pathlib import Path
from typing import Iterable

from ..reading.errors import InputError
from ..reading.load import BenchmarkFile, Timeline, file_labels
from .canvas import human_bytes
from .points import Plot, PlotContext

__all__ = ["Plot", "available_kinds", "human_bytes", "make_plots", "section_titles"]

TIMELINE_KIND = "timeline"


@lru_cache(maxsize=1)
def family_modules() -> dict:
    """Family name -> the module that draws it (every module in plots/families with a FAMILY)."""
    from . import families

    out = {}
    for info in pkgutil.iter_modules(families.__path__):
        mod = importlib.import_module(f"{families.__name__}.{info.name}")
        if getattr(mod, "FAMILY", None):
            out[mod.FAMILY] = mod
    return out


def _family_order(files: list[BenchmarkFile]) -> list[str]:
    out: list[str] = []
    for f in files:
        for c in f.cases.values():
            if c.ok and c.family not in out:
                out.append(c.family)
    return out


def section_titles(files: list[BenchmarkFile]) -> dict[str, str]:
    """Plot kind -> a section title, in reading order: a family's own module's, else the family's name."""
    mods = family_modules()
    out: dict[str, str] = {}
    for fam in _family_order(files):
        if fam in mods:
            out.update(mods[fam].SECTIONS)
            continue
        desc = next(f.descriptor(fam) for f in files if f.descriptor(fam))
        out[desc.kind] = f"{fam}: {desc.summary}" if desc.summary else fam
    out[TIMELINE_KIND] = "Timelines"
    return out


def available_kinds(inputs: list[BenchmarkFile | Timeline]) -> list[str]:
    files = [x for x in inputs if isinstance(x, BenchmarkFile)]
    kinds = list(section_titles(files))
    return kinds if any(isinstance(x, Timeline) for x in inputs) else [k for k in kinds if k != TIMELINE_KIND]


def _makers(files: list[BenchmarkFile], timelines: list[Timeline], labels: list[str] | None = None,
            one_per_kind: bool = False):
    """(kinds, make) per family, then the timelines; make() returns [(Plot, Canvas)]."""
    from .gantt import gantt_plots
    from .generic import generic_plots

    ctx = PlotContext(files, labels or file_labels(files), one_per_kind)
    mods = family_modules()
    for fam in _family_order(files):
        if fam in mods:
            yield tuple(mods[fam].SECTIONS), (lambda m=mods[fam]: m.draw(ctx))
        else:
            desc = ctx.descriptor(fam)
            yield (desc.kind,), (lambda d=desc: generic_plots(ctx, d))
    yield (TIMELINE_KIND,), (lambda: [p for tl in timelines for p in gantt_plots(tl)])


def make_plots(
    inputs: list[BenchmarkFile | Timeline], out_dir: str | Path, formats: tuple[str, ...] = ("png", "svg"),
    dpi: int = 110, kinds: Iterable[str] | None = None, one_per_kind: bool = False,
    labels: list[str] | None = None,
) -> list[Plot]:
    """Draw every figure the inputs have data for; returns what was written, in reading order.

    kinds: only these plot kinds; one the inputs cannot have raises InputError naming the ones they can.
    labels: one legend label per benchmark file (default: GPU and driver, see file_labels).
    """
    if dpi <= 0:
        raise InputError(f"--dpi must be more than 0, not {dpi}")
    files = [x for x in inputs if isinstance(x, BenchmarkFile)]
    timelines = [x for x in inputs if isinstance(x, Timeline)]
    known = available_kinds(inputs)
    wanted = list(dict.fromkeys(kinds)) if kinds else known
    unknown = [k for k in wanted if k not in known]
    if unknown:
        raise InputError(f"--kind {', '.join(unknown)}: not a kind these inputs have; they have "
                         + ", ".join(known))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Plot] = []
    for family_kinds, make in _makers(files, timelines, labels, one_per_kind):
        if not set(family_kinds) & set(wanted):
            continue
        made = [pc for pc in make() if pc[0].kind in wanted]
        if one_per_kind and made:
            firsts: dict[str, tuple] = {}
            for pc in made:
                best = firsts.get(pc[0].kind)
                if best is None or pc[0].points > best[0].points:
                    firsts[pc[0].kind] = pc
            made = list(firsts.values())
        for plot, canvas in made:
            if one_per_kind:
                plot.stem = plot.kind
            plot.paths = canvas.save(out, plot.stem, formats, dpi)
            canvas.fig.clear()
            written.append(plot)
    return written
