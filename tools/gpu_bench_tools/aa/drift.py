"""Whether a machine's figures drift over a series of runs (gpu-bench-aa drift).

Runs of one command, one after the other, should read alike whatever their order, and an interval built
from one run's rounds assumes they do. A host's link to the GPU need not hold still for that long: on one
H100 it read faster run by run through the host's first nine minutes, on one H200 it went through slow
phases of minutes (docs/methodology.md, "The host link over minutes"). This puts the runs in the order
they started (host.uptime_s where every run has it, else the context's date) and gives, per case,
Spearman's rank correlation between that start and the case's time, its p-value, and how far the median
time of the last third of the runs is from that of the first third: a trend. With a window, it gives the
case's median time in each window of starts and the Kruskal-Wallis test of whether the windows differ at
all, which finds phases that come and go as well as a trend.
"""

from __future__ import annotations

import math

from dataclasses import dataclass
from datetime import datetime
from typing import Sequence

import numpy as np
from scipy import stats

from ..history.series import parse_run_time
from ..reading.errors import InputError
from ..reading.facts import fact_number
from ..reading.cases import TIME_UNIT_NS
from ..reading.results import BenchmarkFile

MIN_RUNS = 6  # two runs in each third at least


@dataclass
class CaseDrift:
    key: str
    runs: int
    rho: float  # Spearman's rank correlation of the case's time with the run's start
    p_value: float
    first_third_s: float  # the median time over the first third of the runs, seconds
    last_third_s: float

    @property
    def change_pct(self) -> float:
        return 100.0 * (self.last_third_s / self.first_third_s - 1.0)


def run_starts(files: Sequence[BenchmarkFile]) -> tuple[str, list[float]]:
    """When each run started, and on which clock: the host's uptime where every file has host.uptime_s
    (one host), else the context's date (to the second; InputError where a file has none)."""
    uptimes = [fact_number(f, "host.uptime_s") for f in files]
    if not any(math.isnan(u) for u in uptimes):
        return "seconds after the host started (host.uptime_s)", uptimes
    dates = [datetime.fromisoformat(parse_run_time(f)).timestamp() for f in files]
    return "seconds after the first run started (date)", [d - min(dates) for d in dates]


def drift_of_files(files: Sequence[BenchmarkFile]) -> tuple[str, list[float], list[CaseDrift]]:
    """The clock, each run's start on it (in run order), and each case's drift over the runs that hold it."""
    if len(files) < MIN_RUNS:
        raise InputError(f"{len(files)} run(s): a drift needs at least {MIN_RUNS}, two in each third")
    clock, starts = run_starts(files)
    order = np.argsort(starts, kind="stable")
    files = [files[i] for i in order]
    starts = [starts[i] for i in order]
    keys = sorted({k for f in files for k in f.cases})
    out = []
    for key in keys:
        pts = [(t, y) for t, y in zip(starts, _case_times(files, key)) if y is not None]
        if len(pts) < MIN_RUNS:
            continue
        t, y = np.array(pts).T
        rho, p = stats.spearmanr(t, y)
        third = len(y) // 3
        out.append(CaseDrift(key, len(y), float(rho), float(p), float(np.median(y[:third])),
                             float(np.median(y[-third:]))))
    return clock, starts, out


@dataclass
class CaseWindows:
    key: str
    medians_s: list[float | None]  # the median time of the runs that started in each window; None: no run
    p_value: float  # Kruskal-Wallis: do the windows (of two runs or more) hold the same distribution?

    @property
    def spread_pct(self) -> float:
        """How far the slowest window's median is above the fastest's."""
        m = [x for x in self.medians_s if x is not None]
        return 100.0 * (max(m) / min(m) - 1.0)


def _case_times(files: Sequence[BenchmarkFile], key: str) -> list[float | None]:
    """The case's time in each run, seconds (None where the run lacks it)."""
    out: list[float | None] = []
    for f in files:
        case = f.cases.get(key)
        center = case.center("real_time") if case else None
        out.append(center * TIME_UNIT_NS[case.time_unit] * 1e-9 if center is not None and center > 0 else None)
    return out


def windows_of_files(files: Sequence[BenchmarkFile], window_s: float
                     ) -> tuple[str, list[tuple[float, int]], list[CaseWindows]]:
    """The clock, each window of starts that holds a run (its start, how many runs), and each case's median
    per window with the Kruskal-Wallis p-value over the windows of two runs or more."""
    if not window_s > 0:
        raise InputError(f"--window must be more than 0 seconds, not {window_s:g}")
    if len(files) < MIN_RUNS:
        raise InputError(f"{len(files)} run(s): a drift needs at least {MIN_RUNS}")
    clock, starts = run_starts(files)
    index = np.floor(np.asarray(starts) / window_s).astype(int)
    used = np.unique(index)
    windows = [(float(w * window_s), int(np.sum(index == w))) for w in used]
    out = []
    for key in sorted({k for f in files for k in f.cases}):
        times = _case_times(files, key)
        groups = [[t for t, i in zip(times, index) if i == w and t is not None] for w in used]
        tested = [g for g in groups if len(g) >= 2]
        if len(tested) < 2:
            continue
        p = float(stats.kruskal(*tested).pvalue) if len({t for g in tested for t in g}) > 1 else 1.0
        out.append(CaseWindows(key, [float(np.median(g)) if g else None for g in groups], p))
    return clock, windows, out


def render_windows(window_s: float, clock: str, windows: Sequence[tuple[float, int]],
                   cases: Sequence[CaseWindows]) -> str:
    head = "".join(f"{start:>9.0f}" for start, _ in windows)
    lines = [f"{sum(n for _, n in windows)} runs in {len(windows)} windows of {window_s:g} s, {clock}",
             "Per case: its median time in each window, as % above its fastest window's median; the slowest "
             "window's excess; and the Kruskal-Wallis p-value of whether the windows differ at all",
             f"{'window starts (s)':70s} {head} {'spread':>8s} {'p':>8s}",
             f"{'runs':70s} {''.join(f'{n:>9d}' for _, n in windows)}"]
    for c in cases:
        fastest = min(m for m in c.medians_s if m is not None)
        cells = "".join(f"{'-':>9s}" if m is None else f"{100.0 * (m / fastest - 1.0):>+8.1f}%" for m in c.medians_s)
        lines.append(f"{c.key:70s} {cells} {c.spread_pct:>7.1f}% {c.p_value:8.1e}")
    return "\n".join(lines) + "\n"


def render(clock: str, starts: Sequence[float], drifts: Sequence[CaseDrift]) -> str:
    lines = [f"{len(starts)} runs, started {starts[0]:.0f} to {starts[-1]:.0f} {clock}",
             "Per case: Spearman's rank correlation of its time with when the run started (negative: later runs "
             "faster), its p-value, and the median time of the last third of the runs against the first third's",
             f"{'case':70s} {'runs':>4s} {'rho':>6s} {'p':>8s} {'first third':>12s} {'last third':>12s} {'change':>8s}"]
    for d in drifts:
        lines.append(f"{d.key:70s} {d.runs:4d} {d.rho:+6.2f} {d.p_value:8.1e} {d.first_third_s * 1e6:10.1f}us "
                     f"{d.last_third_s * 1e6:10.1f}us {d.change_pct:+7.2f}%")
    return "\n".join(lines) + "\n"
