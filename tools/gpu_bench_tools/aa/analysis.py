"""How far runs of one command on one machine agree (A/A), and what gpu-bench-compare makes of them.

Every figure here compares runs, never samples of one run: the question a user asks of two files.
- spread: a case's (max - min) / median of its headline over the runs, in percent;
- coverage: how often run k's interval (its headline +- noise_pct) holds run k+1's headline, over every
  case and consecutive pair; and over every ordered pair of runs;
- false calls: the share of cases gpu-bench-compare calls faster or slower between consecutive runs;
- with --slowdown P: the later run of each pair made P percent slower (times up, rates down), the share
  of pinned and registered copies of 1 MiB and more that compare calls slower, and whether
  --fail-on-regression fires; then the same with the earlier run made slower. The two differ where the
  runs themselves differ (a host link loaded by others through one whole run): a slowdown that brings
  the faster run to the slower one's figures is one no comparison of the two can see;
- each run's wall time, the share of it in timed samples, and the GPU it ran on (gpu.uuid): whether the
  runs were one machine's, and whether a run spent at least half its time measuring;
- floors: per family, the 90th percentile over cases of one round's relative standard deviation between
  processes (from the runs' rounds where they have several, else from the runs' figures), written for
  gpu-bench-compare's files of one round (floors.py); `merge_floors` takes the larger of each over several
  machines' reports;
- one round a side: every round of run k against every round of run k+1, each round a process of its
  own and so a run of one round, judged as compare judges files of one round (the change beyond the
  floor of the case's family and memory kind, and at least --min-effect): how often the floors call runs
  of one build different, and which families they have no floor for;
- the host link between runs: for the pinned and registered copies of 1 MiB and more in each direction, the
  median change of run k+1's figure against run k's and Wilcoxon's signed-rank test of it. Between runs of
  one build on a link that held still the changes fall either side of zero; where they lean one way
  (p < 0.01) the link itself moved between the runs (others' traffic through one whole run): no interval
  made from one run's rounds holds that, and a slowdown of the faster run is partly hidden by it;
- each run's rounds by the process they ran in: for the same copies, each round's time over its case's
  fastest round, the median by the kind of process (gpu_bench.round_processes: every case, the link-bound
  cases alone, the extra rounds of those whose rounds disagreed, and the process the user started) and by
  bidirectional or one way. Rounds are meant to be moments of one link: a kind that reads slower than the
  others says its processes measure something else, which more rounds of that kind cannot sharpen;
- by family (Transfer's split by memory kind): the cases' median spread, coverage, floor,
  the median and 90th percentile of detectable_pct over every case and run, and the share of all the
  family's cases compare calls slower with every figure of the later run 5% and 10% slower, worst first;
- over the whole matrix, each beside its target: per run, the share of the cases that wrote a detectable_pct
  at DETECTABLE_PCT_LIMIT or less; and the families' catches at each of FAMILY_SLOWDOWNS added up.
"""

from __future__ import annotations

import itertools
import math
import statistics
from typing import Sequence

from ..compare.verdicts import compare
from ..reading.errors import InputError
from ..reading.multigpu import short_gpu_name
from ..reading.results import BenchmarkFile
from ..stats.floors import Floors, load_floors
from ..stats.rounds import spread_group
from .agreement import (DETECTABLE_PCT_LIMIT, FAMILY_SLOWDOWNS, CaseAgreement, FamilyAgreement, FamilyCatch,
                        MatrixShare, Report, Slowdown, family_of, floor_key)
from .altered import slowed
from .figures import (headline_and_noise, is_detection_copy, is_large_pageable_copy, judged_figure, round_times,
                      run_time, slower_pct)
from .host_link import full_over_link, link_drift, round_kinds, spread_by_kind
from .one_round import one_round_comparisons


def p90(values: Sequence[float]) -> float:
    """The 90th percentile, one of the values (the nearest rank); NaN for none."""
    import numpy

    return float(numpy.percentile(values, 90, method="inverted_cdf")) if len(values) else math.nan


def report(files: list[BenchmarkFile], slowdowns: list[float] = (), gate_pct: float = 5.0,
           floors: Floors | None = None) -> Report:
    """`floors`: the between-run floors whose one-round verdicts are tested (default: the shipped ones)."""
    if len(files) < 2:
        raise InputError("an A/A report needs two or more runs of the same command")
    if floors is None:
        floors = load_floors()
    keys = [k for k in files[0].cases if all(k in f.cases for f in files)]
    if not keys:
        raise InputError("the runs have no case in common: were they made with the same filter?")
    cases: list[CaseAgreement] = []
    detectable_runs = [MatrixShare() for _ in files]
    hit_all = total_all = 0
    for key in keys:
        figs = [headline_and_noise(f, f.cases[key]) for f in files]
        if any(v is None for v, _ in figs):
            continue
        values = [v for v, _ in figs]
        noises = [n if n is not None else 0.0 for _, n in figs]
        mid = statistics.median(values)
        covered = sum(1 for a in range(len(values) - 1)
                      if abs(values[a + 1] - values[a]) <= noises[a] / 100.0 * abs(values[a]))
        for a, b in itertools.permutations(range(len(values)), 2):
            total_all += 1
            hit_all += abs(values[b] - values[a]) <= noises[a] / 100.0 * abs(values[a])
        # One round's spread between processes, of the figure compare judges: from every run's rounds where
        # the runs had several (each round is a process of its own), else from the runs' figures.
        rounds = [t for f in files for t in round_times(f, key)]
        judged = [v for v in (judged_figure(f, f.cases[key]) for f in files) if v is not None]
        logs = [math.log(v) for v in (rounds if len(rounds) >= 2 else judged) if v > 0]
        rel_sd = statistics.stdev(logs) * 100.0 if len(logs) >= 2 else 0.0
        written = [f.cases[key].written_detectable_pct() for f in files]
        detectable = [d for d in written if d is not None]
        for run, d in zip(detectable_runs, written):
            if d is not None:
                run.counted += 1
                run.met += d <= DETECTABLE_PCT_LIMIT
        first = files[0].cases[key]
        causes = [d.machine_cause(key) for d in (f.descriptor(first.family) for f in files) if d is not None]
        cases.append(CaseAgreement(key, first.family, values, noises,
                                   (max(values) - min(values)) / abs(mid) * 100.0 if mid else 0.0, rel_sd,
                                   covered, len(values) - 1, detectable, is_detection_copy(files[0], first),
                                   next((c for c in causes if c), None), slower_pcts(files[0], first, values),
                                   is_large_pageable_copy(first)))
    pairs = sum(c.pairs for c in cases)
    coverage_next = sum(c.covered for c in cases) / pairs if pairs else math.nan

    false_calls = []
    for a, b in zip(files, files[1:]):
        cmp = compare([a, b], floors=floors)
        # Whether --fail-on-regression would exit 1 on these two runs of one build: a false alarm.
        counts = {"faster": 0, "slower": 0, "cases": 0, "gate_fired": bool(cmp.regressions(gate_pct))}
        for row in cmp.rows:
            v = row.versus[1]
            if v is None or v.verdict in ("missing", "error"):
                continue
            counts["cases"] += 1
            if v.verdict in ("faster", "slower"):
                counts[v.verdict] += 1
        false_calls.append(counts)

    # The families are judged at FAMILY_SLOWDOWNS whatever was asked, on the later run slowed alone: the
    # earlier run is slowed only at the percentages asked for.
    slowed_runs = {float(pct): slowdown(files, pct, floors, gate_pct, earlier=pct in slowdowns)
                   for pct in dict.fromkeys([*slowdowns, *FAMILY_SLOWDOWNS])}
    slows = [slowed_runs[float(pct)][0] for pct in slowdowns]

    measured: dict[str, float] = {}
    groups: dict[str, list[float]] = {}
    for c in cases:
        groups.setdefault(c.family, []).append(c.rel_sd_pct)
        mem = files[0].cases[c.key].axis("mem")
        if mem:
            groups.setdefault(floor_key(c.family, mem), []).append(c.rel_sd_pct)
        group = spread_group(c.key, files[0].spread_axes(c.family))
        if group != c.family:
            groups.setdefault(group, []).append(c.rel_sd_pct)
    for key in sorted(groups):
        measured[key] = round(p90(groups[key]), 3)
    revisions = sorted({str(f.fact("gpu_bench.git") or "unknown") for f in files})
    return Report([f.path for f in files], short_gpu_name(files[0].fact("gpu.name") or "an unnamed GPU"), cases,
                  coverage_next, hit_all / total_all if total_all else math.nan, false_calls, slows, gate_pct,
                  measured, ", ".join(revisions), [run_time(f) for f in files],
                  one_round_comparisons(files, floors, slowdowns=slowdowns), link_drift(files),
                  [k for k in (round_kinds(f, i) for i, f in enumerate(files, 1)) if k is not None],
                  families(files, cases, measured, {pct: slowed_runs[pct][1] for pct in FAMILY_SLOWDOWNS}),
                  detectable_runs, full_over_link(files), spread_by_kind(files))


def slowdown(files: list[BenchmarkFile], pct: float, floors: Floors, gate_pct: float,
             earlier: bool = True) -> tuple[Slowdown, dict[str, int]]:
    """Each consecutive pair compared with every figure of its later run `pct` percent slower, and with
    `earlier` also of its earlier run instead: the detection copies called slower and whether
    --fail-on-regression fires; and per case, how many pairs call it slower with the later run slowed."""
    s = Slowdown(pct, 0, 0, 0, 0)
    called: dict[str, int] = {}
    for a, b in zip(files, files[1:]):
        s.pairs += 1
        for slowed_earlier, (base, slow) in enumerate(((a, b), (b, a))[:2 if earlier else 1]):
            cmp = compare([base, slowed(slow, pct)], floors=floors)
            fired = bool(cmp.regressions(gate_pct))
            caught = counted = 0
            for row in cmp.rows:
                slower = row.versus[1] is not None and row.versus[1].verdict == "slower"
                if not slowed_earlier:
                    called[row.key] = called.get(row.key, 0) + slower
                if is_detection_copy(a, a.cases[row.key]):
                    counted += 1
                    caught += slower
            if slowed_earlier:
                s.detected_earlier += caught
                s.gate_fired_earlier += fired
            else:
                s.detection_cases += counted
                s.detected += caught
                s.gate_fired += fired
    return s, called


def worst_first(f: FamilyAgreement) -> tuple:
    """Sorts families worst first: the fewest cases caught at each of FAMILY_SLOWDOWNS in turn, then the least
    covered, then the widest detectable_pct."""
    def low(x: float) -> float:
        return math.inf if math.isnan(x) else x

    return (*(low(f.caught(pct)) for pct in FAMILY_SLOWDOWNS), low(f.coverage_next), low(-f.detectable_p90_pct),
            f.family)


def slower_pcts(f: BenchmarkFile, case, values: list[float]) -> list[float]:
    """Each later run's figure over the one before (slower_pct), where both are above 0."""
    return [slower_pct(f, case, a, b) for a, b in zip(values, values[1:]) if a > 0 and b > 0]


def family_shift(cases: list[CaseAgreement]) -> float:
    """The median over `cases` of each consecutive pair's slower_pct; of several pairs, the one largest in size.
    NaN where no case has one."""
    pairs = max((len(c.slower_pct) for c in cases), default=0)
    medians = [statistics.median(v) for v in ([c.slower_pct[i] for c in cases if len(c.slower_pct) > i]
                                               for i in range(pairs)) if v]
    return max(medians, key=abs, default=math.nan)


def runs_over_rounds(files: list[BenchmarkFile], keys: list[str]) -> float:
    """The between-run mean square of the cases `keys` over their within-run one, pooled over the cases: each
    case's runs are the groups of a one-way analysis of variance of its round logarithms (runs of fewer than
    two rounds left out). NaN where no case has two such runs, or its rounds all agree."""
    between = within = between_dof = within_dof = 0.0
    for key in keys:
        runs = [[math.log(t) for t in round_times(f, key)] for f in files if key in f.cases]
        runs = [r for r in runs if len(r) >= 2]
        if len(runs) < 2:
            continue
        grand = statistics.fmean(t for r in runs for t in r)
        between += sum(len(r) * (statistics.fmean(r) - grand) ** 2 for r in runs)
        within += sum((len(r) - 1) * statistics.variance(r) for r in runs)
        between_dof += len(runs) - 1
        within_dof += sum(len(r) - 1 for r in runs)
    if not between_dof or not within > 0:
        return math.nan
    return (between / between_dof) / (within / within_dof)


def families(files: list[BenchmarkFile], cases: list[CaseAgreement], floors: dict[str, float],
             called: dict[float, dict[str, int]]) -> dict[str, FamilyAgreement]:
    """The cases by family (family_of), worst first: `called` is, per slowdown, how many consecutive pairs of
    `files` call each case slower (slowdown's); `floors` the runs' own floors, keyed as family_of keys the
    families."""
    pairs = len(files) - 1
    by: dict[str, list[CaseAgreement]] = {}
    for c in cases:
        by.setdefault(family_of(files[0].cases[c.key]), []).append(c)
    out = []
    for name, cs in by.items():
        detectable = [d for c in cs for d in c.detectable_pct]
        out.append(FamilyAgreement(
            name, len(cs), statistics.median(c.spread_pct for c in cs), sum(c.covered for c in cs),
            sum(c.pairs for c in cs), floors.get(name, math.nan),
            statistics.median(detectable) if detectable else math.nan, p90(detectable),
            [FamilyCatch(pct, sum(called[pct].get(c.key, 0) for c in cs), len(cs) * pairs) for pct in called],
            runs_over_rounds(files, [c.key for c in cs]), family_shift(cs),
            sum(d > DETECTABLE_PCT_LIMIT for d in detectable), len(detectable)))
    return {f.family: f for f in sorted(out, key=worst_first)}
