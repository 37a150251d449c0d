"""Each file's figures for one case, in the row's unit, and the files a side is made of: several runs merged
into one side, or one run of one round."""

from __future__ import annotations

import copy
import dataclasses
import math

from ..reading.families import beyond_machine_variance_pct
from ..reading.load import TIME_UNIT_NS, BenchmarkFile, Case, canonical_metric
from ..reading.multigpu import short_gpu_name
from ..reading.errors import InputError
from ..stats import rounds as round_model
from ..stats.floors import Floors
from ..stats.nonparametric import noise_pct
from .record import Cell


def _convert(values: list[float], metric: str, from_unit: str, to_unit: str) -> list[float]:
    if canonical_metric(metric) in ("real_time", "cpu_time") and from_unit != to_unit and to_unit in TIME_UNIT_NS:
        f = TIME_UNIT_NS[from_unit] / TIME_UNIT_NS[to_unit]
        return [v * f for v in values]
    return values


def _refuse_non_finite(f: BenchmarkFile, case: Case, metric: str) -> None:
    """A figure written as NaN or infinity cannot be compared, and must not pass for a failed case."""
    bad = case.non_finite
    if bad is None:
        m = canonical_metric(metric)
        for s in case.samples:
            v = s.counters.get(m) if m not in ("real_time", "cpu_time") else getattr(s, m)
            if v is not None and not math.isfinite(v):
                bad = m
                break
    if bad is not None:
        raise InputError(f"{f.path}: {case.key}: its {bad} is not a finite number, so it cannot be compared "
                         "(rerun the case, or leave it out with --filter)")


def _file_priors(f: BenchmarkFile) -> dict[str, round_model.Prior]:
    """The spread prior of each case of a file that wrote none: fitted on its own earlier rounds, as gpu_bench
    fits it (stats/rounds.py), once per file."""
    cached = f.__dict__.get("_round_priors")
    if cached is None:
        rounds = {k: c.samples[0].round_times_s for k, c in f.cases.items()
                  if c.ok and c.samples and c.samples[0].round_times_s and len(c.samples[0].round_times_s) >= 3}
        cached = f.__dict__["_round_priors"] = round_model.fit_file_priors(rounds, f.spread_axes, f.event_tick_s())
    return cached


def _floor(floors: Floors, a: BenchmarkFile, b: BenchmarkFile, case: Case) -> float | None:
    """The between-run floor a one-round comparison of `case` between files `a` and `b` is widened to: the
    larger of the two GPU models' (the floors of every model measured for a model that has none)."""
    group = round_model.spread_group(case.key, a.spread_axes(case.family))
    found = [floors.half_width_pct(case.family, case.axis("mem"), group, short_gpu_name(f.fact("gpu.name") or ""))
             for f in (a, b)]
    known = [h for h in found if h is not None]
    return max(known) if known else None


def _round_judgement(f: BenchmarkFile, case: Case, cell: Cell) -> None:
    """The prior and detectable_pct of a side with rounds: as gpu_bench wrote them, else from its own rounds."""
    written = case.round_prior()
    cell.prior = round_model.Prior(*written) if written else _file_priors(f).get(case.key, round_model.NO_PRIOR)
    det = [s.counters["detectable_pct"] for s in case.samples if math.isfinite(s.counters.get("detectable_pct", math.nan))]
    if det:
        cell.detectable_pct = max(det)
    else:  # an older file, or several runs on a side: what its rounds show
        cell.detectable_pct = 100.0 * round_model.combine(cell.rounds, 0.0, cell.prior).detectable


def case_gpus(case: Case) -> int | None:
    """How many GPUs a case ran on at once (its `gpus` counter, as AllHost writes it); None where it has none."""
    n = case.center("gpus") if case.ok and case.has_metric("gpus") else None
    return int(round(n)) if n is not None and math.isfinite(n) and n >= 1 else None


def _per_gpu(cell: Cell, gpus: int) -> Cell:
    """A rate over `gpus` GPUs as the rate of one of them: the relative noise, spread and test are unchanged."""
    if gpus == 1:
        return cell
    return dataclasses.replace(
        cell, center=None if cell.center is None else cell.center / gpus, values=[v / gpus for v in cell.values],
        reps=[v / gpus for v in cell.reps], rounds=[t * gpus for t in cell.rounds])  # rounds are times per byte


def _as_times(values: list[float], higher_is_better: bool) -> list[float]:
    """Values of a metric as times: a rate's reciprocals (what its figure is the center of), a time as it is. A
    rate of zero or less stays as it is, and the rounds are then not tested (as a time of zero or less)."""
    return [1.0 / v if v > 0 else v for v in values] if higher_is_better else list(values)


def _cell(f: BenchmarkFile, case: Case, metric: str, unit: str, higher_is_better: bool) -> Cell:
    _refuse_non_finite(f, case, metric)
    if not case.ok:
        return Cell(None, 0, None, [], case.problem)
    if not case.has_metric(metric):
        return Cell(None, 0, None, [], f"no '{metric}' counter")
    reps = _convert(case.values(metric), metric, case.time_unit, unit)
    center = case.center(metric)
    if center is not None:
        center = _convert([center], metric, case.time_unit, unit)[0]
    d = f.descriptor(case.family)
    per_sample = _convert(case.sample_values(metric, d.headline, d.headline_kind), metric, case.time_unit, unit) \
        if d else []
    # noise_pct is about the case's time, and so about a headline that follows from it (a rate or a time);
    # a headline of another kind (HostBlocking's host time) has no interval of its own.
    about_time = canonical_metric(metric) == "real_time" or (
        d is not None and canonical_metric(metric) == d.headline and d.headline_kind in ("rate", "time"))
    written = case.written_noise_pct() if d and about_time else None
    noise, source = (written, "gpu_bench") if written is not None else (noise_pct(reps), "repetitions")
    cell = Cell(center, len(reps), case.spread(metric), reps, noise_pct=noise, noise_from=source, reps=reps)
    if per_sample:
        cell.values, cell.samples = per_sample, True
    if d:
        cell.rounds = _as_times(_convert(case.round_values(metric, d.headline, d.headline_kind), metric,
                                         case.time_unit, unit), higher_is_better)
    if not cell.rounds and getattr(f, "runs", 1) > 1:
        cell.rounds = _as_times(reps, higher_is_better)  # several files on this side: each run is a round
    if len(cell.rounds) >= 2 and all(v > 0 for v in cell.rounds):
        _round_judgement(f, case, cell)
    cause = d.machine_cause(case.key) if d else None
    if cause and beyond_machine_variance_pct(cell.noise_pct, cell.detectable_pct, cell.cv_pct):
        cell.machine_cause = cause
    return cell


def _has_rounds(f: BenchmarkFile, case: Case) -> bool:
    """Whether a side measured the case in several rounds: several runs, or round_times_s in the file."""
    return getattr(f, "runs", 1) > 1 or any(len(s.round_times_s or ()) >= 2 for s in case.samples)


# The fewest rounds a side needs for compare to judge on its own spread: gpu_bench's default --rounds. Two
# give one degree of freedom (Student's t of 12.7 at 95%).
ROUNDS_NEEDED = 3


def one_round_side(f: BenchmarkFile) -> bool:
    """Whether a side of a comparison is one gpu_bench run whose cases ran in one round each (--rounds=1, or a
    file from before rounds): its noise_pct speaks of one process only. Plain Google Benchmark files are judged
    on their samples, with a note."""
    if getattr(f, "runs", 1) > 1 or not f.is_gpu_bench:
        return False
    return not any(len(s.round_times_s or ()) >= 2 for c in f.cases.values() for s in c.samples)


def merge_runs(files: list[BenchmarkFile]) -> BenchmarkFile:
    """Several runs of one command as one side of a comparison: every run's repetitions (and rounds) of a
    case together, the first run's context. Each run counts as a round where a run has no rounds of its own.
    """
    if len(files) == 1:
        return files[0]
    cases = {}
    for f in files:
        for key, case in f.cases.items():
            merged = cases.get(key)
            if merged is None:
                merged = cases[key] = copy.copy(case)
                merged.samples, merged.errors, merged.skips = [], list(case.errors), list(case.skips)
            else:
                merged.errors += case.errors
                merged.skips += case.skips
                merged.non_finite = merged.non_finite or case.non_finite
            for smp in case.samples:
                merged.samples.append(dataclasses.replace(smp, repetition=len(merged.samples)))
    return BenchmarkFile(" + ".join(f.path for f in files), files[0].context, cases, files[0].schema,
                         runs=len(files))
