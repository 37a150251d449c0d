"""Compare the same cases across files: values, ratios to the first file, and a verdict per case.

With at least MIN_REPS repetitions on both sides the verdict rests on a Mann-Whitney U test plus a
minimum effect size; with fewer it rests on the ratio alone and the comparison says so.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import statistics
import warnings
from dataclasses import asdict, dataclass, field

from .load import (
    TIME_UNIT_NS,
    BenchmarkFile,
    Case,
    context_differences,
    file_labels,
    higher_is_better,
    metric_for,
    metric_unit,
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
    if metric in ("time", "real_time", "cpu_time") and from_unit != to_unit:
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
        m = metric_for(first, metric)
        if metric and not any(files[i].cases[key].has_metric(m) for i in present):
            no_metric += 1
            continue
        unit = first.time_unit
        cells: list[Cell | None] = [
            _cell(f.cases[key], m, unit) if key in f.cases else None for f in files
        ]
        hib = higher_is_better(m)
        row = Row(key, first.family, m, metric_unit(m, unit), hib, cells, [None] * len(files))
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


# ---------------------------------------------------------------------------------------------
# rendering


def fmt_num(v: float | None) -> str:
    if v is None or not math.isfinite(v):
        return "-"
    a = abs(v)
    if a >= 1000:
        return f"{v:.0f}"
    if a >= 100:
        return f"{v:.1f}"
    if a >= 10:
        return f"{v:.2f}"
    if a >= 1:
        return f"{v:.3f}"
    if a >= 0.01:
        return f"{v:.4f}"
    return f"{v:.3g}"


def fmt_verdict(v: Versus | None, with_p: bool = False) -> str:
    if v is None:
        return ""
    s = v.verdict if v.tested or v.verdict not in ("faster", "slower") else v.verdict + "?"
    if with_p and v.p_value is not None:
        s += f" (p={v.p_value:.2g})"
    return s


def fmt_ratio(v: Versus | None) -> str:
    return "-" if v is None or v.ratio is None else f"{v.ratio:.3f}"


def fmt_cell(c: Cell | None) -> str:
    if c is None:
        return "missing"
    if c.center is None:
        return "error" if c.problem and c.problem.startswith("error") else "-"
    s = fmt_num(c.center)
    if c.cv_pct is not None and c.cv_pct >= 5.0:
        s += f" ±{c.cv_pct:.0f}%"
    return s


def header_lines(cmp: Comparison) -> list[str]:
    lines = []
    for i, (p, lab) in enumerate(zip(cmp.paths, cmp.labels)):
        lines.append(f"[{i + 1}] {lab}  ({p})")
    if cmp.context_diff:
        lines.append("What differs between the files:")
        grid = [["", *[f"[{i + 1}]" for i in range(len(cmp.paths))]]] + [[k, *v] for k, v in cmp.context_diff]
        widths = [max(len(r[j]) for r in grid) for j in range(len(grid[0]))]
        for r in grid:
            lines.append("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    elif len(cmp.paths) > 1:
        lines.append("The machines' facts are the same in every file.")
    return lines


def table_columns(cmp: Comparison) -> list[str]:
    cols = ["case", "unit", "[1]"]
    for i in range(2, len(cmp.paths) + 1):
        cols += [f"[{i}]", f"[{i}]/[1]", f"verdict [{i}]"]
    return cols


def row_cells(cmp: Comparison, row: Row, with_p: bool = False) -> list[str]:
    out = [row.key, row.unit, fmt_cell(row.cells[0])]
    for i in range(1, len(cmp.paths)):
        out += [fmt_cell(row.cells[i]), fmt_ratio(row.versus[i]), fmt_verdict(row.versus[i], with_p)]
    return out


def summary_lines(cmp: Comparison) -> list[tuple[str, list[str]]]:
    out = []
    for fs in cmp.families:
        cells = []
        for i in range(1, len(cmp.paths)):
            g = fs.geomean_speed[i]
            counts = ", ".join(f"{n} {k}" for k, n in sorted(fs.counts[i].items()))
            cells.append(f"[{i + 1}] {('%.3fx' % g) if g else '-'} ({counts})")
        out.append((f"{fs.family} ({fs.cases} cases)", cells))
    return out


_COLOURS = {"faster": "\033[32m", "slower": "\033[31m", "noisy": "\033[33m", "error": "\033[35m"}


def render_table(cmp: Comparison, colour: bool = False) -> str:
    lines = header_lines(cmp)
    lines.append("")
    cols = table_columns(cmp)
    body = [row_cells(cmp, r) for r in cmp.rows]
    widths = [max(len(c) for c in col) for col in zip(cols, *body)] if body else [len(c) for c in cols]

    def fmt(cells: list[str], paint: bool) -> str:
        parts = []
        for j, (c, w) in enumerate(zip(cells, widths)):
            text = c.ljust(w) if j == 0 else c.rjust(w)
            if paint and cols[j].startswith("verdict"):
                code = _COLOURS.get(c.split(" ")[0].rstrip("?"))
                if code:
                    text = f"{code}{text}\033[0m"
            parts.append(text)
        return "  ".join(parts).rstrip()

    lines.append(fmt(cols, False))
    lines.append("  ".join("-" * w for w in widths))
    lines.extend(fmt(b, colour) for b in body)
    if cmp.families and len(cmp.paths) > 1:
        lines.append("")
        lines.append("Geometric mean speed against [1] per family (>1 is faster):")
        for fam, cells in summary_lines(cmp):
            lines.append(f"  {fam}: " + "; ".join(cells))
    if cmp.only_in:
        lines.append("")
        lines.append(f"Cases not in every file ({len(cmp.only_in)}):")
        for key, present in cmp.only_in[:50]:
            lines.append(f"  {key}  only in " + " ".join(f"[{i + 1}]" for i in present))
        if len(cmp.only_in) > 50:
            lines.append(f"  ... and {len(cmp.only_in) - 50} more")
    problems = [(r.key, i, c.problem) for r in cmp.rows for i, c in enumerate(r.cells) if c and c.problem]
    if problems:
        lines.append("")
        lines.append(f"Cases without a figure ({len(problems)}):")
        for key, i, msg in problems[:50]:
            lines.append(f"  [{i + 1}] {key}: {msg}")
        if len(problems) > 50:
            lines.append(f"  ... and {len(problems) - 50} more")
    for w in cmp.warnings:
        lines.append(f"warning: {w}")
    return "\n".join(lines) + "\n"


def _md_escape(s: str) -> str:
    return s.replace("|", "\\|")


def render_markdown(cmp: Comparison) -> str:
    out = []
    out.append("| file | machine | path |")
    out.append("| --- | --- | --- |")
    for i, (p, lab) in enumerate(zip(cmp.paths, cmp.labels)):
        out.append(f"| [{i + 1}] | {_md_escape(lab)} | `{p}` |")
    if cmp.context_diff:
        out.append("")
        out.append("| fact | " + " | ".join(f"[{i + 1}]" for i in range(len(cmp.paths))) + " |")
        out.append("| --- " * (len(cmp.paths) + 1) + "|")
        for k, vals in cmp.context_diff:
            out.append(f"| {k} | " + " | ".join(_md_escape(v) for v in vals) + " |")
    if len(cmp.paths) > 1 and cmp.families:
        out.append("")
        out.append("| family | " + " | ".join(f"[{i + 1}] vs [1]" for i in range(1, len(cmp.paths))) + " |")
        out.append("| --- " * len(cmp.paths) + "|")
        for fam, cells in summary_lines(cmp):
            out.append(f"| {fam} | " + " | ".join(c.split(" ", 1)[1] for c in cells) + " |")
    out.append("")
    cols = table_columns(cmp)
    out.append("| " + " | ".join(cols) + " |")
    out.append("| --- | --- |" + " ---: |" * (len(cols) - 2))
    for r in cmp.rows:
        cells = row_cells(cmp, r, with_p=True)
        cells[0] = f"`{cells[0]}`"
        out.append("| " + " | ".join(_md_escape(c) for c in cells) + " |")
    if cmp.only_in:
        out.append("")
        out.append(f"Cases not in every file ({len(cmp.only_in)}):")
        out.append("")
        for key, present in cmp.only_in:
            out.append(f"- `{key}` only in " + " ".join(f"[{i + 1}]" for i in present))
    for w in cmp.warnings:
        out.append("")
        out.append(f"> warning: {w}")
    return "\n".join(out) + "\n"


def render_csv(cmp: Comparison) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    n = len(cmp.paths)
    head = ["case", "family", "metric", "unit"]
    head += [f"value_{i + 1}" for i in range(n)] + [f"n_{i + 1}" for i in range(n)]
    for i in range(2, n + 1):
        head += [f"ratio_{i}", f"verdict_{i}", f"p_{i}", f"tested_{i}"]
    w.writerow(head)
    for r in cmp.rows:
        line = [r.key, r.family, r.metric, r.unit]
        line += ["" if c is None or c.center is None else repr(c.center) for c in r.cells]
        line += ["" if c is None else c.n for c in r.cells]
        for i in range(1, n):
            v = r.versus[i]
            line += ["" if v.ratio is None else repr(v.ratio), v.verdict,
                     "" if v.p_value is None else repr(v.p_value), int(v.tested)]
        w.writerow(line)
    compared = {r.key for r in cmp.rows}
    for key, present in cmp.only_in:
        if key in compared:
            continue
        line = [key, key.split("/")[0], "", ""] + [""] * (2 * n)
        for i in range(1, n):
            line += ["", "missing" if i not in present else "no-baseline", "", 0]
        w.writerow(line)
    return buf.getvalue()


def to_dict(cmp: Comparison) -> dict:
    d = {
        "files": [{"path": p, "label": lab} for p, lab in zip(cmp.paths, cmp.labels)],
        "metric": cmp.metric,
        "alpha": cmp.alpha,
        "min_effect_pct": cmp.min_effect_pct,
        "context_diff": [{"fact": k, "values": v} for k, v in cmp.context_diff],
        "rows": [],
        "only_in": [{"case": k, "files": p} for k, p in cmp.only_in],
        "families": [asdict(f) for f in cmp.families],
        "warnings": cmp.warnings,
    }
    for r in cmp.rows:
        d["rows"].append({
            "case": r.key, "family": r.family, "metric": r.metric, "unit": r.unit,
            "higher_is_better": r.higher_is_better,
            "cells": [None if c is None else {"value": c.center, "n": c.n, "cv_pct": c.cv_pct,
                                              "problem": c.problem} for c in r.cells],
            "versus": [None if v is None else {"ratio": v.ratio, "speed": v.speed, "verdict": v.verdict,
                                               "tested": v.tested, "p_value": v.p_value} for v in r.versus],
        })
    return d


def _finite(o):
    if isinstance(o, float):
        return o if math.isfinite(o) else None
    if isinstance(o, dict):
        return {k: _finite(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_finite(v) for v in o]
    return o


def render_json(cmp: Comparison) -> str:
    return json.dumps(_finite(to_dict(cmp)), indent=1, allow_nan=False) + "\n"
