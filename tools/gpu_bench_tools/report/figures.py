"""The report's figures: one PNG per kind, each family's drawn in a process of its own where it can be."""

from __future__ import annotations

import os

from ..reading.load import BenchmarkFile
from ..plot import available_kinds, make_plots


# What the processes drawing a report's figures share: (files, labels, folder, dpi), set where they start.
_FIGURES: tuple | None = None


def _share_figures(job: tuple) -> None:
    global _FIGURES
    _FIGURES = job


def _draw_kinds(kinds: list[str]) -> list:
    files, labels, out_dir, dpi = _FIGURES
    return make_plots(files, out_dir, formats=("png",), dpi=dpi, kinds=kinds, labels=labels, one_per_kind=True)


def draw_figures(files: list[BenchmarkFile], labels: list[str], out_dir: str, dpi: int) -> list:
    """One PNG per kind of figure (the one of the most points), in reading order.

    Drawing is most of a report's time and each family's figure is drawn apart from the others, so on Linux
    with several CPUs each family's is drawn in a process of its own, as many at once as there are CPUs
    this process may run on (forked: the files are not copied). Elsewhere, or with one CPU, one after the
    other."""
    import multiprocessing
    import sys

    from ..plot import family_modules

    groups: list[list[str]] = []
    modules = family_modules()
    for kind in available_kinds(files):
        sibling = next((list(m.SECTIONS) for m in modules.values() if kind in m.SECTIONS), [kind])
        if not any(kind in g for g in groups):
            groups.append(sibling)
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    workers = min(cpus, len(groups))
    if workers < 2 or not sys.platform.startswith("linux"):
        return make_plots(files, out_dir, formats=("png",), dpi=dpi, labels=labels, one_per_kind=True)
    import importlib
    from concurrent.futures import ProcessPoolExecutor

    for module in ("matplotlib.figure", "matplotlib.backends.backend_agg"):  # imported once, before the fork
        importlib.import_module(module)
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"), initializer=_share_figures,
                             initargs=((files, labels, out_dir, dpi),)) as pool:
        return [p for drawn in pool.map(_draw_kinds, groups) for p in drawn]
