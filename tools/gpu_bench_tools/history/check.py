"""history check: the newest run of each machine against the earlier runs of its series."""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field

from ..reading.errors import InputError
from .history import (
    VOLATILE_FACTS,
    CaseSeries,
    Machine,
    Point,
    Run,
    known_metrics,
    load_series,
    case_facts,
    machines,
    runs_of,
    same_case_facts,
    series_change,
    store,
)
from ..stats.stats import noise_pct


@dataclass
class Finding:
    case: str
    metric: str
    unit: str
    kind: str  # regression / improvement / failing
    baseline: float | None
    newest: float | None
    worse_pct: float | None
    p_value: float | None
    detail: str = ""
    since: Run | None = None  # the first run of the new level
    runs_ago: int = 0
    context_change: str = ""  # what changed in the context at `since`
    noise_pct: float | None = None
    # False where a side's noise is unknown (one run of one repetition without gpu_bench's noise_pct): nothing
    # tells such a figure from an outlier, so it is reported and waits for the next run to confirm it.
    confirmed: bool = True


@dataclass
class MachineCheck:
    machine: Machine
    newest: Run
    baseline_runs: list[Run]
    config_change: str | None  # 'driver A -> B' when the newest run starts a new series
    findings: list[Finding]
    cases_checked: int
    note: str = ""
    missing: int = 0  # cases the baseline runs had that the newest run does not
    # cases whose earlier runs all ran on another host CPU (host-side figures) or GPU link or NUMA node
    other_facts: int = 0

    @property
    def counts_for_exit(self) -> bool:
        return self.config_change is None


@dataclass
class CheckReport:
    machines: list[MachineCheck]
    threshold_pct: float
    alpha: float
    window: int = 0
    skipped: list[str] = field(default_factory=list)

    def failures(self) -> list[tuple[MachineCheck, Finding]]:
        return [(m, f) for m in self.machines if m.counts_for_exit for f in m.findings
                if f.kind == "failing" or (f.kind == "regression" and f.confirmed)]


def context_change(before: Run, after: Run) -> str:
    """What differs between two runs' contexts, volatile facts left out."""
    keys = sorted((set(before.context) | set(after.context)) - VOLATILE_FACTS)
    diffs = [f"{k} {before.context.get(k, '-')} -> {after.context.get(k, '-')}" for k in keys
             if str(before.context.get(k)) != str(after.context.get(k))]
    return ", ".join(diffs) if diffs else "nothing in the context changed"


def side_noise(points: list[Point]) -> float | None:
    """The noise of one side of a change: the largest of gpu_bench's own noise for those runs, the spread of
    their figures (two runs or more) and, for a single run, the spread of its repetitions."""
    candidates = [statistics.median([p.noise_pct for p in points if p.noise_pct is not None])] \
        if any(p.noise_pct is not None for p in points) else []
    spread = noise_pct([p.value for p in points]) if len(points) >= 2 else noise_pct(points[0].reps)
    if spread is not None:
        candidates.append(spread)
    return max(candidates) if candidates else None


def _change_points(values: list[float], alpha: float, threshold_pct: float) -> list[tuple[int, float]]:
    """(index where a new level starts, p-value) per change point, from Apache Otava.

    Otava's e-divisive (its Hunter variant with a t-test) cannot always place a change point before a lone
    last value: a weak change point next to it leaves that value a one-point segment. The newest run is the
    one a nightly check is for, so the split before it is also put to Otava's own t-test when e-divisive
    found no change point there.
    """
    from otava.analysis import TTestSignificanceTester, compute_change_points

    cps, _ = compute_change_points(values, window_len=max(len(values), 2), max_pvalue=alpha,
                                   min_magnitude=threshold_pct / 100.0)
    out = [(int(cp.index), float(cp.stats.pvalue)) for cp in cps]
    last = len(values) - 1
    if last >= 2 and (not out or out[-1][0] != last):
        start = out[-1][0] if out else 0
        if last - start >= 2:
            t = TTestSignificanceTester(alpha).compare(values[start:last], values[last:])
            if t.pvalue < alpha and t.change_magnitude() > threshold_pct / 100.0:
                out.append((last, float(t.pvalue)))
    return out


def judge(s: CaseSeries, alpha: float, threshold_pct: float) -> Finding | None:
    """The change whose new level the newest point is on, if it is a change worth reporting."""
    values = [p.value for p in s.points]
    mid = statistics.median(values)
    if not mid or (max(values) - min(values)) / abs(mid) * 100.0 < threshold_pct:
        return None  # no two figures differ by the threshold: nothing to find
    cps = _change_points(values, alpha, threshold_pct)
    if not cps:
        return None
    k, p = cps[-1]
    start = cps[-2][0] if len(cps) >= 2 else 0
    before, after = s.points[start:k], s.points[k:]
    b, a = statistics.median(p_.value for p_ in before), statistics.median(p_.value for p_ in after)
    if not b:
        return None
    ratio = a / b
    worse = (1.0 - ratio) * 100.0 if s.higher_is_better else (ratio - 1.0) * 100.0
    sides = (side_noise(before), side_noise(after))
    noises = [n for n in sides if n is not None]
    noise = max(noises) if noises else None
    if abs(worse) < threshold_pct or p >= alpha or (noise is not None and abs(ratio - 1.0) * 100.0 <= noise):
        return None
    f = Finding(s.name, s.metric, s.unit, "regression" if worse > 0 else "improvement", b, a, worse, p,
                noise_pct=noise, confirmed=None not in sides)
    f.since, f.runs_ago = s.points[k].run, len(s.points) - 1 - k
    f.context_change = context_change(s.points[k - 1].run, s.points[k].run)
    return f


def _check_machine(conn, mid: int, mach: Machine, window: int, threshold_pct: float, metric: str | None,
                   rx: re.Pattern | None, alpha: float) -> tuple[MachineCheck, dict[str, CaseSeries]]:
    runs = runs_of(conn, mid)
    newest = runs[-1]
    own = [r for r in runs if r.series_id == newest.series_id]
    change = None
    if len(own) >= 2:
        base = own[-window - 1:-1]
    else:
        earlier = [r for r in runs[:-1]]
        prev = earlier[-1] if earlier else None
        base = [r for r in earlier if prev and r.series_id == prev.series_id][-window:]
        if prev:
            change = series_change(prev.facts, newest.facts)
    mc = MachineCheck(mach, newest, base, change, [], 0)
    if not base:
        mc.note = "only one run so far: nothing to compare with yet"
        return mc, {}
    data = load_series(conn, base + [newest], metric, rx)
    for s in data.values():
        # A case is judged against the runs whose facts of what it ran on are the newest run's.
        now = case_facts(newest, s.name)
        kept = [p for p in s.points if same_case_facts(case_facts(p.run, s.name), now)]
        if len(kept) < len(s.points) and len(kept) == sum(p.run.id == newest.id for p in s.points):
            mc.other_facts += 1
        s.points = kept
        has_newest = bool(s.points) and s.points[-1].run.id == newest.id
        earlier = [p for p in s.points if p.run.id != newest.id]
        if not has_newest:
            if earlier and newest.id in s.errors:
                mc.findings.append(Finding(s.name, s.metric, s.unit, "failing",
                                           statistics.median(p.value for p in earlier), None, None, None,
                                           s.errors[newest.id]))
            elif earlier:
                mc.missing += 1
            continue
        if not earlier:
            continue
        mc.cases_checked += 1
        f = judge(s, alpha, threshold_pct)
        if f is not None:
            if change is not None and f.since is not None and f.since.id != newest.id:
                continue  # a change inside the old configuration's runs, reported when it happened
            mc.findings.append(f)
    order = {"failing": 0, "regression": 1, "improvement": 2}
    mc.findings.sort(key=lambda f: (order[f.kind], -(abs(f.worse_pct or 0.0))))
    return mc, data


def check(db, window: int = 10, threshold_pct: float = 5.0, metric: str | None = None,
          case_regex: str | None = None, alpha: float = 0.001) -> CheckReport:
    """The newest run of each machine against up to `window` earlier runs of its series.

    Raises InputError for a --metric no case has or a --case that matches no case (naming the known ones).
    """
    rx = re.compile(case_regex) if case_regex else None
    with store.session(db) as conn:
        out: list[MachineCheck] = []
        seen_case = seen_metric = False
        checked_runs: list[Run] = []
        for mid, mach in machines(conn).items():
            mc, data = _check_machine(conn, mid, mach, window, threshold_pct, metric, rx, alpha)
            out.append(mc)
            checked_runs.append(mc.newest)
            seen_case |= bool(data) or (not mc.baseline_runs and _any_case(conn, mc.newest, rx))
            seen_metric |= any(s.points for s in data.values()) or not mc.baseline_runs
        if rx is not None and not seen_case:
            names = sorted(n for n, _ in store.cases(conn).values())
            raise InputError(f"--case {case_regex!r} matches no case; cases: {_some(names)}")
        if metric and not seen_metric:
            raise InputError(f"--metric {metric!r}: no case has it; metrics: {_some(known_metrics(conn, checked_runs))}")
        return CheckReport(out, threshold_pct, alpha, window)


def _any_case(conn, run: Run, rx: re.Pattern | None) -> bool:
    names = store.cases(conn)
    return any(rx is None or rx.search(names[row[1]][0]) for row in store.results_of(conn, [run.id]))


def _some(names: list[str], limit: int = 12) -> str:
    text = ", ".join(names[:limit])
    return text + (f" and {len(names) - limit} more" if len(names) > limit else "")
