"""Copies of a run altered for the A/A report: every figure made slower, or each interval re-derived with
the timer's tick as its only floor."""

from __future__ import annotations

import copy

from ..reading.results import BenchmarkFile
from ..stats import rounds as round_model


def slowed(f: BenchmarkFile, pct: float) -> BenchmarkFile:
    """A copy of `f` with every case made `pct` percent slower: times and latencies up, rates down."""
    k = 1.0 + pct / 100.0
    out = copy.deepcopy(f)
    for case in out.cases.values():
        for s in case.samples:
            s.real_time *= k
            s.cpu_time *= k
            if s.sample_times_s:
                s.sample_times_s = [t * k for t in s.sample_times_s]
            if s.round_times_s:
                s.round_times_s = [t * k for t in s.round_times_s]
            for name in list(s.counters):
                if "gbps" in name or name == "bytes_per_second":
                    s.counters[name] /= k
                elif name.endswith(("_us", "_ms", "_ns")):
                    s.counters[name] *= k
    out.path = f"{f.path} (+{pct:g}%)"
    return out


def tick_floor_only(f: BenchmarkFile) -> BenchmarkFile:
    """A copy of `f` whose cases of two rounds or more carry the noise_pct and detectable_pct their rounds and
    written prior give with the timer's tick as their only floor: what gpu_bench would write without the last
    round's own interval as a floor beside it (docs/methodology.md, "Models tried")."""
    tick = f.event_tick_s()
    out = copy.deepcopy(f)
    for case in out.cases.values():
        for s in case.samples:
            times = s.round_times_s or []
            if len(times) < 2 or s.round_prior is None or "noise_pct" not in s.counters:
                continue
            center = round_model.center_of(times)
            fig = round_model.combine(times, tick / center if center > 0 else 0.0, round_model.Prior(*s.round_prior))
            s.counters["noise_pct"] = 100.0 * fig.half_width
            s.counters["detectable_pct"] = 100.0 * fig.detectable
    out.path = f"{f.path} (tick floor only)"
    return out

