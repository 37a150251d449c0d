"""What an A/A report holds: each case's agreement between runs, the slowdowns caught, one round a side,
the host link between runs, rounds by their process, each run's time and each family's figures; and the
targets the runs are held to (gpu-bench-aa report --check). Plain data: analysis.py fills it in."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

from ..reading.families import beyond_machine_variance_pct

COVERAGE_TARGET = 0.90
FALSE_CALL_LIMIT = 0.05
TIMED_SHARE_TARGET = 0.50
RUN_TIME_TARGET_S = 300.0  # a default run's wall, on one GPU or on GPU 0 of a node
DRIFT_P = 0.01  # a direction's copies moved between runs where their changes lean one way this surely
# The whole matrix's targets: per run, the share of the cases that wrote a detectable_pct with one of
# DETECTABLE_PCT_LIMIT or less; and per slowdown (percent), the share of all cases compare calls slower with every
# figure of the later run that much slower.
DETECTABLE_PCT_LIMIT = 5.0
DETECTABLE_SHARE_TARGET = 0.90
CAUGHT_TARGETS = {5.0: 0.75, 10.0: 0.90}
FAMILY_SLOWDOWNS = tuple(CAUGHT_TARGETS)  # each family's share caught is given at these, whatever --slowdown asks
# The median detectable_pct each run's pageable copies of 1 MiB and more are held to.
PAGEABLE_DETECTABLE_TARGET_PCT = 3.0
# The most cases above MACHINE_VARIANCE_PCT whose descriptor names the machine's own cause, as a share of all
# the cases; a case above it that names none is one too many.
MACHINE_CAUSE_SHARE_LIMIT = 0.02
# Each family of FAMILY_MIN_CASES cases or more is held to COVERAGE_TARGET on its own; each of the host-driven
# families below, to a median detectable_pct (over its cases and runs) of FAMILY_DETECTABLE_TARGET_PCT at most.
FAMILY_MIN_CASES = 5
HOST_DRIVEN_FAMILIES = ("SyncPlacement", "Events", "Launch", "HostBlocking", "SmallCopy", "Batch")
FAMILY_DETECTABLE_TARGET_PCT = 3.0
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
    machine_cause: str | None = None  # what its descriptor says it varies with between processes, if anything
    slower_pct: list[float] = field(default_factory=list)  # each later run's figure over the one before, + slower
    large_pageable: bool = False  # a pageable copy of 1 MiB and more, any direction

    @property
    def beyond_machine_variance_pct(self) -> bool:
        """Whether a run's noise_pct or detectable_pct of the case is above MACHINE_VARIANCE_PCT."""
        return beyond_machine_variance_pct(*self.noise_pct, *self.detectable_pct)


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
class MatrixShare:
    """Of the whole matrix's cases counted, how many meet one of its targets."""
    met: int = 0
    counted: int = 0

    @property
    def rate(self) -> float:
        return self.met / self.counted if self.counted else math.nan


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
    # Its cases' between-run mean square of their round logarithms over the within-run one, pooled (a one-way
    # analysis of variance per case, runs as groups). About 1 where nothing holds for a whole run; well above 1
    # where a state does, which more rounds within a run cannot sample. NaN where no case has two runs of two
    # rounds or more.
    runs_over_rounds: float = math.nan
    # How far its cases moved together between runs: the median over its cases of a later run's figure over the
    # one before, + slower; of several consecutive pairs, the one largest in size. A state that holds for a
    # whole run moves a family's cases together; a family's own noise scatters them about 0.
    shift_pct: float = math.nan
    # Of its cases' detectable_pct, one a run, how many lie above DETECTABLE_PCT_LIMIT, of how many written: its
    # share of the cases the whole matrix's target lets lie there.
    detectable_over_limit: int = 0
    detectable_written: int = 0

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
    # What else the host did while its rounds ran (gpu_bench.round_host): over its rounds, the median and the most
    # of the share of all CPUs' time other processes used, and of the share the hypervisor stole. A whole run's
    # state moves every host-driven case together; these say whether the host was busier. NaN where not said.
    others_pct: float = math.nan
    others_max_pct: float = math.nan
    steal_pct: float = math.nan
    steal_max_pct: float = math.nan

    @property
    def timed_share(self) -> float:
        return self.timed_s / self.elapsed_s if self.elapsed_s > 0 else math.nan



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
    # Per run: its cases whose detectable_pct is DETECTABLE_PCT_LIMIT or less, of those that wrote one.
    detectable_runs: list[MatrixShare] = field(default_factory=list)
    # Per family, per run: its cases' full rounds over their link rounds in percent (host_link.full_over_link).
    full_over_link: dict[str, list[float]] = field(default_factory=dict)
    # Per family: the median spread of its cases' full rounds and of their link rounds (host_link.spread_by_kind).
    spread_by_kind: dict[str, tuple[float, float]] = field(default_factory=dict)

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

    def large_pageable_detectable_by_run(self) -> list[float]:
        """Each run's median detectable_pct over the pageable copies of 1 MiB and more that wrote one in every
        run; none where no such case did."""
        runs = len(self.runs)
        rows = [c.detectable_pct for c in self.cases if c.large_pageable and len(c.detectable_pct) == runs]
        return [statistics.median(col) for col in zip(*rows)] if rows else []

    def caught_all(self, pct: float) -> MatrixShare:
        """The whole matrix's cases called slower with every figure of the later run `pct` percent slower (one of
        FAMILY_SLOWDOWNS), summed over pairs: the families' catches added up, so the two can never disagree."""
        catches = [c for f in self.families.values() for c in f.slowdowns if c.pct == pct]
        return MatrixShare(sum(c.caught for c in catches), sum(c.cases for c in catches))

    def above_machine_variance_pct(self) -> tuple[list[CaseAgreement], list[CaseAgreement]]:
        """The cases whose noise_pct or detectable_pct is above MACHINE_VARIANCE_PCT in a run: those whose
        descriptor names the machine's own cause, and those whose descriptor names none."""
        wide = [c for c in self.cases if c.beyond_machine_variance_pct]
        return [c for c in wide if c.machine_cause], [c for c in wide if not c.machine_cause]

    def family_misses(self) -> tuple[dict[str, float], dict[str, float]]:
        """The families that miss their own targets, worst first: those of FAMILY_MIN_CASES cases or more whose
        coverage of the next run is under COVERAGE_TARGET (by that coverage), and those of HOST_DRIVEN_FAMILIES
        whose median detectable_pct is above FAMILY_DETECTABLE_TARGET_PCT (by that median, in percent)."""
        coverage = {name: f.coverage_next for name, f in self.families.items()
                    if f.cases >= FAMILY_MIN_CASES and f.coverage_next < COVERAGE_TARGET}
        detectable = {name: f.detectable_median_pct for name, f in self.families.items()
                      if name in HOST_DRIVEN_FAMILIES and f.detectable_median_pct > FAMILY_DETECTABLE_TARGET_PCT}
        return (dict(sorted(coverage.items(), key=lambda kv: kv[1])),
                dict(sorted(detectable.items(), key=lambda kv: -kv[1])))

    def meets_targets(self) -> bool:
        one_round_ok = self.one_round is None or not self.one_round.compared or (
            self.one_round.rate <= FALSE_CALL_LIMIT and not self.one_round.unfloored)
        return self.coverage_next >= COVERAGE_TARGET and self.false_call_rate <= FALSE_CALL_LIMIT and one_round_ok


def floor_key(family: str, mem: str | None = None) -> str:
    return f"{family}/mem:{mem}" if mem else family


def family_of(case) -> str:
    """The family a case is reported under: its own, or for Transfer its floor key of family and memory kind."""
    return floor_key(case.family, case.axis("mem")) if case.family in SPLIT_BY_MEM else case.family

