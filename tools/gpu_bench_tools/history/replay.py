"""Runs replayed as consecutive nights of one machine: what `check` finds on each night, at several floors.

An A/A test of the history check. Runs of one build on one machine (`gpu-bench-aa run`) are ingested one
night after the other into a database of their own; from the third night on, each night is checked against
the nights before it, as a nightly job would check it. A step night (a run with some cases made slower) is
then checked against all of them, and the cases made slower count as found where they are called slower.
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Callable, Sequence

from ..compare.render import fmt_num
from ..reading.errors import InputError
from ..reading.results import BenchmarkFile
from . import check as history_check
from .series import ingest_files, machine_of, parse_run_time, series_change, series_facts

FIRST_JUDGED = 3  # the first night with two nights before it


@dataclass
class NightFindings:
    night: int  # 1-based
    path: str
    findings: dict[float, list[history_check.Finding]]  # threshold -> what check reports for that night


@dataclass
class StepFindings:
    path: str
    found: dict[float, int] = field(default_factory=dict)  # threshold -> stepped cases called slower
    other: dict[float, int] = field(default_factory=dict)  # threshold -> any other finding


@dataclass
class Replay:
    paths: list[str]
    machine: str
    cases: int
    thresholds: list[float]
    alpha: float
    window: int
    nights: list[NightFindings]
    stepped: int = 0  # cases made slower in each step night
    step_what: str = ""
    steps: list[StepFindings] = field(default_factory=list)


def as_nights(files: Sequence[BenchmarkFile]) -> list[BenchmarkFile]:
    """The runs as consecutive nights of one machine, a day apart from the first run's date on.

    Raises InputError for a run of another machine or configuration than the first's: a replay is one series.
    """
    if not files:
        raise InputError("no runs to replay")
    first = files[0]
    mach, facts = machine_of(first), series_facts(first)
    start = datetime.fromisoformat(parse_run_time(first))
    out = []
    for i, f in enumerate(files):
        if machine_of(f).fingerprint != mach.fingerprint:
            raise InputError(f"{f.path}: another machine ({machine_of(f).label}) than {first.path}'s ({mach.label}); "
                             "replay takes runs of one machine")
        if series_facts(f) != facts:
            raise InputError(f"{f.path}: another configuration than {first.path}'s "
                             f"({series_change(facts, series_facts(f))}); replay takes runs of one configuration")
        when = (start + timedelta(days=i)).strftime("%Y-%m-%dT%H:%M:%S+00:00")
        out.append(dataclasses.replace(f, context=dict(f.context, date=when)))
    return out


def _newest(db: Path, threshold: float, alpha: float, window: int) -> list[history_check.Finding]:
    rep = history_check.check(db, window=window, threshold_pct=threshold, alpha=alpha)
    return rep.machines[0].findings


def replay(files: Sequence[BenchmarkFile], thresholds: Sequence[float],
           alpha: float = history_check.DEFAULT_ALPHA, window: int = 10,
           step_nights: Sequence[BenchmarkFile] = (), stepped: Callable[[str], bool] = lambda key: False,
           step_what: str = "") -> Replay:
    """Check each night of `files` (in night order) from the third on against the nights before it, at each
    threshold; then each of `step_nights` as the night after the last, against all of them. `stepped(case
    key)`: whether a case was made slower in the step nights."""
    if len(files) < FIRST_JUDGED:
        raise InputError(f"{len(files)} run(s): replay needs at least {FIRST_JUDGED}, the first night judged being "
                         "the third")
    nights = as_nights(list(files) + list(step_nights))
    base, steps = nights[:len(files)], nights[len(files):]
    ths = sorted(set(thresholds))
    out = Replay([f.path for f in files], machine_of(files[0]).label, len(files[0].cases), ths, alpha, window, [],
                 sum(1 for k in files[0].cases if stepped(k)), step_what)
    with tempfile.TemporaryDirectory(prefix="gpu_bench_replay_") as tmp:
        db = Path(tmp) / "nights.sqlite"
        for i, night in enumerate(base):
            ingest_files(db, [night])
            if i + 1 >= FIRST_JUDGED:
                out.nights.append(NightFindings(i + 1, files[i].path,
                                                {th: _newest(db, th, alpha, window) for th in ths}))
        for j, night in enumerate(steps):
            one = Path(tmp) / f"step{j}.sqlite"
            shutil.copyfile(db, one)
            ingest_files(one, [night])
            res = StepFindings(step_nights[j].path)
            for th in ths:
                found = _newest(one, th, alpha, window)
                hit = [f for f in found if f.kind == "regression" and stepped(f.case)]
                res.found[th], res.other[th] = len(hit), len(found) - len(hit)
            out.steps.append(res)
    return out


def _night_cell(findings: list[history_check.Finding]) -> str:
    if not findings:
        return "0"
    worse = sum(f.kind == "regression" for f in findings)
    parts = [f"{worse} worse"] if worse else []
    better = sum(f.kind == "improvement" for f in findings)
    parts += [f"{better} better"] if better else []
    failing = sum(f.kind == "failing" for f in findings)
    parts += [f"{failing} failing"] if failing else []
    return f"{len(findings)} ({', '.join(parts)})"


def _step_cell(r: Replay, th: float) -> str:
    counts = [s.found[th] for s in r.steps]
    if not r.stepped:
        return "-"
    share = sum(counts) / (len(counts) * r.stepped) * 100.0
    spread = f"{min(counts)} to {max(counts)}" if min(counts) != max(counts) else f"{counts[0]}"
    return f"{share:.0f}% ({spread} of {r.stepped})"


def render(r: Replay) -> str:
    """The replay as text with a Markdown table: findings per night and floor, and on the step nights."""
    lines = [f"{len(r.paths)} runs as nights of {r.machine} ({r.cases} cases), in this order: {', '.join(r.paths)}",
             f"each night from the third on checked against the nights before it (at most {r.window}), "
             f"alpha {r.alpha:g}"]
    if r.steps:
        lines.append(f"step night (night {len(r.paths) + 1}): {r.step_what}, {len(r.steps)} of them, each checked "
                     f"against the {len(r.paths)} nights")
    head = ["threshold"] + [f"night {n.night}" for n in r.nights]
    if r.steps:
        head += ["step night: stepped cases called slower", "step night: other findings"]
    lines += ["", "| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for th in r.thresholds:
        row = [f"{th:g}%"] + [_night_cell(n.findings[th]) for n in r.nights]
        if r.steps:
            row += [_step_cell(r, th), ", ".join(str(s.other[th]) for s in r.steps)]
        lines.append("| " + " | ".join(row) + " |")
    low = r.thresholds[0]
    listed = [(n, f) for n in r.nights for f in n.findings[low]]
    if listed:
        lines += ["", f"findings on the nights at threshold {low:g}%:"]
        for n, f in listed:
            size = f"{abs(f.worse_pct):.2f}% {'worse' if f.worse_pct > 0 else 'better'}" if f.worse_pct is not None \
                else f.detail
            lines.append(f"  night {n.night}: {f.case}  {fmt_num(f.baseline)} -> {fmt_num(f.newest)} {f.unit} ({size})")
    return "\n".join(lines) + "\n"


__all__ = ["Replay", "as_nights", "render", "replay"]
