"""History's output: the check's text, trend figures over time, and the list of runs."""

from __future__ import annotations

import os
import re
from datetime import datetime
from pathlib import Path
from statistics import median

from .history import CheckReport, _load_cases, machines, open_db, runs_of
from .load import TIME_UNIT_NS, InputError, canonical_metric, metric_title, metric_unit


def render_check(rep: CheckReport) -> str:
    from .compare_render import fmt_num

    lines = []
    if not rep.machines:
        return "no runs in the database\n"
    for mc in rep.machines:
        lines.append(f"{mc.machine.label}: newest run {mc.newest.run_time} ({mc.newest.env_text()}), "
                     f"against {len(mc.baseline_runs)} earlier run(s)")
        if mc.note:
            lines.append(f"  {mc.note}")
            continue
        if mc.driver_change:
            lines.append(f"  DRIVER CHANGE: {mc.driver_change[0]} -> {mc.driver_change[1]}. The differences below are "
                         "what the change did; they are not counted as regressions. Runs with the new driver "
                         "become the baseline from the next run on.")
        for f in mc.findings:
            if f.kind == "failing":
                lines.append(f"  FAILING      {f.case}: now fails ({f.detail}); was {fmt_num(f.baseline)} {f.unit}")
                continue
            tag = ("changed" if mc.driver_change else f.kind.upper() if f.kind == "regression" else f.kind)
            p = f", p={f.p_value:.2g}" if f.p_value is not None else f" ({f.detail})" if f.detail else ""
            lines.append(f"  {tag:<12} {f.case}  {f.metric} {fmt_num(f.baseline)} -> {fmt_num(f.newest)} {f.unit} "
                         f"({abs(f.worse_pct or 0):.1f}% {'worse' if (f.worse_pct or 0) > 0 else 'better'}{p})")
        if mc.missing:
            lines.append(f"  note: {mc.missing} case(s) of the earlier runs are not in the newest run")
        n_reg = sum(1 for f in mc.findings if f.kind == "regression")
        n_imp = sum(1 for f in mc.findings if f.kind == "improvement")
        n_fail = sum(1 for f in mc.findings if f.kind == "failing")
        if mc.driver_change:
            lines.append(f"  {mc.cases_checked} cases checked: {n_reg} worse and {n_imp} better with the new driver, "
                         f"{n_fail} newly failing (threshold {rep.threshold_pct:g}%; none counted as regressions)")
        else:
            lines.append(f"  {mc.cases_checked} cases checked: {n_reg} regression(s), {n_imp} improvement(s), "
                         f"{n_fail} newly failing (threshold {rep.threshold_pct:g}%)")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# trend


def trend(db: str | os.PathLike, case_regex: str, out_dir: str | os.PathLike, metric: str | None = None,
          machine_filter: str | None = None, formats: tuple[str, ...] = ("png",), max_cases: int = 50,
          dpi: int = 110) -> list[str]:
    """One figure per matching case: its median per run over time, a line per machine, driver changes marked."""
    from .plot.canvas import Canvas as _Canvas
    from .plot.canvas import colours as _colours
    from .plot.canvas import slug as _slug

    rx = re.compile(case_regex)
    conn = open_db(db, create=False)
    try:
        ms = {mid: m for mid, m in machines(conn).items()
              if not machine_filter or machine_filter.lower() in m.label.lower()
              or machine_filter.lower() in m.fingerprint.lower()}
        if not ms:
            raise InputError(f"no machine matches {machine_filter!r}" if machine_filter else "no machines in the database")
        runs = {mid: runs_of(conn, mid) for mid in ms}
        all_ids = [r.id for rs in runs.values() for r in rs]
        data = _load_cases(conn, all_ids, metric, rx)
    finally:
        conn.close()
    cases = sorted(data)
    if not cases:
        raise InputError(f"no case in the database matches {case_regex!r}")
    if len(cases) > max_cases:
        raise InputError(f"{len(cases)} cases match {case_regex!r}; narrow --case (or raise --max-cases)")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    colours = _colours(len(ms))
    written = []
    for case in cases:
        d = data[case]
        m = d.metric
        show = (lambda v: v / TIME_UNIT_NS[d.unit]) if canonical_metric(m) == "real_time" else (lambda v: v)
        canvas = _Canvas(1, 1, w=10.0, h=4.2)
        ax = canvas.axes[0][0]
        drawn = False
        for n, (mid, mach) in enumerate(ms.items()):
            xs, ys, lo, hi, drivers = [], [], [], [], []
            for r in runs[mid]:
                vals = d.values.get(r.id)
                if not vals:
                    continue
                xs.append(datetime.fromisoformat(r.run_time))
                ys.append(show(median(vals)))
                lo.append(show(min(vals)))
                hi.append(show(max(vals)))
                drivers.append(r.env_text())
            if not xs:
                continue
            drawn = True
            ax.plot(xs, ys, marker="o", ms=4, color=colours[n], label=mach.label)
            ax.fill_between(xs, lo, hi, color=colours[n], alpha=0.15, lw=0)
            for j in range(1, len(xs)):
                if drivers[j] != drivers[j - 1]:
                    ax.axvline(xs[j], color=colours[n], ls="--", lw=1)
                    ax.annotate(drivers[j], (xs[j], 1.0), xycoords=("data", "axes fraction"), rotation=90,
                                va="top", ha="right", fontsize=7, color=colours[n])
        if not drawn:
            continue
        unit = metric_unit(m, d.unit)
        ax.set_ylabel(f"{metric_title(m)} ({unit})" if unit else metric_title(m))
        ax.set_xlabel("run date (UTC); dashed line: driver or CUDA changed")
        ax.grid(True, alpha=0.3)
        ax.set_ylim(bottom=0)
        canvas.fig.autofmt_xdate()
        canvas.legend(ncols=2)
        canvas.fig.suptitle(f"{case}\nmedian per run, band from the slowest to the fastest repetition", fontsize=11)
        written += canvas.save(out, _slug("trend_" + case), formats, dpi)
    return written


def list_runs(db: str | os.PathLike) -> str:
    conn = open_db(db, create=False)
    try:
        lines = []
        for mid, m in machines(conn).items():
            rs = runs_of(conn, mid)
            lines.append(f"{m.label}: {len(rs)} run(s)")
            for r in rs:
                (n,) = conn.execute("SELECT COUNT(DISTINCT case_name) FROM results WHERE run_id = ?", (r.id,)).fetchone()
                lines.append(f"  {r.run_time}  {r.env_text()}  gpu_bench {r.git or '?'}  {n} cases")
        return "\n".join(lines) + "\n" if lines else "no runs in the database\n"
    finally:
        conn.close()
