"""How far a case's figure moves with the span of time its samples cover (gpu-bench-aa spans).

A round stops sampling once its samples agree, but samples taken within one moment agree even where the
thing they measure changes from one moment to the next (a link shared with another direction or with other
tenants). Runs made with --samples=on and a long --benchmark_min_time keep every sample in order; cutting
each case's samples into consecutive windows of a given span, the median of each window is what a round of
that span would have read. How far those medians spread, between the windows and between the first window
of each run, says how long a round must sample before its median stops depending on the moment.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..reading.errors import InputError
from ..reading.results import BenchmarkFile

DEFAULT_SPANS_S = (0.01, 0.03, 0.1, 0.2, 0.4, 0.7, 1.4)


def window_medians(times_s: Sequence[float], span_s: float) -> list[float]:
    """The median of each run of consecutive samples whose own times add up to `span_s`, in order; the
    samples after the last whole window are left out. Windows go by the samples' own times, which for a copy
    of a mebibyte or more is nearly all of its wall time; a sample longer than the span is a window alone."""
    t = np.asarray(times_s, dtype=float)
    if t.size == 0 or span_s <= 0:
        return []
    ends = np.cumsum(t)
    edges = np.searchsorted(ends, np.arange(span_s, ends[-1] + span_s * 1e-9, span_s), side="left") + 1
    out, start = [], 0
    for end in edges:
        if end > start:
            out.append(float(np.median(t[start:end])))
            start = end
    return out


@dataclass
class SpanSpread:
    span_s: float
    windows: int  # every whole window of every run
    between_windows_pct: float | None  # sd of the windows' log medians, percent; None under two windows
    between_runs_pct: float | None  # sd of the log median of each run's first window; None under two runs


def _sd_pct(medians: list[float]) -> float | None:
    return 100.0 * float(np.std(np.log(medians), ddof=1)) if len(medians) >= 2 else None


def span_spread(runs: Sequence[Sequence[float]], spans_s: Sequence[float] = DEFAULT_SPANS_S) -> list[SpanSpread]:
    """For one case, its samples in each run (in the order taken): at each span, how far the window medians
    spread over every window of every run, and over the first window of each run (a round's, were a round to
    sample for that span from the start)."""
    out = []
    for span in spans_s:
        per_run = [window_medians(times, span) for times in runs]
        every = [m for meds in per_run for m in meds]
        firsts = [meds[0] for meds in per_run if meds]
        out.append(SpanSpread(span, len(every), _sd_pct(every), _sd_pct(firsts)))
    return out


def spans_of_files(files: Sequence[BenchmarkFile], spans_s: Sequence[float] = DEFAULT_SPANS_S
                   ) -> dict[str, list[SpanSpread]]:
    """span_spread for every case with sample times in each of `files` (runs of one command)."""
    series: dict[str, list[list[float]]] = {}
    for f in files:
        for key, case in f.cases.items():
            for s in case.samples:
                if s.sample_times_s:
                    series.setdefault(key, []).append(list(s.sample_times_s))
    if not series:
        raise InputError("no case has sample times: make the runs with gpu_bench --samples=on (and a long "
                         "--benchmark_min_time, so that each case's samples span the longest window)")
    return {key: span_spread(runs, spans_s) for key, runs in sorted(series.items())}


def render(spreads: dict[str, list[SpanSpread]]) -> str:
    if not spreads:
        return ""
    spans = [s.span_s for s in next(iter(spreads.values()))]
    lines = ["How far the median of a case's samples over a window of each span moves, as the standard "
             "deviation of its log (percent): over every whole window of every run (how many in brackets) / over "
             "the first window of each run",
             "case".ljust(60) + "".join(f"{f'{s:g} s':>22}" for s in spans)]

    def cell(x: SpanSpread) -> str:
        def pct(v: float | None) -> str:
            return "-" if v is None else f"{v:.2f}"
        return f"{pct(x.between_windows_pct)} ({x.windows}) / {pct(x.between_runs_pct)}"

    for key, row in spreads.items():
        lines.append(key.ljust(60) + "".join(f"{cell(x):>22}" for x in row))
    return "\n".join(lines) + "\n"
