"""History's output: the check's text, trend figures over time, and the list of runs."""

from __future__ import annotations

import math
import os
import re

from datetime import datetime
from pathlib import Path

from ..compare.record import MACHINE_VERDICT
from ..compare.render import cut, fmt_num
from ..reading.facts import host_cpu
from ..reading.families import rule_matches
from .series import load_series, machines, runs_of, store
from .check import FEW_NIGHTS, UNBOUNDED_NOISE_PCT, CheckReport
from ..reading.load import InputError, metric_title

MAX_FINDINGS = 50  # per machine and kind of line


def fmt_pct(half: float) -> str:
    """A relative half-width as '+-1.2%', with two significant digits under 1%."""
    return f"+-{half:.2g}%" if half < 1 else f"+-{half:.1f}%"


def _finding_line(f, counted: bool) -> str:
    if f.kind == "failing":
        return f"  FAILING      {f.case}: now fails ({f.detail}); was {fmt_num(f.baseline)} {f.unit}"
    tag = ("changed" if not counted else "unconfirmed" if not f.confirmed
           else f.kind.upper() if f.kind == "regression" else f.kind)
    interval = (f", beyond its {fmt_pct(f.interval_pct)} from {f.nights} night(s)"
                if f.interval_pct is not None and math.isfinite(f.interval_pct) else "")
    line = (f"  {tag:<12} {f.case}  {f.metric} {fmt_num(f.baseline)} -> {fmt_num(f.newest)} {f.unit} "
            f"({abs(f.worse_pct or 0):.1f}% {'worse' if (f.worse_pct or 0) > 0 else 'better'}, p={f.p_value:.2g}"
            f"{interval})")
    if counted and f.since is not None:
        when = "in the newest run" if f.runs_ago == 0 else f"since {f.since.run_time} ({f.runs_ago} run(s) ago)"
        line += f"\n               {when}; there: {f.context_change}"
        if f.busy_host_pct is not None:
            line += (f"\n               that run's host was busy: other processes used {f.busy_host_pct:.1f}% of its "
                     "CPU time in its median round (gpu_bench.round_host); a host-driven figure moves with that")
        if not f.confirmed:
            line += ("\n               not counted: one run of one repetition, with no noise_pct, cannot be told "
                     "from an outlier; the next run confirms it")
    return line


def _too_noisy_line(n) -> str:
    figure = f"noise_pct {n.noise_pct:.0f}% on {n.run.run_time}"
    if n.machine_cause:  # as compare's noisy verdict and the report's figure say it: the cause, not the percentage
        return f"  {'too noisy':<12} {n.case}  {MACHINE_VERDICT}: varies with {n.machine_cause} ({figure})"
    return f"  {'too noisy':<12} {n.case}  {figure}"


def render_check(rep: CheckReport) -> str:
    lines = []
    if not rep.machines:
        return "no runs in the database\n"
    for mc in rep.machines:
        lines.append(f"{mc.machine.label}: newest run {mc.newest.run_time} ({mc.newest.env_text()}), "
                     f"against {len(mc.baseline_runs)} earlier run(s)")
        if mc.note:
            lines.append(f"  {mc.note}")
            continue
        if mc.config_change:
            lines.append(f"  CONFIGURATION CHANGE: {mc.config_change}. The differences below are what the change "
                         "did, against the runs before it; they are not counted as regressions. Runs in the new "
                         "configuration are the baseline from the next run on.")
        shown, more = cut(mc.findings, MAX_FINDINGS)
        lines += [_finding_line(f, mc.counts_for_exit) for f in shown]
        if more:
            lines.append(f"  {more}")
        shown, more = cut(mc.too_noisy, MAX_FINDINGS)
        lines += [_too_noisy_line(n) for n in shown]
        if more:
            lines.append(f"  {more}")
        if mc.too_noisy:
            named = sum(1 for n in mc.too_noisy if n.machine_cause)
            which = "all" if named == len(mc.too_noisy) else named
            own = (f"; for {which} of them that is {MACHINE_VERDICT}, which their family's descriptor names and "
                   "gpu_bench cannot remove") if named else ""
            lines.append(f"  note: {len(mc.too_noisy)} case(s) too noisy to judge, and not counted: a night of theirs "
                         f"wrote a noise_pct of {UNBOUNDED_NOISE_PCT:g}% or more, so its rounds cannot place its "
                         f"figure above zero{own}")
        if mc.missing:
            lines.append(f"  note: {mc.missing} case(s) of the earlier runs are not in the newest run")
        if mc.other_facts:
            lines.append(f"  note: {mc.other_facts} case(s) not checked: every earlier run of theirs was on another "
                         "host CPU (host-side figures) or another host link or NUMA node of their GPU, or "
                         "gpu_bench measured them in another way then (CHANGELOG.md)")
        if mc.one_round_runs:
            lines.append(f"  note: {mc.one_round_runs} of these runs ran each case in one round (gpu_bench "
                         "--rounds=1): their noise_pct speaks of one process, not of the next run's, so it does "
                         "not narrow a case's interval; where no run has rounds, a case is judged from "
                         f"{FEW_NIGHTS} earlier runs on")
        if mc.not_positive:
            lines.append(f"  note: {mc.not_positive} case(s) not judged: a figure of zero or below, which has no "
                         "logarithm")
        n_reg = sum(1 for f in mc.findings if f.kind == "regression" and f.confirmed)
        n_unc = sum(1 for f in mc.findings if f.kind == "regression" and not f.confirmed)
        n_imp = sum(1 for f in mc.findings if f.kind == "improvement")
        n_fail = sum(1 for f in mc.findings if f.kind == "failing")
        how = f"threshold {rep.threshold_pct:g}%, alpha {rep.alpha:g}"
        noisy = f", {len(mc.too_noisy)} too noisy to judge" if mc.too_noisy else ""
        if mc.config_change:
            lines.append(f"  {mc.cases_checked} cases checked: {n_reg} worse and {n_imp} better with the new "
                         f"configuration, {n_fail} newly failing{noisy} ({how}; none counted as regressions)")
        else:
            unconfirmed = f", {n_unc} unconfirmed" if n_unc else ""
            lines.append(f"  {mc.cases_checked} cases checked: {n_reg} regression(s){unconfirmed}, {n_imp} "
                         f"improvement(s), {n_fail} newly failing{noisy} ({how})")
    return "\n".join(lines) + "\n"


def trend(db: str | os.PathLike, case_regex: str, out_dir: str | os.PathLike, metric: str | None = None,
          machine_filter: str | None = None, formats: tuple[str, ...] = ("png",), max_cases: int = 50,
          dpi: int = 110) -> list[str]:
    """One figure per matching case: its figure per run over time, a line per machine, configuration changes marked."""
    from ..plot.canvas import Canvas, colours, value_axis
    from ..plot.points import slug

    rx = re.compile(case_regex)
    with store.session(db) as conn:
        ms = {mid: m for mid, m in machines(conn).items()
              if not machine_filter or machine_filter.lower() in m.label.lower()
              or machine_filter.lower() in m.fingerprint.lower()}
        if not ms:
            raise InputError(f"no machine matches {machine_filter!r}" if machine_filter else "no machines in the database")
        data = {mid: load_series(conn, runs_of(conn, mid), metric, rx) for mid in ms}
    cases = sorted({name for per in data.values() for name in per})
    if not cases:
        raise InputError(f"no case in the database matches {case_regex!r}")
    if metric and not any(s.points for per in data.values() for s in per.values()):
        raise InputError(f"--metric {metric!r}: no matching case has it")
    if len(cases) > max_cases:
        raise InputError(f"{len(cases)} cases match {case_regex!r}; narrow --case (or raise --max-cases)")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    palette = colours(len(ms))
    written = []
    for case in cases:
        canvas = Canvas(1, 1, w=10.0, h=4.2)
        ax = canvas.axes[0][0]
        ys_all: list[float] = []
        unit = metric_name = ""
        for n, (mid, mach) in enumerate(ms.items()):
            s = data[mid].get(case)
            if s is None or not s.points:
                continue
            unit, metric_name = s.unit, s.metric
            # A host-side figure's series is keyed on the host's CPU as well: a line per host CPU.
            by_cpu: dict[str | None, list] = {}
            for p in s.points:
                on_host = rule_matches(p.run.host_side.get(s.family, "no"), case)
                by_cpu.setdefault(host_cpu(p.run.file) if on_host else None, []).append(p)
            for k, (cpu, points) in enumerate(by_cpu.items()):
                xs = [datetime.fromisoformat(p.run.run_time) for p in points]
                ys = [p.value for p in points]
                lo = [min(p.reps) if p.reps else p.value for p in points]
                hi = [max(p.reps) if p.reps else p.value for p in points]
                ys_all += ys + lo + hi
                label = f"{mach.label}, {cpu}" if len(by_cpu) > 1 and cpu else mach.label
                ax.plot(xs, ys, marker="osD^v"[k % 5], ms=4, color=palette[n], label=label)
                ax.fill_between(xs, lo, hi, color=palette[n], alpha=0.15, lw=0)
            xs = [datetime.fromisoformat(p.run.run_time) for p in s.points]
            for j in range(1, len(s.points)):
                if s.points[j].run.series_id != s.points[j - 1].run.series_id:
                    ax.axvline(xs[j], color=palette[n], ls="--", lw=1)
                    ax.annotate(s.points[j].run.env_text(), (xs[j], 1.0), xycoords=("data", "axes fraction"),
                                rotation=90, va="top", ha="right", fontsize=7, color=palette[n])
        if not ys_all:
            continue
        title = metric_title(metric_name)
        ax.set_ylabel(f"{title} ({unit})" if unit else title)
        ax.set_xlabel("run date (UTC); dashed line: the configuration changed (driver, CUDA, gate or NUMA)")
        ax.grid(True, alpha=0.3)
        value_axis(ax, ys_all)
        canvas.fig.autofmt_xdate()
        canvas.legend(ncols=2)
        canvas.fig.suptitle(f"{case}\nmedian per run, band from the slowest to the fastest repetition", fontsize=11)
        written += canvas.save(out, slug("trend_" + case), formats, dpi)
    return written


def list_runs(db: str | os.PathLike) -> str:
    with store.session(db) as conn:
        lines = []
        counts = store.case_counts(conn)
        for mid, m in machines(conn).items():
            rs = runs_of(conn, mid)
            lines.append(f"{m.label}: {len(rs)} run(s)")
            for r in rs:
                lines.append(f"  {r.run_time}  {r.env_text()}  gpu_bench {r.git or '?'}  "
                             f"{counts.get(r.id, 0)} cases")
        errors = store.check_errors(conn)
        if errors:
            lines.append(f"checks that could not judge their node: {len(errors)}")
            lines += [f"  {when}  {host}  {preset}  ERRORED: {why}" for host, preset, when, why in errors]
        return "\n".join(lines) + "\n" if lines else "no runs in the database\n"


__all__ = ["list_runs", "render_check", "trend"]
