"""What the A/A analyses read of one run: a case's headline and noise, the figure compare judges, its
rounds, whether it is one of the copies the slowdowns are planted in; and the run's wall time."""

from __future__ import annotations

import math
import statistics

from ..reading.facts import fact_number, round_host
from ..reading.families import LINK_BOUND_MIN_BYTES, link_bound_oracle
from ..reading.load import metric_for, unit_and_direction
from ..reading.results import BenchmarkFile
from .agreement import RunTime

# The copies the slowdowns are planted in: Transfer's link-bound cases, one GPU's copies at the host link's own
# throughput. AllHost's cases are link-bound too, but their figure is every GPU's at once.
DETECTION_FAMILY = "Transfer"


def run_time(f: BenchmarkFile) -> RunTime:
    rounds = round_host(f)
    others, steal = [o for o, _ in rounds], [s for _, s in rounds]
    return RunTime(str(f.fact("gpu.uuid") or "unknown"), fact_number(f, "gpu_bench.elapsed_s"),
                   fact_number(f, "gpu_bench.timed_s"), fact_number(f, "gpu_bench.calibration_timed_s"),
                   fact_number(f, "host.uptime_s"), *_median_and_most(others), *_median_and_most(steal))


def _median_and_most(values: list[float]) -> tuple[float, float]:
    return (statistics.median(values), max(values)) if values else (math.nan, math.nan)


def noise_metric(f: BenchmarkFile, case) -> str:
    """The metric headline_and_noise reads: the headline where noise_pct is about it (a rate or a time), else
    the case's time, which noise_pct is about."""
    d = f.descriptor(case.family)
    return metric_for(f, case, None) if d is None or d.headline_kind in ("rate", "time") else "real_time"


def headline_and_noise(f: BenchmarkFile, case) -> tuple[float | None, float | None]:
    """(figure, noise_pct) of a case in a file, or (None, None) where it has none (noise_metric's figure)."""
    if not case.ok:
        return None, None
    v = case.center(noise_metric(f, case))
    noise = case.written_noise_pct()
    if v is None or not math.isfinite(v):
        return None, None
    return v, noise


def slower_pct(f: BenchmarkFile, case, earlier: float, later: float) -> float:
    """`later` over `earlier`, two of the case's headline_and_noise figures, in percent: + where `later` is
    slower, a rate read the other way up."""
    higher = unit_and_direction(f, case.family, noise_metric(f, case), case.time_unit)[1]
    return 100.0 * ((earlier / later) if higher else (later / earlier)) - 100.0


def judged_figure(f: BenchmarkFile, case) -> float | None:
    """The figure gpu-bench-compare judges for a case: its headline, whatever kind it is (HostBlocking's is the
    host's time, which no round and no noise_pct speaks of)."""
    v = case.center(metric_for(f, case, None)) if case.ok else None
    return v if v is not None and math.isfinite(v) and v > 0 else None


def round_times(f: BenchmarkFile, key: str) -> list[float]:
    """A case's round figures in one file (each round a process of its own), where its headline follows from
    its time (a rate or a time); none for a failed case or a headline of another kind."""
    case = f.cases[key]
    d = f.descriptor(case.family)
    if not case.ok or (d is not None and d.headline_kind not in ("rate", "time")):
        return []
    return [t for smp in case.samples for t in (smp.round_times_s or [])]


def is_large_pageable_copy(case) -> bool:
    """Whether a case is one of DETECTION_FAMILY's pageable copies of 1 MiB and more, whichever way it goes: from
    the size at which the pinned copies are held to the link's rate."""
    size = case.axis_int("bytes")
    return (case.family == DETECTION_FAMILY and case.axis("mem") == "pageable" and size is not None
            and size >= LINK_BOUND_MIN_BYTES)


def is_detection_copy(f: BenchmarkFile, case) -> bool:
    """Whether a case of `f` is one of the copies the slowdowns are planted in: link-bound by the file's own
    rule (family.transfer.link_bound), and of DETECTION_FAMILY."""
    d = f.descriptor(case.family)
    return case.family == DETECTION_FAMILY and (d.is_link_bound(case) if d is not None else link_bound_oracle(case))

