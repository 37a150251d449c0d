"""Whether a machine's figures drift over a series of runs (gpu-bench-aa drift).

Runs of one command, one after the other, should read alike whatever their order, and an interval built
from one run's rounds assumes they do. A host that started minutes ago need not: its link to the GPU may
still be speeding up (docs/methodology.md, "The first minutes after the host starts"). This puts the runs
in the order they started (host.uptime_s where every run has it, else the context's date) and gives, per
case, Spearman's rank correlation between that start and the case's time, its p-value, and how far the
median time of the last third of the runs is from that of the first third.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Sequence

import numpy as np
from scipy import stats

from ..history.history import parse_run_time
from ..reading.errors import InputError
from ..reading.facts import host_uptime_s
from ..reading.results import TIME_UNIT_NS, BenchmarkFile

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
    uptimes = [host_uptime_s(f) for f in files]
    if all(u is not None for u in uptimes):
        return "seconds after the host started (host.uptime_s)", [float(u) for u in uptimes]
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
        pts = []
        for f, t in zip(files, starts):
            case = f.cases.get(key)
            center = case.center("real_time") if case else None
            if center is not None and center > 0:
                pts.append((t, center * TIME_UNIT_NS[case.time_unit] * 1e-9))
        if len(pts) < MIN_RUNS:
            continue
        t, y = np.array(pts).T
        rho, p = stats.spearmanr(t, y)
        third = len(y) // 3
        out.append(CaseDrift(key, len(y), float(rho), float(p), float(np.median(y[:third])),
                             float(np.median(y[-third:]))))
    return clock, starts, out


def render(clock: str, starts: Sequence[float], drifts: Sequence[CaseDrift]) -> str:
    lines = [f"{len(starts)} runs, started {starts[0]:.0f} to {starts[-1]:.0f} {clock}",
             "Per case: Spearman's rank correlation of its time with when the run started (negative: later runs "
             "faster), its p-value, and the median time of the last third of the runs against the first third's",
             f"{'case':70s} {'runs':>4s} {'rho':>6s} {'p':>8s} {'first third':>12s} {'last third':>12s} {'change':>8s}"]
    for d in drifts:
        lines.append(f"{d.key:70s} {d.runs:4d} {d.rho:+6.2f} {d.p_value:8.1e} {d.first_third_s * 1e6:10.1f}us "
                     f"{d.last_third_s * 1e6:10.1f}us {d.change_pct:+7.2f}%")
    return "\n".join(lines) + "\n"
