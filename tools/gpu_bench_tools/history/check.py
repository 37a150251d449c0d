"""history check: the newest run of each machine against the earlier runs of its series, each case against
the spread of its own earlier nights."""

from __future__ import annotations

import math
import re
import statistics
from dataclasses import dataclass, field

from ..reading.errors import InputError
from ..reading.facts import busy_host_pct
from ..reading.families import beyond_machine_variance_pct
from .series import (
    CaseSeries,
    Machine,
    is_volatile_fact,
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
    busy_host_pct: float | None = None  # where `since` ran on a busy host: others' share of its CPU time
    interval_pct: float | None = None  # the case's interval for the newest night: relative half-width
    nights: int = 0  # the earlier nights that interval comes from
    # False where the new level is one run of one repetition without gpu_bench's noise_pct: nothing tells
    # such a figure from an outlier, so it is reported and waits for the next run to confirm it.
    confirmed: bool = True


@dataclass
class TooNoisy:
    """A case not judged: a night it would be judged on wrote a noise_pct of UNBOUNDED_NOISE_PCT or more."""
    case: str
    noise_pct: float  # the largest of those nights'
    run: Run  # the night that wrote it
    # What the case varies with between processes, where the newest run's descriptor of its family names the
    # machine's own cause (Run.machine_cause): the output says this before the percentage, which then means little.
    machine_cause: str | None = None


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
    # cases whose earlier runs all ran on another host CPU (host-side figures) or GPU link or NUMA node, or were
    # measured in another way
    other_facts: int = 0
    too_noisy: list[TooNoisy] = field(default_factory=list)
    not_positive: int = 0  # cases not judged: a night's figure is zero or below, which has no logarithm
    one_round_runs: int = 0  # of the baseline runs and the newest, those of one round a case (one_round_run)

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
    keys = sorted(k for k in set(before.context) | set(after.context) if not is_volatile_fact(k))
    diffs = [f"{k} {before.context.get(k, '-')} -> {after.context.get(k, '-')}" for k in keys
             if str(before.context.get(k)) != str(after.context.get(k))]
    return ", ".join(diffs) if diffs else "nothing in the context changed"


# The judgement's constants; docs/tools.md ("Workflow 3") says why each is what it is.
DEFAULT_THRESHOLD_PCT = 1.0  # the floor: no change smaller than this is reported
DEFAULT_ALPHA = 0.001  # the chance that a night with no change in a case lies outside the case's interval
MIN_EARLIER = 2  # nights before a level that a case's interval needs where the nights know their own noise
FEW_NIGHTS = 5  # under this many earlier nights, the nights' own noise always joins their spread; nights that
# know nothing of their noise need this many: fewer figures cannot show a case that moves between a few levels
NOISE_DOF = 2  # degrees of freedom a night's own noise counts for: three rounds, gpu_bench's default
HOMOGENEITY_ALPHA = 0.05  # the level of the F-tests that tell a night's noise from the others'
# From this noise_pct on, a night's interval for the next run's figure reaches zero: its rounds cannot place
# the figure above zero, and night_sd's first-order reading on the logarithms no longer holds.
UNBOUNDED_NOISE_PCT = 100.0
# noise_pct over one night's relative standard deviation, were the interval normal: 1.96 sqrt 2
_NOISE_PCT_PER_SD = 100.0 * statistics.NormalDist().inv_cdf(0.975) * math.sqrt(2.0)


def too_noisy(points: list[Point]) -> Point | None:
    """The night with the largest noise_pct, where it is UNBOUNDED_NOISE_PCT or more; None where every night
    bounds its own figure."""
    noisy = [p for p in points if p.noise_pct is not None and p.noise_pct >= UNBOUNDED_NOISE_PCT]
    return max(noisy, key=lambda p: p.noise_pct) if noisy else None


def night_sd(p: Point) -> float | None:
    """The standard deviation of one night's figure that the night itself knows of, on the log scale.

    gpu_bench's noise_pct is the 95% half-width of an interval for the next run's figure: it spans two runs'
    variation, so one run's relative standard deviation is at most noise_pct / (1.96 sqrt 2) (gpu_bench's own
    t quantile is larger than 1.96), which is the standard deviation of its logarithm to first order (the
    delta method). A night without noise_pct but with repetitions: the standard deviation of one repetition
    (a run's repetitions share its process, so their mean's would understate the variation between nights).
    None where the night knows nothing of its noise, as in a gpu_bench run of one round a case
    (one_round_run): its noise_pct and repetitions speak of its one process, not of the next run's.
    """
    if one_round_run(p.run):
        return None
    if p.noise_pct is not None and math.isfinite(p.noise_pct) and p.noise_pct >= 0:
        return p.noise_pct / _NOISE_PCT_PER_SD
    reps = [r for r in p.reps if r > 0 and math.isfinite(r)]
    if len(reps) >= 2:
        return statistics.stdev(math.log(r) for r in reps)
    return None


def one_round_run(run: Run) -> bool:
    """Whether a run is gpu_bench's with each case in one round (--rounds=1): its context says so."""
    return str(run.context.get("gpu_bench.rounds", "")).strip() == "1"


@dataclass
class Beyond:
    """A level's nights against the interval of the nights before it."""
    p_value: float  # the largest of the level's nights' two-sided p-values
    half_width_pct: float  # the newest night's interval at alpha: its bound on the change's side, in percent
    direction: int  # +1: every night of the level above the earlier nights' center, -1: below, 0: mixed


def _variance_ratio_p(ratio: float, dof_num: float, dof_den: float, two_sided: bool) -> float:
    from scipy import stats

    upper = float(stats.f.sf(ratio, dof_num, dof_den))
    return min(1.0, 2.0 * min(upper, 1.0 - upper)) if two_sided else upper


def level_against(before: list[Point], level: list[Point], alpha: float,
                  own: dict[int, float | None]) -> Beyond:
    """Each night of `level` against a prediction interval for one more night from the nights `before` it.

    On the log scale: the center is the earlier nights' median; the spread, their standard deviation (n - 1
    degrees of freedom), pooled with the nights' own noise (`own`: night_sd by id, NOISE_DOF degrees of
    freedom per night that knows it) where the earlier nights are fewer than FEW_NIGHTS, or where an F-test
    cannot tell the two apart. A night of the level whose own noise an F-test finds larger than the earlier
    nights' adds the excess to its own variance (a night with a stray round). Student's t with the pooled
    degrees of freedom gives each night's two-sided p-value.
    """
    import numpy as np
    from scipy import stats

    logs = np.log([p.value for p in before])
    n = len(logs)
    center = float(np.median(logs))
    var, dof = float(np.var(logs, ddof=1)), n - 1
    known = [own[id(p)] ** 2 for p in before + level if own[id(p)] is not None]
    if known:
        k = NOISE_DOF * len(known)
        within = float(np.mean(known))
        if n < FEW_NIGHTS or (var > 0 and within > 0 and
                              _variance_ratio_p(var / within, dof, k, True) >= HOMOGENEITY_ALPHA):
            var, dof = (dof * var + k * within) / (dof + k), dof + k
    earlier = [own[id(p)] ** 2 for p in before if own[id(p)] is not None]
    typical = float(np.mean(earlier)) if earlier else 0.0
    t_alpha = float(stats.t.ppf(1.0 - alpha / 2.0, dof))
    worst, half, signs = 0.0, math.inf, set()
    for p in level:
        v, mine = var, own[id(p)]
        if mine is not None and typical > 0 and \
                _variance_ratio_p(mine ** 2 / typical, NOISE_DOF, NOISE_DOF * len(earlier), False) < HOMOGENEITY_ALPHA:
            v += mine ** 2 - typical
        scale = math.sqrt(v * (1.0 + 1.0 / n))
        d = math.log(p.value) - center
        if scale > 0:
            pv = float(2.0 * stats.t.sf(abs(d) / scale, dof))
        else:
            pv = 0.0 if d else 1.0  # nights that never varied: any change is beyond them
        worst = max(worst, pv)
        signs.add(int(np.sign(d)))
        half = _bound_pct(t_alpha * scale, d >= 0)
    return Beyond(worst, half, signs.pop() if len(signs) == 1 else 0)


def _bound_pct(h: float, upper: bool) -> float:
    """A half-width `h` on the log scale as a relative bound in percent, on the upper or the lower side; inf
    where the upper bound is beyond a float."""
    try:
        return (math.expm1(h) if upper else -math.expm1(-h)) * 100.0
    except OverflowError:
        return math.inf


def judge(s: CaseSeries, alpha: float, threshold_pct: float, newest_only: bool = False) -> Finding | None:
    """The newest level of a case, where it lies beyond the case's own interval and the floor.

    The newest level is the longest run of latest nights (the newest alone, or it and the nights just
    before it) each beyond the interval from the nights before the run (level_against), on the same side,
    whose median differs from theirs by at least `threshold_pct`. `newest_only`: only the newest night may
    start it.
    """
    values = [p.value for p in s.points]
    if not values or min(values) <= 0:
        return None
    own = {id(p): night_sd(p) for p in s.points}
    least = MIN_EARLIER if any(sd is not None for sd in own.values()) else FEW_NIGHTS
    if len(values) <= least:
        return None
    if (max(values) - min(values)) / statistics.median(values) * 100.0 < threshold_pct:
        return None  # no two figures differ by the floor: nothing to find
    last = len(values) - 1
    found = None
    for k in range(last, least - 1, -1):
        if newest_only and k != last:
            break
        before, after = s.points[:k], s.points[k:]
        b, a = statistics.median(p.value for p in before), statistics.median(p.value for p in after)
        worse = (1.0 - a / b) * 100.0 if s.higher_is_better else (a / b - 1.0) * 100.0
        if abs(worse) < threshold_pct:
            continue
        t = level_against(before, after, alpha, own)
        if t.p_value < alpha and t.direction == (1 if a > b else -1):
            found = (k, b, a, worse, t)
    if found is None:
        return None
    k, b, a, worse, t = found
    # A level of one night of one repetition without noise_pct: nothing tells it from an outlier.
    confirmed = k < last or own[id(s.points[k])] is not None
    f = Finding(s.name, s.metric, s.unit, "regression" if worse > 0 else "improvement", b, a, worse, t.p_value,
                interval_pct=t.half_width_pct, nights=k, confirmed=confirmed)
    f.since, f.runs_ago = s.points[k].run, last - k
    f.context_change = context_change(s.points[k - 1].run, s.points[k].run)
    f.busy_host_pct = busy_host_pct(s.points[k].run.context.get("gpu_bench.round_host"))
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
    mc.one_round_runs = sum(one_round_run(r) for r in base + [newest])
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
        noisy = too_noisy(s.points)
        if noisy is not None:
            cause = newest.machine_cause(s.family, s.name)
            mc.too_noisy.append(TooNoisy(s.name, noisy.noise_pct, noisy.run,
                                         cause if beyond_machine_variance_pct(noisy.noise_pct) else None))
            continue
        if min(p.value for p in s.points) <= 0:
            mc.not_positive += 1
            continue
        # Across a configuration change only the newest run's difference is what the change did; a change
        # inside the old configuration's runs was reported when it happened.
        f = judge(s, alpha, threshold_pct, newest_only=change is not None)
        if f is not None:
            mc.findings.append(f)
    order = {"failing": 0, "regression": 1, "improvement": 2}
    mc.findings.sort(key=lambda f: (order[f.kind], -(abs(f.worse_pct or 0.0))))
    mc.too_noisy.sort(key=lambda n: n.case)
    return mc, data


def check(db, window: int = 10, threshold_pct: float = DEFAULT_THRESHOLD_PCT, metric: str | None = None,
          case_regex: str | None = None, alpha: float = DEFAULT_ALPHA) -> CheckReport:
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
