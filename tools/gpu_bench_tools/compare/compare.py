"""Compare the same cases across files: values, ratios to the first file, and a verdict per case.

A case's verdict rests on runs rather than samples: what a user compares is one run against another, and runs
differ by more than one process's samples say (docs/methodology.md).
- Where both sides have several rounds (gpu_bench's default: each round a process of its own; or several
  files on a side), a moderated Welch test on the rounds' medians (stats/rounds.py): each side's spread is
  its rounds' moderated by the prior gpu_bench wrote for the cases that vary as it does (or, for a file
  without one, the prior its own rounds give), and a change must be at least each side's detectable_pct,
  the smallest change it can show.
- Where a side has one round, its noise_pct speaks of its own process only: every verdict is widened to
  the family's between-run floor (floors.py, measured by gpu-bench-aa), and the samples' Mann-Whitney U
  test (repetitions where there are no samples) decides significance.
A change is called faster or slower only when it is at least --min-effect, larger than the noise of either
side, and significant. Where neither a test nor a floor can judge it, the verdict rests on the ratio and
the noise alone and is marked untested. A noisy verdict reads as the machine's own variance where a side spreads
beyond MACHINE_VARIANCE_PCT and the case's descriptor names the machine's cause.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import re
from dataclasses import dataclass, field

from ..reading.facts import host_cpu, host_cpus_differ
from ..reading.families import MACHINE_VARIANCE_PCT, beyond_machine_variance_pct
from ..reading.load import (
    TIME_UNIT_NS,
    headline_of,
    BenchmarkFile,
    Case,
    canonical_metric,
    context_differences,
    file_labels,
    metric_for,
    unit_and_direction,
)
from ..reading.multigpu import first_gpu_facts_note, short_gpu_name
from ..reading.names import parse_name
from ..reading.errors import InputError
from ..stats import rounds as round_model
from ..stats.floors import Floors
from ..stats.rounds import MIN_EFFECT_ONE_ROUND_PCT, MIN_EFFECT_PCT  # noqa: F401 (the CLI's defaults)
from ..stats.nonparametric import gmean, noise_pct, smallest_p, u_test_pvalues

VERDICTS = ("faster", "slower", "same", "noisy")
# How a noisy verdict reads where a side's spread is the machine's own (Versus.machine_cause), and its key among a
# group's verdicts.
MACHINE_VERDICT = "the machine's own variance"
MACHINE_VERDICT_KEY = "machine_variance"


@dataclass
class Cell:
    """One file's figures for one case, in the row's unit."""

    center: float | None
    n: int  # repetitions
    cv_pct: float | None
    values: list[float] = field(default_factory=list, repr=False)  # what the test uses
    problem: str | None = None
    noise_pct: float | None = None
    noise_from: str = ""  # 'gpu_bench' (written noise_pct) or 'repetitions'
    samples: bool = False  # values are gpu_bench's per-sample values, not repetitions
    reps: list[float] = field(default_factory=list, repr=False)  # one value per repetition
    # One value per round, over repetitions, as a time (a rate's reciprocal): the rounds' center keeps the fastest
    # of them, so a rate handed to it as it is would keep the slowest.
    rounds: list[float] = field(default_factory=list, repr=False)
    prior: round_model.Prior = round_model.NO_PRIOR  # what the rounds' spread is moderated with
    detectable_pct: float | None = None  # the smallest change this side can show (rounds only)
    # What the case varies with between processes, where its descriptor names the machine's own cause and its
    # noise_pct, detectable_pct or cv_pct is above MACHINE_VARIANCE_PCT: the tools say this in place of the figure.
    machine_cause: str | None = None


@dataclass
class Versus:
    """One file against the first file, for one case."""

    ratio: float | None
    speed: float | None  # >1 means faster whatever the metric's direction
    verdict: str  # faster / slower / same / noisy / missing / error
    tested: bool
    p_value: float | None = None
    higher_is_better: bool = False
    method: str = ""
    noise_pct: float | None = None  # the larger of the two sides' noise, or the between-run floor
    floored: bool = False  # a side had one round: the noise is at least its family's between-run floor
    detectable_pct: float | None = None  # the smallest change the comparison calls: the larger side's
    machine_cause: str | None = None  # a side's Cell.machine_cause: a noisy verdict is the machine's own variance

    @property
    def machine_variance(self) -> bool:
        """Whether the verdict is noisy for the machine's own variance, which gpu_bench cannot remove."""
        return self.verdict == "noisy" and self.machine_cause is not None

    @property
    def slowdown_pct(self) -> float:
        """How much worse the metric itself got, in percent: GB/s lost, or time added."""
        if not self.ratio:
            return 0.0
        return (1.0 - self.ratio) * 100.0 if self.higher_is_better else (self.ratio - 1.0) * 100.0


@dataclass
class Row:
    key: str
    family: str
    metric: str
    unit: str
    higher_is_better: bool
    cells: list[Cell | None]
    versus: list[Versus | None]
    host_side: bool = False  # a figure of the host (its family's host_side rule): it depends on the host's CPU

    @property
    def machine_cause(self) -> str | None:
        """The first file's Cell.machine_cause, else another's."""
        return next((c.machine_cause for c in self.cells if c is not None and c.machine_cause), None)


@dataclass
class FamilySummary:
    family: str
    cases: int
    geomean_speed: list[float | None]  # per file, against the first
    counts: list[dict[str, int]]


@dataclass
class GroupSummary:
    """The verdicts of one group of cases against the first file: a family, the values of its spread axes
    (memory kind and direction) and a size band, as gpu_bench groups cases that share their spread, so that
    the copies of one memory kind, direction and size say one thing and small copies' fixed costs stay apart
    from large copies' bandwidth."""

    family: str
    axes: tuple[tuple[str, str], ...]  # e.g. (("dir", "h2d"), ("mem", "pinned")), in the names' order
    band: str | None  # the size band (stats.rounds.size_band), None for cases without a size
    sizes: tuple[int, int] | None  # the smallest and largest size among the cases
    cases: int
    higher_is_better: bool  # a rate (bandwidth), not a time
    # Per file, against the first (the first file's is empty): each verdict's speeds (above 1 is faster).
    # An untested faster or slower verdict is kept as 'faster?' or 'slower?'.
    speeds: list[dict[str, list[float]]] = field(default_factory=list)


@dataclass
class Comparison:
    paths: list[str]
    labels: list[str]
    metric: str | None
    context_diff: list[tuple[str, list[str]]]
    rows: list[Row]
    only_in: list[tuple[str, list[int]]]
    families: list[FamilySummary]
    warnings: list[str]
    alpha: float
    min_effect_pct: float
    floors_path: str | None = None
    groups: list[GroupSummary] = field(default_factory=list)
    # What a case's counters say happened while it ran, in words (Case.notes): (case, file index, note).
    case_notes: list[tuple[str, int, str]] = field(default_factory=list)

    def regressions(self, pct: float) -> list[tuple[Row, int]]:
        """(row, file index) where the file is slower than the first by more than pct and the test agrees."""
        out = []
        for row in self.rows:
            for i, v in enumerate(row.versus):
                if v and v.tested and v.verdict == "slower" and v.slowdown_pct > pct:
                    out.append((row, i))
        return out


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


def compare(
    files: list[BenchmarkFile],
    metric: str | None = None,
    case_filter: str | None = None,
    alpha: float = 0.05,
    min_effect_pct: float | None = None,
    floors: Floors | None = None,
) -> Comparison:
    """Compare every case of the files against the first file.  Raises re.error on a bad filter.

    `min_effect_pct`: no smaller change is called (default: MIN_EFFECT_PCT where both sides have rounds,
    MIN_EFFECT_ONE_ROUND_PCT where a side has none). `floors`: the between-run floors for sides of one round
    (default: the ones shipped with the tools).
    """
    effect_rounds = MIN_EFFECT_PCT if min_effect_pct is None else min_effect_pct
    effect_one = MIN_EFFECT_ONE_ROUND_PCT if min_effect_pct is None else min_effect_pct
    if floors is None:
        from ..stats.floors import load_floors

        floors = load_floors()
    rx = re.compile(case_filter) if case_filter else None
    notes: list[str] = []
    for f in files:
        if not f.is_gpu_bench:
            notes.append(f"{f.path}: plain Google Benchmark JSON (no gpu_bench context): no GPU facts to compare")
    old_facts = first_gpu_facts_note(files)
    if old_facts:
        notes.append(old_facts)

    keys: list[str] = []
    seen: set[str] = set()
    for f in files:
        for k in f.cases:
            if k not in seen and (rx is None or rx.search(k)):
                seen.add(k)
                keys.append(k)

    rows: list[Row] = []
    only_in: list[tuple[str, list[int]]] = []
    pending: list[tuple[Row, int, list[float], list[float]]] = []
    pending_rounds: list[tuple[Row, int, list[float], list[float]]] = []
    floored: list[tuple[Row, bool]] = []  # each comparison widened to the floor, and whether both sides had rounds
    no_metric = 0
    per_gpu: list[tuple[str, dict[int, int]]] = []
    for key in keys:
        present = [i for i, f in enumerate(files) if key in f.cases]
        if len(present) < len(files):
            only_in.append((key, present))
        if 0 not in present or len(present) < 2:
            continue
        first = files[0].cases[key]
        m = metric_for(files[0], first, metric)
        if metric and not any(files[i].cases[key].has_metric(m) for i in present):
            no_metric += 1
            continue
        unit, hib = unit_and_direction(files[0], first.family, m, first.time_unit)
        cells: list[Cell | None] = [
            _cell(f, f.cases[key], m, unit if unit in TIME_UNIT_NS else f.cases[key].time_unit, hib) if key in f.cases
            else None for f in files
        ]
        gpus = {i: n for i in present if (n := case_gpus(files[i].cases[key])) is not None}
        if hib and len(set(gpus.values())) > 1:
            # One node's total over all its GPUs against another's over fewer says how many GPUs each has:
            # each side's rate per GPU is what its GPUs do.
            cells = [_per_gpu(c, gpus[i]) if c is not None and i in gpus else c for i, c in enumerate(cells)]
            unit += " per GPU"
            per_gpu.append((key, gpus))
        row = Row(key, first.family, m, unit, hib, cells, [None] * len(files),
                  host_side=any(d is not None and d.is_host_side(key)
                                for d in (files[i].descriptor(first.family) for i in present)))
        base = cells[0]
        for i in range(1, len(files)):
            c = cells[i]
            if c is None:
                row.versus[i] = Versus(None, None, "missing", False)
                continue
            if base is None or base.center is None or c.center is None:
                row.versus[i] = Versus(None, None, "error", False)
                continue
            ratio = c.center / base.center if base.center else None
            speed = (ratio if hib else 1.0 / ratio) if ratio and ratio > 0 else None
            noises = [x for x in (base.noise_pct, c.noise_pct) if x is not None]
            v = row.versus[i] = Versus(ratio, speed, "same", False, higher_is_better=hib,
                                       noise_pct=max(noises) if noises else None,
                                       machine_cause=base.machine_cause or c.machine_cause)
            if base.detectable_pct is not None and c.detectable_pct is not None:
                pending_rounds.append((row, i, base, c))
                continue
            floor = _floor(floors, files[0], files[i], first)
            if floor is not None and canonical_metric(m) in ("real_time", canonical_metric(
                    headline_of(files[0], row.family))):
                v.noise_pct, v.floored = max(v.noise_pct or 0.0, floor), True
                floored.append((row, _has_rounds(files[0], first) and _has_rounds(files[i], files[i].cases[key])))
            # The same kind of values on both sides: per-sample where both have them, else repetitions.
            a, b = (base.values, c.values) if base.samples == c.samples else (base.reps, c.reps)
            if smallest_p(len(a), len(b)) < alpha:
                pending.append((row, i, list(a), list(b)))
            else:
                v.verdict = verdict(speed, None, alpha, effect_one, v.noise_pct)
                v.tested, v.method = v.floored, "floor" if v.floored else ""
        rows.append(row)

    for (row, i, _, _), (p, method) in zip(pending, u_test_pvalues([(a, b) for _, _, a, b in pending])):
        v = row.versus[i]
        v.tested, v.p_value, v.method = True, p, method
        v.verdict = verdict(v.speed, p, alpha, effect_one, v.noise_pct)
    # Where both sides have rounds, the moderated test on them judges, and a change must be at least what each
    # side can show (its detectable_pct: the critical difference of this test against a run like it, the
    # timer's tick and the minimum effect), so a side whose own rounds spread more is not called on the other
    # side's sharper spread alone.
    for row, i, a, b in pending_rounds:
        v = row.versus[i]
        _, p = round_model.moderated_test(a.rounds, a.prior, b.rounds, b.prior)
        v.detectable_pct = max(a.detectable_pct, b.detectable_pct, effect_rounds)
        v.tested, v.p_value, v.method = True, p, "moderated-rounds"
        v.verdict = verdict(v.speed, p, alpha, effect_rounds, v.detectable_pct)
    if floored:
        models = sorted({short_gpu_name(f.fact("gpu.name") or "") for f in files} - {""})
        which = "; ".join(floors.table_for(g) for g in models) or floors.table_for(None)
        widened = f"each is widened to its group's between-run floor ({floors.path}: {which}; {floors.source})"
        one_round = [r for r, rounds in floored if not rounds]
        if one_round:
            notes.append(f"{len(one_round)} comparison(s) have one round on a side ({_which_cases(one_round, rows)}), "
                         f"whose noise_pct speaks of one process only: {widened}")
        # Both sides have rounds, but they hold only the case's time: a headline of another kind (HostBlocking's
        # host time) is reported from the last round alone, so the rounds cannot judge it.
        unrecorded = [r for r, rounds in floored if rounds]
        if unrecorded:
            metrics = ", ".join(sorted({r.metric for r in unrecorded}))
            notes.append(f"{len(unrecorded)} comparison(s) ({_which_cases(unrecorded, rows)}) judge {metrics}, "
                         "which each run reports from its last round alone, as its rounds record only the case's "
                         f"time: {widened}")

    untested = sum(1 for r in rows for v in r.versus if v and v.verdict in VERDICTS and not v.tested)
    if untested:
        notes.append(
            f"{untested} comparison(s) have too few samples on a side for a test to reach p < {alpha:g}: their "
            f"verdicts come from the ratio and the noise alone (effect >= {effect_one:g}%); run gpu_bench "
            "with its default --rounds (3), or give several runs a side (--per-side)"
        )
    if per_gpu:
        fams = sorted({parse_name(k).family for k, _ in per_gpu})
        counts = "; ".join(sorted({", ".join(f"[{i + 1}] {n}" for i, n in sorted(g.items())) for _, g in per_gpu}))
        notes.append(f"{len(per_gpu)} case(s) ({', '.join(fams)}) ran on more GPUs in one file than in another "
                     f"(GPUs: {counts}): each side's total is divided by its GPUs, and compared per GPU")
    if no_metric:
        notes.append(f"{no_metric} case(s) have no '{metric}' counter and are left out")
    if keys and not rows:
        notes.append("no case is present in the first file and another one")
    host_rows = [r for r in rows if r.host_side]
    differ = [i for i in range(1, len(files)) if host_cpus_differ(files[0], files[i])]
    # Only host-side figures depend on the host's CPU; the header lists the difference whatever is compared.
    if differ and host_rows:
        which = "; ".join(f"[{i + 1}] {host_cpu(files[i])}" for i in differ)
        fams = sorted({r.family for r in host_rows})
        notes.append(f"the host CPU differs: [1] {host_cpu(files[0])}; {which}: "
                     f"{len(host_rows)} host-side figure(s) ({', '.join(fams)}) measure the host as much as the GPU")
    by_cause: dict[str, list[Row]] = {}
    for r in rows:
        for v in r.versus:
            if v is not None and v.machine_variance:
                by_cause.setdefault(v.machine_cause, []).append(r)
    for cause, some in by_cause.items():
        notes.append(f"{MACHINE_VERDICT}: {len({r.key for r in some})} case(s) ({_which_cases(some, rows)}) spread "
                     f"beyond {MACHINE_VARIANCE_PCT:g}% and vary with {cause}; gpu_bench cannot remove that, so no "
                     "change within it is called")
    with_device = [any(c.axis("device") is not None for c in f.cases.values()) for f in files]
    if any(with_device) and not all(with_device):
        notes.append("some files have a /device:N axis (gpu_bench --device=all) and some do not, so their "
                     "single-GPU cases do not match; run every machine with the same --device")

    return Comparison(
        paths=[f.path for f in files],
        # Host-side figures are keyed on the host's CPU as well as the GPU: their columns say which.
        labels=file_labels(files, with_host=bool(host_rows)),
        metric=metric,
        context_diff=context_differences(files),
        rows=rows,
        only_in=only_in,
        families=_family_summaries(rows, len(files)),
        groups=group_summaries(files, rows),
        warnings=notes,
        case_notes=[(key, i, note) for key in keys for i, f in enumerate(files) if key in f.cases
                    for note in f.cases[key].notes()],
        alpha=alpha,
        min_effect_pct=effect_rounds if min_effect_pct is None else min_effect_pct,
        floors_path=floors.path,
    )


def _has_rounds(f: BenchmarkFile, case: Case) -> bool:
    """Whether a side measured the case in several rounds: several runs, or round_times_s in the file."""
    return getattr(f, "runs", 1) > 1 or any(len(s.round_times_s or ()) >= 2 for s in case.samples)


def _which_cases(some: list[Row], rows: list[Row]) -> str:
    """Which of the compared rows `some` are, by family ('all 24 HostBlocking cases'), and the first case."""
    some = list({r.key: r for r in some}.values())  # a row of several files is in `some` once for each
    counts: dict[str, int] = {}
    for r in some:
        counts[r.family] = counts.get(r.family, 0) + 1
    totals: dict[str, int] = {}
    for r in rows:
        totals[r.family] = totals.get(r.family, 0) + 1
    fams = [f"all {n} {fam} cases" if n == totals[fam] else f"{n} of the {totals[fam]} {fam} cases"
            for fam, n in counts.items()]
    return f"{', '.join(fams)}, e.g. {some[0].key}" if len(some) > 1 else some[0].key


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


def verdict(speed: float | None, p: float | None, alpha: float, min_effect_pct: float,
           noise: float | None) -> str:
    """faster/slower when the change is at least min_effect, beyond the noise and (where tested) significant."""
    if speed is None:
        return "error"
    change = abs(speed - 1.0) * 100.0
    if change < min_effect_pct:
        return "same"
    if (noise is not None and change <= noise) or (p is not None and p >= alpha):
        return "noisy"
    return "faster" if speed > 1.0 else "slower"


def verdict_key(v: Versus) -> str:
    """A comparison's verdict, with '?' where a faster or slower one is not tested (fmt_verdict's words), and
    MACHINE_VERDICT_KEY where a noisy one is the machine's own variance."""
    if v.machine_variance:
        return MACHINE_VERDICT_KEY
    return v.verdict if v.tested or v.verdict not in ("faster", "slower") else v.verdict + "?"


def group_summaries(files: list[BenchmarkFile], rows: list[Row]) -> list[GroupSummary]:
    """The rows' verdicts per family, spread axes (memory kind, direction) and size band: the families whose
    figure is a rate (bandwidth, a buyer's first question) before those whose figure is a time, each in the
    rows' order of families and axes, with its bands from the smallest size up."""
    nfiles = len(files)
    groups: dict[tuple, GroupSummary] = {}
    for r in rows:
        name = parse_name(r.key)
        spread = set(files[0].spread_axes(r.family))
        axes = tuple((k, v) for k, v in name.axes if k in spread)
        size = name.axis("bytes")
        nbytes = int(size) if size is not None and size.isdigit() else None
        band = round_model.size_band(nbytes) if nbytes is not None else None
        g = groups.get((r.family, axes, band))
        if g is None:
            g = groups[(r.family, axes, band)] = GroupSummary(r.family, axes, band, None, 0, r.higher_is_better,
                                                              [{} for _ in range(nfiles)])
        g.cases += 1
        if nbytes is not None:
            g.sizes = (min(g.sizes[0], nbytes), max(g.sizes[1], nbytes)) if g.sizes else (nbytes, nbytes)
        for i in range(1, nfiles):
            v = r.versus[i]
            if v is not None:
                g.speeds[i].setdefault(verdict_key(v), []).append(v.speed if v.speed is not None else math.nan)
    families = list(dict.fromkeys(g.family for g in groups.values()))
    axes_order = list(dict.fromkeys((g.family, g.axes) for g in groups.values()))
    return sorted(groups.values(), key=lambda g: (not g.higher_is_better, families.index(g.family),
                                                  axes_order.index((g.family, g.axes)), g.sizes[0] if g.sizes else 0))


def _family_summaries(rows: list[Row], nfiles: int) -> list[FamilySummary]:
    fams: dict[str, list[Row]] = {}
    for r in rows:
        fams.setdefault(r.family, []).append(r)
    out = []
    for fam, rs in fams.items():
        geo: list[float | None] = [None] * nfiles
        counts: list[dict[str, int]] = [{} for _ in range(nfiles)]
        for i in range(1, nfiles):
            geo[i] = gmean([r.versus[i].speed for r in rs if r.versus[i] and r.versus[i].speed])
            for r in rs:
                v = r.versus[i]
                if v:
                    counts[i][v.verdict] = counts[i].get(v.verdict, 0) + 1
        out.append(FamilySummary(fam, len(rs), geo, counts))
    return out
