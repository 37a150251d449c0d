"""What a comparison holds: per case a row of cells, one per file, each file's verdict against the first, and
the summaries per family and per group of cases."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..stats import rounds as round_model


VERDICTS = ("faster", "slower", "same", "noisy")
# How a noisy verdict reads where a side's spread is the machine's own (Versus.machine_cause), and its key among a
# group's verdicts.
MACHINE_VERDICT = "the machine's own variance"
MACHINE_VERDICT_KEY = "machine_variance"
# How a verdict reads where the two files' gpu_bench measured the case in different ways (Versus.measured_differently).
CHANGED_VERDICT = "measured differently"
CHANGED_VERDICT_KEY = "measured_differently"


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
    # Where both sides have rounds, p_value adjusted over every such comparison of this file against the first
    # (Benjamini-Hochberg): what --fail-on-regression holds to --alpha, since hundreds of cases meet p < 0.05 by
    # chance alone.
    q_value: float | None = None
    higher_is_better: bool = False
    method: str = ""
    noise_pct: float | None = None  # the larger of the two sides' noise, or the between-run floor
    floored: bool = False  # a side had one round: the noise is at least its family's between-run floor
    detectable_pct: float | None = None  # the smallest change the comparison calls: the larger side's
    machine_cause: str | None = None  # a side's Cell.machine_cause: a noisy verdict is the machine's own variance
    # 'way 1 in [1], way 2 in [2]' where the two files measured the case in different ways (FamilyDescriptor.way):
    # no verdict is called on it
    measured_differently: str | None = None

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

    def slower_beyond(self, pct: float) -> list[tuple[Row, int]]:
        """(row, file index) where the file is called slower than the first, by more than pct, on a test."""
        return [(row, i) for row in self.rows for i, v in enumerate(row.versus)
                if v and v.tested and v.verdict == "slower" and v.slowdown_pct > pct]

    def regressions(self, pct: float) -> list[tuple[Row, int]]:
        """Those of slower_beyond(pct) whose test also holds over every case of the file (q_value below alpha);
        a comparison with a side of one round, judged by the between-run floor, counts as it is."""
        return [(row, i) for row, i in self.slower_beyond(pct)
                if row.versus[i].q_value is None or row.versus[i].q_value < self.alpha]
