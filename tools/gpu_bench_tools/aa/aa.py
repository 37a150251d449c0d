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
  family's cases compare calls slower with every figure of the later run 5% and 10% slower, worst first.
"""

from __future__ import annotations

import copy
import itertools
import json
import math
import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Sequence

from ..reading.errors import InputError
from ..reading.facts import fact_number
from ..reading.results import BenchmarkFile
from ..stats import floors as floors_module
from ..stats.floors import Floors

COVERAGE_TARGET = 0.90
FALSE_CALL_LIMIT = 0.05
DETECTION_TARGET = 0.90
DETECTION_FILTER = ("Transfer", ("pinned", "registered"), 1 << 20)
TIMED_SHARE_TARGET = 0.50
DRIFT_P = 0.01  # a direction's copies moved between runs where their changes lean one way this surely
DRIFT_MIN_CASES = 6  # fewer changes than this are not tested
FAMILY_SLOWDOWNS = (5.0, 10.0)  # each family's share caught is given at these, whatever --slowdown asks
# Given per memory kind: one row would mix pinned copies with pageable ones, whose detectable_pct is ten times theirs.
SPLIT_BY_MEM = ("Transfer",)


@dataclass
class CaseAgreement:
    key: str
    family: str
    values: list[float]
    noise_pct: list[float]
    spread_pct: float
    rel_sd_pct: float
    covered: int  # consecutive pairs whose later figure lies in the earlier run's interval
    pairs: int
    detectable_pct: list[float] = field(default_factory=list)  # each run's, where it wrote one
    detection: bool = False  # a pinned or registered copy of 1 MiB and more


@dataclass
class Slowdown:
    pct: float
    detected: int  # detection cases called slower, summed over pairs, the later run made slower
    detection_cases: int  # summed over pairs
    gate_fired: int  # pairs for which --fail-on-regression fires
    pairs: int
    detected_earlier: int = 0  # the same with the earlier run of each pair made slower
    gate_fired_earlier: int = 0

    @property
    def rate(self) -> float:
        return self.detected / self.detection_cases if self.detection_cases else math.nan

    @property
    def rate_earlier(self) -> float:
        return self.detected_earlier / self.detection_cases if self.detection_cases else math.nan


@dataclass
class FamilyCatch:
    """A family's cases called slower with every figure of the later run of each pair `pct` percent slower."""
    pct: float
    caught: int  # summed over pairs
    cases: int  # the family's cases, summed over pairs

    @property
    def rate(self) -> float:
        return self.caught / self.cases if self.cases else math.nan


@dataclass
class FamilyAgreement:
    """One family's cases (Transfer's of one memory kind): how far its runs agree and what compare catches."""
    family: str  # the family, or for Transfer its floor key: Transfer/mem:KIND
    cases: int
    median_spread_pct: float
    covered: int  # consecutive pairs whose later figure lies in the earlier run's interval
    pairs: int
    floor_pct: float  # the between-run floor the runs show (p90 relative sd), NaN where none
    detectable_median_pct: float  # over every case and run that wrote one; NaN where none did
    detectable_p90_pct: float
    slowdowns: list[FamilyCatch] = field(default_factory=list)  # at FAMILY_SLOWDOWNS

    @property
    def coverage_next(self) -> float:
        return self.covered / self.pairs if self.pairs else math.nan

    def caught(self, pct: float) -> float:
        return next((c.rate for c in self.slowdowns if c.pct == pct), math.nan)


@dataclass
class OneRound:
    """Rounds of consecutive runs compared as files of one round are: beyond the between-run floor."""
    floors: str  # the floors file judged, and where its floors were measured
    called: int = 0  # round pairs whose change is at least --min-effect and beyond the floor
    compared: int = 0  # round pairs of cases the floors file has a floor for
    unfloored: list[str] = field(default_factory=list)  # families with rounds but no floor
    # slowdown percent -> [round pairs of the detection copies called slower, such round pairs]
    slowed: dict[float, list[int]] = field(default_factory=dict)

    @property
    def rate(self) -> float:
        return self.called / self.compared if self.compared else math.nan


@dataclass
class LinkDrift:
    """How the pinned and registered copies of 1 MiB and more in one direction moved from run k to k+1."""
    pair: int  # k: run k+1 against run k, counted from 1
    direction: str  # h2d, d2h, bidir
    cases: int
    change_pct: float  # the median change, + slower
    p_value: float  # Wilcoxon's signed-rank test of the changes against zero; NaN where too few differ

    @property
    def moved(self) -> bool:
        return self.p_value < DRIFT_P


@dataclass
class RoundKinds:
    """One run's pinned and registered copies of 1 MiB and more, each round against its case's fastest round:
    per copy group ('bidir', 'one way') and kind of process ('full' every case, 'link' the link-bound cases
    alone, 'extra' the extra rounds, 'last' the process the user started), the median excess in percent and
    how many rounds it is the median of."""
    run: int  # counted from 1
    excess_pct: dict[str, dict[str, float]]
    rounds: dict[str, dict[str, int]]


ROUND_KINDS = ("full", "link", "extra", "last")


@dataclass
class RunTime:
    """One run's wall time and how much of it went into timed samples (gpu_bench.elapsed_s, timed_s and
    calibration_timed_s; NaN where the file has none), and the GPU it ran on."""
    gpu_uuid: str
    elapsed_s: float
    timed_s: float
    calibration_timed_s: float
    uptime_s: float = math.nan  # how long its host had been up when it started (host.uptime_s)

    @property
    def timed_share(self) -> float:
        return self.timed_s / self.elapsed_s if self.elapsed_s > 0 else math.nan


def run_time(f: BenchmarkFile) -> RunTime:
    return RunTime(str(f.fact("gpu.uuid") or "unknown"), fact_number(f, "gpu_bench.elapsed_s"),
                   fact_number(f, "gpu_bench.timed_s"), fact_number(f, "gpu_bench.calibration_timed_s"),
                   fact_number(f, "host.uptime_s"))


@dataclass
class Report:
    runs: list[str]
    gpu: str
    cases: list[CaseAgreement]
    coverage_next: float
    coverage_all: float
    false_calls: list[dict]  # per consecutive pair: faster, slower, cases
    slowdowns: list[Slowdown] = field(default_factory=list)
    gate_pct: float = 5.0
    floors: dict[str, float] = field(default_factory=dict)
    revision: str = ""
    run_times: list[RunTime] = field(default_factory=list)
    one_round: OneRound | None = None
    link_drift: list[LinkDrift] = field(default_factory=list)
    round_kinds: list[RoundKinds] = field(default_factory=list)
    families: dict[str, FamilyAgreement] = field(default_factory=dict)  # worst first: see worst_first

    @property
    def one_machine(self) -> bool:
        return len({t.gpu_uuid for t in self.run_times}) == 1

    @property
    def false_call_rate(self) -> float:
        calls = sum(p["faster"] + p["slower"] for p in self.false_calls)
        cases = sum(p["cases"] for p in self.false_calls)
        return calls / cases if cases else math.nan

    @property
    def median_spread_pct(self) -> float:
        return statistics.median(c.spread_pct for c in self.cases) if self.cases else math.nan

    @property
    def median_noise_pct(self) -> float:
        vals = [n for c in self.cases for n in c.noise_pct]
        return statistics.median(vals) if vals else math.nan

    def detection_median(self, what: str) -> float:
        """The median noise_pct ('noise') or detectable_pct ('detectable') over every run of the pinned and
        registered copies of 1 MiB and more."""
        vals = [n for c in self.cases if c.detection for n in (c.noise_pct if what == "noise" else c.detectable_pct)]
        return statistics.median(vals) if vals else math.nan

    def meets_targets(self) -> bool:
        one_round_ok = self.one_round is None or not self.one_round.compared or (
            self.one_round.rate <= FALSE_CALL_LIMIT and not self.one_round.unfloored)
        return self.coverage_next >= COVERAGE_TARGET and self.false_call_rate <= FALSE_CALL_LIMIT and one_round_ok


def floor_key(family: str, mem: str | None = None) -> str:
    return f"{family}/mem:{mem}" if mem else family


def family_of(case) -> str:
    """The family a case is reported under: its own, or for Transfer its floor key of family and memory kind."""
    return floor_key(case.family, case.axis("mem")) if case.family in SPLIT_BY_MEM else case.family


def p90(values: Sequence[float]) -> float:
    """The 90th percentile, one of the values (the nearest rank); NaN for none."""
    import numpy

    return float(numpy.percentile(values, 90, method="inverted_cdf")) if len(values) else math.nan


def _headline(f: BenchmarkFile, case) -> tuple[float | None, float | None]:
    """(figure, noise_pct) of a case in a file, or (None, None) where it has none: the headline where
    noise_pct is about it (a rate or a time), else the case's time, which noise_pct is about."""
    from ..reading.load import metric_for

    if not case.ok:
        return None, None
    d = f.descriptor(case.family)
    metric = metric_for(f, case, None) if d is None or d.headline_kind in ("rate", "time") else "real_time"
    v = case.center(metric)
    noise = case.written_noise_pct()
    if v is None or not math.isfinite(v):
        return None, None
    return v, noise


def _written(case, counter: str) -> float | None:
    """A counter gpu_bench wrote for a case (its median over repetitions), or None."""
    vals = [s.counters[counter] for s in case.samples if math.isfinite(s.counters.get(counter, math.nan))]
    return statistics.median(vals) if vals else None


def _judged(f: BenchmarkFile, case) -> float | None:
    """The figure gpu-bench-compare judges for a case: its headline, whatever kind it is (HostBlocking's is the
    host's time, which no round and no noise_pct speaks of)."""
    from ..reading.load import metric_for

    v = case.center(metric_for(f, case, None)) if case.ok else None
    return v if v is not None and math.isfinite(v) and v > 0 else None


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
    from ..stats import rounds as round_model

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


def _round_times(f: BenchmarkFile, key: str) -> list[float]:
    """A case's round figures in one file (each round a process of its own), where its headline follows from
    its time (a rate or a time); none for a failed case or a headline of another kind."""
    case = f.cases[key]
    d = f.descriptor(case.family)
    if not case.ok or (d is not None and d.headline_kind not in ("rate", "time")):
        return []
    return [t for smp in case.samples for t in (smp.round_times_s or [])]


def one_round_comparisons(files: list[BenchmarkFile], floors: Floors, min_effect_pct: float | None = None,
                          slowdowns: Sequence[float] = ()) -> OneRound:
    """Every round of run k against every round of run k+1, as gpu-bench-compare judges two files of one
    round: called when the change is at least `min_effect_pct` (compare's default for one round a side) and
    beyond the floor of the case's spread group on the runs' GPU model. With `slowdowns`, the same for the
    pinned and registered copies of 1 MiB and more with the later round made that much slower: how many are
    called slower."""
    from ..compare.compare import verdict
    from ..reading.multigpu import short_gpu_name
    from ..stats.rounds import MIN_EFFECT_ONE_ROUND_PCT, spread_group

    effect = MIN_EFFECT_ONE_ROUND_PCT if min_effect_pct is None else min_effect_pct
    shipped = Path(floors.path).resolve() == floors_module.default_path().resolve()
    name = "the shipped floors" if shipped else Path(floors.path).name
    gpu = short_gpu_name(files[0].fact("gpu.name") or "") if files else ""
    out = OneRound(f"{name}, {floors.table_for(gpu)}")
    out.slowed = {float(pct): [0, 0] for pct in slowdowns}
    unfloored: set[str] = set()
    for a, b in zip(files, files[1:]):
        for key, case in a.cases.items():
            if key not in b.cases:
                continue
            ra, rb = _round_times(a, key), _round_times(b, key)
            if not ra or not rb:
                continue
            group = spread_group(key, a.spread_axes(case.family))
            half = floors.half_width_pct(case.family, case.axis("mem"), group, gpu)
            if half is None:
                unfloored.add(case.family)
                continue
            detection = _detection_case(key, case)
            for x, y in itertools.product(ra, rb):
                if x > 0 and y > 0:
                    # compare's own rule for an untested pair: the speed of run k+1's round over run k's.
                    out.compared += 1
                    out.called += verdict(x / y, None, 0.05, effect, half) in ("faster", "slower")
                    if detection:
                        for pct, counts in out.slowed.items():
                            counts[0] += verdict(x / (y * (1 + pct / 100.0)), None, 0.05, effect, half) == "slower"
                            counts[1] += 1
    out.unfloored = sorted(unfloored)
    return out


def link_drift(files: list[BenchmarkFile]) -> list[LinkDrift]:
    """Per consecutive pair of runs and direction, the median change of the pinned and registered copies of
    1 MiB and more that both runs measured (+ where the later run is slower) and Wilcoxon's signed-rank test
    of those changes against zero."""
    from scipy.stats import wilcoxon

    out: list[LinkDrift] = []
    for k, (a, b) in enumerate(zip(files, files[1:]), 1):
        for direction in ("h2d", "d2h", "bidir"):
            changes = []
            for key, case in a.cases.items():
                if case.axis("dir") != direction or not _detection_case(key, case) or key not in b.cases:
                    continue
                va, vb = _headline(a, case)[0], _headline(b, b.cases[key])[0]
                if not va or not vb or va <= 0 or vb <= 0:
                    continue
                d = a.descriptor(case.family)
                changes.append(100.0 * ((va / vb) if d is None or d.headline_kind == "rate" else (vb / va)) - 100.0)
            if not changes:
                continue
            p = math.nan
            if sum(1 for c in changes if c != 0) >= DRIFT_MIN_CASES:
                p = float(wilcoxon(changes).pvalue)
            out.append(LinkDrift(k, direction, len(changes), statistics.median(changes), p))
    return out


def round_kinds(f: BenchmarkFile, run: int) -> RoundKinds | None:
    """`f`'s copies' rounds by the kind of process each ran in; None for a file without
    gpu_bench.round_processes. A copy's rounds are in the order they ran: every child round it was in (every
    full and link round, then the first of the extra rounds), then the last; a copy whose count of rounds
    fits no such order (one of its rounds failed) is left out."""
    labels = [p.partition("=")[0] for p in str(f.fact("gpu_bench.round_processes") or "").split()]
    if not labels:
        return None
    planned = ["full" if label.startswith("round_") else "link" for label in labels if not label.startswith("extra_")]
    extras = sum(1 for label in labels if label.startswith("extra_"))
    excess: dict[str, dict[str, list[float]]] = {}
    for key, case in f.cases.items():
        if not _detection_case(key, case):
            continue
        times = _round_times(f, key)
        extra = len(times) - len(planned) - 1
        if not times or min(times) <= 0 or not 0 <= extra <= extras:
            continue
        group = excess.setdefault("bidir" if case.axis("dir") == "bidir" else "one way", {})
        fastest = min(times)
        for kind, t in zip(planned + ["extra"] * extra + ["last"], times):
            group.setdefault(kind, []).append(100.0 * (t / fastest - 1.0))
    return RoundKinds(run, {g: {k: statistics.median(v) for k, v in kinds.items()} for g, kinds in excess.items()},
                      {g: {k: len(v) for k, v in kinds.items()} for g, kinds in excess.items()})


def _detection_case(key: str, case) -> bool:
    family, kinds, least = DETECTION_FILTER
    b = case.axis_int("bytes")
    return case.family == family and case.axis("mem") in kinds and b is not None and b >= least


def report(files: list[BenchmarkFile], slowdowns: list[float] = (), gate_pct: float = 5.0,
           floors: Floors | None = None) -> Report:
    """`floors`: the between-run floors whose one-round verdicts are tested (default: the shipped ones)."""
    from ..compare.compare import compare
    from ..reading.load import short_gpu_name
    from ..stats.floors import load_floors

    if len(files) < 2:
        raise InputError("an A/A report needs two or more runs of the same command")
    if floors is None:
        floors = load_floors()
    keys = [k for k in files[0].cases if all(k in f.cases for f in files)]
    if not keys:
        raise InputError("the runs have no case in common: were they made with the same filter?")
    cases: list[CaseAgreement] = []
    hit_all = total_all = 0
    for key in keys:
        figs = [_headline(f, f.cases[key]) for f in files]
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
        rounds = [t for f in files for t in _round_times(f, key)]
        judged = [v for v in (_judged(f, f.cases[key]) for f in files) if v is not None]
        logs = [math.log(v) for v in (rounds if len(rounds) >= 2 else judged) if v > 0]
        rel_sd = statistics.stdev(logs) * 100.0 if len(logs) >= 2 else 0.0
        detectable = [d for d in (_written(f.cases[key], "detectable_pct") for f in files) if d is not None]
        cases.append(CaseAgreement(key, files[0].cases[key].family, values, noises,
                                   (max(values) - min(values)) / abs(mid) * 100.0 if mid else 0.0, rel_sd,
                                   covered, len(values) - 1, detectable, _detection_case(key, files[0].cases[key])))
    pairs = sum(c.pairs for c in cases)
    coverage_next = sum(c.covered for c in cases) / pairs if pairs else math.nan

    false_calls = []
    for a, b in zip(files, files[1:]):
        cmp = compare([a, b], floors=floors)
        counts = {"faster": 0, "slower": 0, "cases": 0}
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

    from ..stats.rounds import spread_group

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
                  families(files[0], cases, measured, {pct: slowed_runs[pct][1] for pct in FAMILY_SLOWDOWNS},
                           len(files) - 1))


def slowdown(files: list[BenchmarkFile], pct: float, floors: Floors, gate_pct: float,
             earlier: bool = True) -> tuple[Slowdown, dict[str, int]]:
    """Each consecutive pair compared with every figure of its later run `pct` percent slower, and with
    `earlier` also of its earlier run instead: the detection copies called slower and whether
    --fail-on-regression fires; and per case, how many pairs call it slower with the later run slowed."""
    from ..compare.compare import compare

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
                if _detection_case(row.key, a.cases[row.key]):
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


def families(first: BenchmarkFile, cases: list[CaseAgreement], floors: dict[str, float],
             called: dict[float, dict[str, int]], pairs: int) -> dict[str, FamilyAgreement]:
    """The cases by family (family_of), worst first: `called` is, per slowdown, how many of the `pairs` call
    each case slower (slowdown's); `floors` the runs' own floors, keyed as family_of keys the families."""
    by: dict[str, list[CaseAgreement]] = {}
    for c in cases:
        by.setdefault(family_of(first.cases[c.key]), []).append(c)
    out = []
    for name, cs in by.items():
        detectable = [d for c in cs for d in c.detectable_pct]
        out.append(FamilyAgreement(
            name, len(cs), statistics.median(c.spread_pct for c in cs), sum(c.covered for c in cs),
            sum(c.pairs for c in cs), floors.get(name, math.nan),
            statistics.median(detectable) if detectable else math.nan, p90(detectable),
            [FamilyCatch(pct, sum(called[pct].get(c.key, 0) for c in cs), len(cs) * pairs) for pct in called]))
    return {f.family: f for f in sorted(out, key=worst_first)}


def _pct(x: float) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100.0 * x:.1f}%"


def render(r: Report) -> str:
    lines = [f"A/A over {len(r.runs)} runs on {r.gpu}, {len(r.cases)} cases in every run"]
    gpus = {t.gpu_uuid for t in r.run_times}
    if r.one_machine:
        lines.append(f"  every run on one GPU ({next(iter(gpus))})")
    elif r.run_times:
        lines.append(f"  the runs were on {len(gpus)} GPUs (gpu.uuid): the spread between them includes the machines'")
    for i, t in enumerate(r.run_times, 1):
        # Where each run fell in its host's life, for reading a pair whose host link moved between the runs
        # (docs/methodology.md, "The host link over minutes").
        started = "" if math.isnan(t.uptime_s) else f"; started {t.uptime_s / 60:.1f} min after its host"
        if math.isnan(t.timed_share):
            lines.append(f"  run {i}: no gpu_bench.elapsed_s and timed_s in its file{started}")
            continue
        calibrations = "" if math.isnan(t.calibration_timed_s) else \
            f", calibrations' {t.calibration_timed_s:.1f} s of them"
        lines.append(f"  run {i}: {t.elapsed_s:.1f} s, {t.timed_s:.1f} s of it timed samples ({_pct(t.timed_share)}"
                     f"{calibrations}; target at least {TIMED_SHARE_TARGET:.0%}){started}")
    lines.append(f"  between runs: median case spread {r.median_spread_pct:.2f}% (max-min over median); "
                 f"median noise_pct {r.median_noise_pct:.2f}%")
    if not math.isnan(r.detection_median("noise")):
        detectable = r.detection_median("detectable")
        lines.append(f"  pinned and registered copies of 1 MiB and more: median noise_pct "
                     f"{r.detection_median('noise'):.2f}%"
                     + ("" if math.isnan(detectable) else f", median detectable_pct {detectable:.2f}%"))
    lines.append(f"  coverage: run k's interval holds run k+1's figure {_pct(r.coverage_next)} of the time "
                 f"(target {COVERAGE_TARGET:.0%}); over every ordered pair {_pct(r.coverage_all)}")
    # Which way the calls lean: runs of one build should lean neither, so calls mostly one way say the
    # runs' order (or a change of the machine between them) moved many cases at once.
    per_pair = ", ".join(f"{p['faster'] + p['slower']}/{p['cases']} ({p['faster']} faster, {p['slower']} slower)"
                         for p in r.false_calls)
    lines.append(f"  gpu-bench-compare between consecutive runs: {_pct(r.false_call_rate)} of cases called "
                 f"faster or slower (target at most {FALSE_CALL_LIMIT:.0%}; per pair: {per_pair})")
    o = r.one_round
    if o is not None and o.compared:
        lines.append(f"  one round a side (each round of run k against each of run k+1, as compare judges files of "
                     f"one round): {_pct(o.rate)} called faster or slower beyond the between-run floors (target at "
                     f"most {FALSE_CALL_LIMIT:.0%}; {o.called}/{o.compared}; floors: {o.floors})")
    if o is not None:
        for pct, (caught, pairs) in sorted(o.slowed.items()):
            if pairs:
                lines.append(f"    one round a side, the later round {pct:g}% slower: {_pct(caught / pairs)} of the "
                             f"pinned and registered copies of 1 MiB and more called slower ({caught}/{pairs})")
    if o is not None and o.unfloored:
        lines.append(f"    no floor for {', '.join(o.unfloored)}: compare cannot widen their files of one round "
                     "(write floors from runs that hold them: --floor)")
    for s in r.slowdowns:
        lines.append(f"  every figure {s.pct:g}% slower: {_pct(s.rate)} of pinned and registered copies of 1 MiB "
                     f"and more called slower ({s.detected}/{s.detection_cases}); --fail-on-regression "
                     f"{r.gate_pct:g} fires for {s.gate_fired} of {s.pairs} pairs")
        lines.append(f"    the earlier run of each pair {s.pct:g}% slower instead: {_pct(s.rate_earlier)} "
                     f"({s.detected_earlier}/{s.detection_cases}); fires for {s.gate_fired_earlier} of {s.pairs}")
    for k in sorted({d.pair for d in r.link_drift}):
        groups = [d for d in r.link_drift if d.pair == k]
        lines.append(f"  the host link, run {k + 1} against run {k} (pinned and registered copies of 1 MiB and more, "
                     "median change, + slower; Wilcoxon's p): " + "; ".join(
                         f"{d.direction} {d.change_pct:+.2f}% (p {d.p_value:.3f}, {d.cases})" for d in groups))
        moved = [d.direction for d in groups if d.moved]
        if moved:
            lines.append(f"    moved between the runs (p < {DRIFT_P:g}): {', '.join(moved)}: the link changed, which no "
                         "interval from one run's rounds holds, and a slowdown of the faster run is partly hidden "
                         "by it")
    if r.round_kinds:
        lines.append("  rounds by their process (pinned and registered copies of 1 MiB and more; each round over its "
                     "case's fastest, the median excess and how many rounds): full, a round of every case; link, of "
                     "the link-bound cases alone; extra, the extra rounds; last, in the process the user started")
    for k in r.round_kinds:
        parts = []
        for group in ("one way", "bidir"):
            kinds = k.excess_pct.get(group)
            if kinds:
                parts.append(f"{group} " + ", ".join(f"{kind} {kinds[kind]:.2f}% ({k.rounds[group][kind]})"
                                                   for kind in ROUND_KINDS if kind in kinds))
        lines.append(f"    run {k.run}: " + "; ".join(parts))
    lines += _render_families(r.families)
    worst = sorted(r.cases, key=lambda c: c.covered / max(1, c.pairs))[:8]
    lines.append("  least covered cases: " + "; ".join(
        f"{c.key} {c.covered}/{c.pairs} (spread {c.spread_pct:.1f}%)" for c in worst))
    return "\n".join(lines) + "\n"


def _render_families(families: dict[str, FamilyAgreement]) -> list[str]:
    def pct_of(x: float) -> str:
        return "n/a" if math.isnan(x) else f"{x:.2f}%"

    caught = "  ".join(f"{pct:g}% slower" for pct in FAMILY_SLOWDOWNS)
    lines = ["  by family, worst first (Transfer by memory kind): its cases' median spread, coverage of the next run, "
             "floor (p90 relative sd), detectable_pct's median and p90 over every case and run, and the share of its "
             "cases compare calls slower with every figure of the later run that much slower"]
    width = max([len("family"), *(len(name) for name in families)])
    lines.append(f"    {'family':{width}s} {'cases':>5s} {'spread':>7s} {'coverage':>8s} {'floor':>8s} "
                 f"{'det p50':>9s} {'det p90':>9s}  {caught}")
    for name, f in families.items():
        lines.append(f"    {name:{width}s} {f.cases:5d} {pct_of(f.median_spread_pct):>7s} {_pct(f.coverage_next):>8s} "
                     f"{pct_of(f.floor_pct):>8s} {pct_of(f.detectable_median_pct):>9s} "
                     f"{pct_of(f.detectable_p90_pct):>9s}  "
                     + "  ".join(f"{_pct(f.caught(pct)):>{len(f'{pct:g}% slower')}s}" for pct in FAMILY_SLOWDOWNS))
    return lines


def write_json(r: Report, path: str) -> None:
    doc = asdict(r)
    doc["false_call_rate"] = r.false_call_rate
    doc["median_spread_pct"] = r.median_spread_pct
    doc["median_noise_pct"] = r.median_noise_pct
    doc["one_machine"] = r.one_machine
    for t, d in zip(r.run_times, doc["run_times"]):
        d["timed_share"] = t.timed_share
    for s, d in zip(r.slowdowns, doc["slowdowns"]):
        d["rate"] = s.rate
        d["rate_earlier"] = s.rate_earlier
    if r.one_round is not None:
        doc["one_round"]["rate"] = r.one_round.rate
    for d, out in zip(r.link_drift, doc["link_drift"]):
        out["moved"] = d.moved
    doc["detection_median_noise_pct"] = r.detection_median("noise")
    doc["detection_median_detectable_pct"] = r.detection_median("detectable")
    for f, out in zip(r.families.values(), doc["families"].values()):
        out["coverage_next"] = f.coverage_next
        for c, d in zip(f.slowdowns, out["slowdowns"]):
            d["rate"] = c.rate
    with open(path, "w") as out:
        json.dump(doc, out, indent=1)
        out.write("\n")


def _toml_table(floors: dict[str, float]) -> list[str]:
    return [f"{json.dumps(key) if '/' in key else key} = {v}" for key, v in sorted(floors.items())]


def _write_floor_toml(path: str, floors: dict[str, float], measured_on: str, how: str, runs: list[str],
                      reports: list[str] = (), machines: dict[str, dict[str, float]] | None = None) -> None:
    lines = [
        "# Between-run floors (floors.py): per spread group, family and memory kind, and family, the 90th",
        "# percentile over its cases of the relative standard deviation, in percent, of one round's headline",
        f"# between processes on one machine; {how}",
        f"measured_on = {json.dumps(measured_on)}",
        f"runs = {json.dumps(runs)}",
    ]
    if reports:
        lines.append(f"reports = {json.dumps(list(reports))}")
    lines += ["", "[floor_pct]", *_toml_table(floors)]
    for gpu, table in sorted((machines or {}).items()):
        lines += ["", f"[machine.{json.dumps(gpu)}.floor_pct]", *_toml_table(table)]
    with open(path, "w") as out:
        out.write("\n".join(lines) + "\n")


def write_floor(r: Report, path: str) -> None:
    """The floors as TOML, with where they were measured: one machine's, so both its GPU model's and every
    model's table."""
    _write_floor_toml(path, r.floors, f"{r.gpu}, {len(r.runs)} runs of gpu_bench {r.revision}",
                      "written by gpu-bench-aa report --floor from the runs named below.", r.runs,
                      machines={r.gpu: r.floors})


def _report_floors(path: str) -> dict:
    """A report gpu-bench-aa report --json wrote, checked for what merge_floors needs."""
    from ..reading.reading import read_json

    doc = read_json(path)
    floors = doc.get("floors") if isinstance(doc, dict) else None
    if not isinstance(floors, dict) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 for v in floors.values()) or \
            not isinstance(doc.get("runs"), list):
        raise InputError(f"{path}: not an A/A report with floors (gpu-bench-aa report --json writes one)")
    if doc.get("one_machine") is False:
        raise InputError(f"{path}: its runs were on several GPUs; a floor is one machine's spread between its "
                         "own runs")
    return doc


def merge_floors(report_paths: list[str], path: str, measured_on: str | None = None) -> dict[str, float]:
    """Writes, as TOML, each floor the larger over several machines' A/A reports: a table per GPU model (the
    larger over its reports) and one over every model, for a GPU model none measured; returns the latter.
    `measured_on`: where they were measured, in place of each report's GPU, runs and revision (a revision
    that gpu_bench read from a stale checkout, say)."""
    docs = [_report_floors(p) for p in report_paths]
    merged: dict[str, float] = {}
    machines: dict[str, dict[str, float]] = {}
    for doc in docs:
        own = machines.setdefault(str(doc.get("gpu") or "a GPU"), {})
        for key, v in doc["floors"].items():
            merged[key] = max(merged.get(key, 0.0), float(v))
            own[key] = max(own.get(key, 0.0), float(v))
    about = "; ".join(f"{d.get('gpu', 'a GPU')}, {len(d['runs'])} runs of gpu_bench {d.get('revision', 'unknown')}"
                      for d in docs)
    _write_floor_toml(path, merged, measured_on or f"the larger of each floor over: {about}",
                      "written by gpu-bench-aa floors from the A/A reports named below: each GPU model's table the "
                      "larger of each floor over its reports, [floor_pct] the larger over all.",
                      [r for d in docs for r in d["runs"]], report_paths, machines)
    return merged
