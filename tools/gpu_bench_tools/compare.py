"""Compare the same cases across files: values, ratios to the first file, and a verdict per case.

With at least MIN_REPS repetitions on both sides the verdict rests on a Mann-Whitney U test plus a
minimum effect size; with fewer it rests on the ratio alone and the comparison says so.
"""

from __future__ import annotations

import math
import re
import statistics
import warnings
from dataclasses import dataclass, field

from .load import (
    TIME_UNIT_NS,
    BenchmarkFile,
    Case,
    canonical_metric,
    context_differences,
    file_labels,
    metric_for,
    unit_and_direction,
)

MIN_REPS = 5
VERDICTS = ("faster", "slower", "same", "noisy")


@dataclass
class Cell:
    """One file's figures for one case, in the row's unit."""

    center: float | None
    n: int
    cv_pct: float | None
    values: list[float] = field(default_factory=list, repr=False)
    problem: str | None = None


@dataclass
class Versus:
    """One file against the first file, for one case."""

    ratio: float | None
    speed: float | None  # >1 means faster whatever the metric's direction
    verdict: str  # faster / slower / same / noisy / missing / error
    tested: bool
    p_value: float | None = None
    higher_is_better: bool = False

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


@dataclass
class FamilySummary:
    family: str
    cases: int
    geomean_speed: list[float | None]  # per file, against the first
    counts: list[dict[str, int]]


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


def _cell(case: Case, metric: str, unit: str) -> Cell:
    if not case.ok:
        return Cell(None, 0, None, [], case.problem)
    if not case.has_metric(metric):
        return Cell(None, 0, None, [], f"no '{metric}' counter")
    vals = _convert(case.values(metric), metric, case.time_unit, unit)
    center = case.center(metric)
    if center is not None:
        center = _convert([center], metric, case.time_unit, unit)[0]
    return Cell(center, len(vals), case.spread(metric), vals)


def u_test_pvalues(pairs: list[tuple[list[float], list[float]]]) -> list[float]:
    """Two-sided Mann-Whitney p-values, batched by sample sizes so a full matrix costs a few calls."""
    if not pairs:
        return []
    import numpy as np
    from scipy.stats import mannwhitneyu

    out = [1.0] * len(pairs)
    groups: dict[tuple[int, int], list[int]] = {}
    for i, (a, b) in enumerate(pairs):
        groups.setdefault((len(a), len(b)), []).append(i)
    for idx in groups.values():
        a = np.array([pairs[i][0] for i in idx], dtype=float)
        b = np.array([pairs[i][1] for i in idx], dtype=float)
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            p = np.atleast_1d(mannwhitneyu(a, b, axis=1, alternative="two-sided").pvalue)
        for j, i in enumerate(idx):
            out[i] = float(p[j]) if math.isfinite(p[j]) else 1.0
    return out


def compare(
    files: list[BenchmarkFile],
    metric: str | None = None,
    case_filter: str | None = None,
    alpha: float = 0.05,
    min_effect_pct: float = 2.0,
) -> Comparison:
    """Compare every case of the files against the first file.  Raises re.error on a bad filter."""
    rx = re.compile(case_filter) if case_filter else None
    labels = file_labels(files)
    notes: list[str] = []
    for f in files:
        if not f.is_gpu_bench:
            notes.append(f"{f.path}: plain Google Benchmark JSON (no gpu_bench context): no GPU facts to compare")

    keys: list[str] = []
    seen: set[str] = set()
    for f in files:
        for k in f.cases:
            if k not in seen and (rx is None or rx.search(k)):
                seen.add(k)
                keys.append(k)

    rows: list[Row] = []
    only_in: list[tuple[str, list[int]]] = []
    pending: list[tuple[Row, int]] = []
    no_metric = 0
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
            _cell(f.cases[key], m, unit if unit in TIME_UNIT_NS else f.cases[key].time_unit) if key in f.cases
            else None for f in files
        ]
        row = Row(key, first.family, m, unit, hib, cells, [None] * len(files))
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
            speed = None
            if ratio:
                speed = ratio if hib else 1.0 / ratio
            row.versus[i] = Versus(ratio, speed, "same", False, higher_is_better=hib)
            if base.n >= MIN_REPS and c.n >= MIN_REPS:
                pending.append((row, i))
            else:
                row.versus[i].verdict = _verdict_from_ratio(speed, min_effect_pct)
        rows.append(row)

    pvals = u_test_pvalues([(r.cells[0].values, r.cells[i].values) for r, i in pending])
    for (row, i), p in zip(pending, pvals):
        v = row.versus[i]
        v.tested, v.p_value = True, p
        big = v.speed is not None and abs(v.speed - 1.0) * 100.0 >= min_effect_pct
        if p < alpha and big:
            v.verdict = "faster" if v.speed > 1.0 else "slower"
        elif big:
            v.verdict = "noisy"
        else:
            v.verdict = "same"

    untested = sum(1 for r in rows for v in r.versus if v and v.verdict in VERDICTS and not v.tested)
    if untested:
        notes.append(
            f"{untested} comparison(s) have fewer than {MIN_REPS} repetitions on a side: their verdicts come "
            f"from the ratio alone (effect >= {min_effect_pct:g}%), not from a test; "
            f"run gpu_bench with --benchmark_repetitions={MIN_REPS} or more"
        )
    if no_metric:
        notes.append(f"{no_metric} case(s) have no '{metric}' counter and are left out")
    if keys and not rows:
        notes.append("no case is present in the first file and another one")
    with_device = [any(c.axis("device") is not None for c in f.cases.values()) for f in files]
    if any(with_device) and not all(with_device):
        notes.append("some files have a /device:N axis (gpu_bench --device=all) and some do not, so their "
                     "single-GPU cases do not match; run every machine with the same --device")

    return Comparison(
        paths=[f.path for f in files],
        labels=labels,
        metric=metric,
        context_diff=context_differences(files),
        rows=rows,
        only_in=only_in,
        families=_family_summaries(rows, len(files)),
        warnings=notes,
        alpha=alpha,
        min_effect_pct=min_effect_pct,
    )


def _verdict_from_ratio(speed: float | None, min_effect_pct: float) -> str:
    if speed is None:
        return "error"
    if abs(speed - 1.0) * 100.0 < min_effect_pct:
        return "same"
    return "faster" if speed > 1.0 else "slower"


def _family_summaries(rows: list[Row], nfiles: int) -> list[FamilySummary]:
    fams: dict[str, list[Row]] = {}
    for r in rows:
        fams.setdefault(r.family, []).append(r)
    out = []
    for fam, rs in fams.items():
        geo: list[float | None] = [None] * nfiles
        counts: list[dict[str, int]] = [{} for _ in range(nfiles)]
        for i in range(1, nfiles):
            speeds = [r.versus[i].speed for r in rs if r.versus[i] and r.versus[i].speed]
            if speeds:
                geo[i] = math.exp(statistics.fmean(math.log(s) for s in speeds))
            for r in rs:
                v = r.versus[i]
                if v:
                    counts[i][v.verdict] = counts[i].get(v.verdict, 0) + 1
        out.append(FamilySummary(fam, len(rs), geo, counts))
    return out
