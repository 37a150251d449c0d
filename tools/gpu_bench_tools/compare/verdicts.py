"""Compare the same cases across files: each file's ratio to the first, and a verdict per case (its
record in record.py, each file's figures in cells.py).

A case's verdict rests on runs rather than samples: what a user compares is one run against another, and runs
differ by more than one process's samples say (docs/methodology.md).
- Where both sides have several rounds (gpu_bench's default: each round a process of its own; or several
  files on a side), a moderated Welch test on the rounds' medians (stats/rounds.py): each side's spread is
  its rounds' moderated by the prior gpu_bench wrote for the cases that vary as it does (or, for a file
  without one, the prior its own rounds give), and a change must be at least each side's detectable_pct,
  the smallest change it can show.
- Where a side has one round, its noise_pct speaks of its own process only: every verdict is widened to
  the family's between-run floor (floors.py, measured by gpu-bench-aa), and the samples' Mann-Whitney U
  test (repetitions where there are no samples) decides significance.
A change is called faster or slower only when it is at least --min-effect, larger than the noise of either
side, and significant. Where neither a test nor a floor can judge it, the verdict rests on the ratio and
the noise alone and is marked untested. A noisy verdict reads as the machine's own variance where a side spreads
beyond MACHINE_VARIANCE_PCT and the case's descriptor names the machine's cause.
Each round-tested comparison also gets a q-value, its p-value adjusted over every such case (adjust_over_cases):
--fail-on-regression asks of all cases at once.
"""

from __future__ import annotations

import math
import re
import statistics

from ..reading.facts import BUSY_HOST_PCT, busy_host_pct, host_cpu, host_cpus_differ, others_share_pct
from ..reading.families import MACHINE_VARIANCE_PCT
from ..reading.load import (
    TIME_UNIT_NS,
    headline_of,
    BenchmarkFile,
    canonical_metric,
    context_differences,
    file_labels,
    metric_for,
    unit_and_direction,
)
from ..reading.multigpu import first_gpu_facts_note, short_gpu_name
from ..reading.names import parse_name
from ..stats import rounds as round_model
from ..stats.floors import Floors
from ..stats.rounds import MIN_EFFECT_ONE_ROUND_PCT, MIN_EFFECT_PCT
from ..stats.nonparametric import bh_adjusted, gmean, smallest_p, u_test_pvalues
from .record import (
    VERDICTS,
    CHANGED_VERDICT,
    CHANGED_VERDICT_KEY,
    MACHINE_VERDICT,
    MACHINE_VERDICT_KEY,
    Cell,
    Versus,
    Row,
    FamilySummary,
    GroupSummary,
    Comparison,
)
from .cells import _floor, case_gpus, _per_gpu, _cell, _has_rounds

# A file's host-driven cases moved together against the first file's where at least this share of them moved
# one way while the copies at the host link's rate held within LINK_HELD_PCT (their median change).
HOST_LEAN_SHARE = 0.75
LINK_HELD_PCT = 1.0
# The fewest cases of each kind that host_lean_notes reads a lean from.
HOST_LEAN_MIN_CASES = 20
LINK_HELD_MIN_CASES = 4


def compare(
    files: list[BenchmarkFile],
    metric: str | None = None,
    case_filter: str | None = None,
    alpha: float = 0.05,
    min_effect_pct: float | None = None,
    floors: Floors | None = None,
) -> Comparison:
    """Compare every case of the files against the first file.  Raises re.error on a bad filter.

    `min_effect_pct`: no smaller change is called (default: MIN_EFFECT_PCT where both sides have rounds,
    MIN_EFFECT_ONE_ROUND_PCT where a side has none). `floors`: the between-run floors for sides of one round
    (default: the ones shipped with the tools).
    """
    effect_rounds = MIN_EFFECT_PCT if min_effect_pct is None else min_effect_pct
    effect_one = MIN_EFFECT_ONE_ROUND_PCT if min_effect_pct is None else min_effect_pct
    if floors is None:
        from ..stats.floors import load_floors

        floors = load_floors()
    rx = re.compile(case_filter) if case_filter else None
    notes: list[str] = []
    for f in files:
        if not f.is_gpu_bench:
            notes.append(f"{f.path}: plain Google Benchmark JSON (no gpu_bench context): no GPU facts to compare")
    old_facts = first_gpu_facts_note(files)
    if old_facts:
        notes.append(old_facts)

    keys: list[str] = []
    seen: set[str] = set()
    for f in files:
        for k in f.cases:
            if k not in seen and (rx is None or rx.search(k)):
                seen.add(k)
                keys.append(k)

    rows: list[Row] = []
    only_in: list[tuple[str, list[int]]] = []
    pending: list[tuple[Row, int, list[float], list[float]]] = []
    pending_rounds: list[tuple[Row, int, list[float], list[float]]] = []
    floored: list[tuple[Row, bool]] = []  # each comparison widened to the floor, and whether both sides had rounds
    no_metric = 0
    per_gpu: list[tuple[str, dict[int, int]]] = []
    changed: list[Row] = []  # rows a file measured in another way than the first
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
            _cell(f, f.cases[key], m, unit if unit in TIME_UNIT_NS else f.cases[key].time_unit, hib) if key in f.cases
            else None for f in files
        ]
        gpus = {i: n for i in present if (n := case_gpus(files[i].cases[key])) is not None}
        if hib and len(set(gpus.values())) > 1:
            # One node's total over all its GPUs against another's over fewer says how many GPUs each has:
            # each side's rate per GPU is what its GPUs do.
            cells = [_per_gpu(c, gpus[i]) if c is not None and i in gpus else c for i, c in enumerate(cells)]
            unit += " per GPU"
            per_gpu.append((key, gpus))
        row = Row(key, first.family, m, unit, hib, cells, [None] * len(files),
                  host_side=any(d is not None and d.is_host_side(key)
                                for d in (files[i].descriptor(first.family) for i in present)))
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
            speed = (ratio if hib else 1.0 / ratio) if ratio and ratio > 0 else None
            if (way := files[i].way(key)) != (first_way := files[0].way(key)):
                row.versus[i] = Versus(ratio, speed, "noisy", False, higher_is_better=hib,
                                       measured_differently=f"way {first_way} in [1], way {way} in [{i + 1}]")
                changed.append(row)
                continue
            noises = [x for x in (base.noise_pct, c.noise_pct) if x is not None]
            v = row.versus[i] = Versus(ratio, speed, "same", False, higher_is_better=hib,
                                       noise_pct=max(noises) if noises else None,
                                       machine_cause=base.machine_cause or c.machine_cause)
            if base.detectable_pct is not None and c.detectable_pct is not None:
                pending_rounds.append((row, i, base, c))
                continue
            floor = _floor(floors, files[0], files[i], first)
            if floor is not None and canonical_metric(m) in ("real_time", canonical_metric(
                    headline_of(files[0], row.family))):
                v.noise_pct, v.floored = max(v.noise_pct or 0.0, floor), True
                floored.append((row, _has_rounds(files[0], first) and _has_rounds(files[i], files[i].cases[key])))
            # The same kind of values on both sides: per-sample where both have them, else repetitions.
            a, b = (base.values, c.values) if base.samples == c.samples else (base.reps, c.reps)
            if smallest_p(len(a), len(b)) < alpha:
                pending.append((row, i, list(a), list(b)))
            else:
                v.verdict = verdict(speed, None, alpha, effect_one, v.noise_pct)
                v.tested, v.method = v.floored, "floor" if v.floored else ""
        rows.append(row)

    for (row, i, _, _), (p, method) in zip(pending, u_test_pvalues([(a, b) for _, _, a, b in pending])):
        v = row.versus[i]
        v.tested, v.p_value, v.method = True, p, method
        v.verdict = verdict(v.speed, p, alpha, effect_one, v.noise_pct)
    # Where both sides have rounds, the moderated test on them judges, and a change must be at least what each
    # side can show (its detectable_pct: the critical difference of this test against a run like it, the
    # timer's tick and the minimum effect), so a side whose own rounds spread more is not called on the other
    # side's sharper spread alone.
    for row, i, a, b in pending_rounds:
        v = row.versus[i]
        _, p = round_model.moderated_test(a.rounds, a.prior, b.rounds, b.prior)
        v.detectable_pct = max(a.detectable_pct, b.detectable_pct, effect_rounds)
        v.tested, v.p_value, v.method = True, p, "moderated-rounds"
        v.verdict = verdict(v.speed, p, alpha, effect_rounds, v.detectable_pct)
    adjust_over_cases(rows, len(files))
    if floored:
        models = sorted({short_gpu_name(f.fact("gpu.name") or "") for f in files} - {""})
        which = "; ".join(floors.table_for(g) for g in models) or floors.table_for(None)
        widened = f"each is widened to its group's between-run floor ({floors.path}: {which}; {floors.source})"
        one_round = [r for r, rounds in floored if not rounds]
        if one_round:
            notes.append(f"{len(one_round)} comparison(s) have one round on a side ({_which_cases(one_round, rows)}), "
                         f"whose noise_pct speaks of one process only: {widened}")
        # Both sides have rounds, but they hold only the case's time: a headline of another kind (HostBlocking's
        # host time) is reported from the last round alone, so the rounds cannot judge it.
        unrecorded = [r for r, rounds in floored if rounds]
        if unrecorded:
            metrics = ", ".join(sorted({r.metric for r in unrecorded}))
            notes.append(f"{len(unrecorded)} comparison(s) ({_which_cases(unrecorded, rows)}) judge {metrics}, "
                         "which each run reports from its last round alone, as its rounds record only the case's "
                         f"time: {widened}")

    untested = sum(1 for r in rows for v in r.versus
                   if v and v.verdict in VERDICTS and not v.tested and not v.measured_differently)
    if untested:
        notes.append(
            f"{untested} comparison(s) have too few samples on a side for a test to reach p < {alpha:g}: their "
            f"verdicts come from the ratio and the noise alone (effect >= {effect_one:g}%); run gpu_bench "
            "with its default --rounds (3), or give several runs a side (--per-side)"
        )
    if per_gpu:
        fams = sorted({parse_name(k).family for k, _ in per_gpu})
        counts = "; ".join(sorted({", ".join(f"[{i + 1}] {n}" for i, n in sorted(g.items())) for _, g in per_gpu}))
        notes.append(f"{len(per_gpu)} case(s) ({', '.join(fams)}) ran on more GPUs in one file than in another "
                     f"(GPUs: {counts}): each side's total is divided by its GPUs, and compared per GPU")
    if no_metric:
        notes.append(f"{no_metric} case(s) have no '{metric}' counter and are left out")
    if keys and not rows:
        notes.append("no case is present in the first file and another one")
    host_rows = [r for r in rows if r.host_side]
    differ = [i for i in range(1, len(files)) if host_cpus_differ(files[0], files[i])]
    # Only host-side figures depend on the host's CPU; the header lists the difference whatever is compared.
    if differ and host_rows:
        which = "; ".join(f"[{i + 1}] {host_cpu(files[i])}" for i in differ)
        fams = sorted({r.family for r in host_rows})
        notes.append(f"the host CPU differs: [1] {host_cpu(files[0])}; {which}: "
                     f"{len(host_rows)} host-side figure(s) ({', '.join(fams)}) measure the host as much as the GPU")
    notes.extend(host_lean_notes(files, rows))
    notes.extend(busy_host_notes(files))
    # One warning per cause, in the words of the last file that names one: files of two gpu_bench versions
    # may word a family's cause differently.
    by_cause: dict[str, list[Row]] = {}
    for r in rows:
        for v in r.versus:
            if v is not None and v.machine_variance:
                by_cause.setdefault(_last_files_cause(files, r) or v.machine_cause, []).append(r)
    for cause, some in by_cause.items():
        notes.append(f"{MACHINE_VERDICT}: {len({r.key for r in some})} case(s) ({_which_cases(some, rows)}) spread "
                     f"beyond {MACHINE_VARIANCE_PCT:g}% and vary with {cause}; gpu_bench cannot remove that, so no "
                     "change within it is called")
    if changed:
        notes.append(f"{CHANGED_VERDICT}: {len({r.key for r in changed})} case(s) ({_which_cases(changed, rows)}) "
                     "were measured in another way by one file's gpu_bench than by the other's, so no change is "
                     "called on them (CHANGELOG.md says what changed)")
    with_device = [any(c.axis("device") is not None for c in f.cases.values()) for f in files]
    if any(with_device) and not all(with_device):
        notes.append("some files have a /device:N axis (gpu_bench --device=all) and some do not, so their "
                     "single-GPU cases do not match; run every machine with the same --device")

    return Comparison(
        paths=[f.path for f in files],
        # Host-side figures are keyed on the host's CPU as well as the GPU: their columns say which.
        labels=file_labels(files, with_host=bool(host_rows)),
        metric=metric,
        context_diff=context_differences(files),
        rows=rows,
        only_in=only_in,
        families=_family_summaries(rows, len(files)),
        groups=group_summaries(files, rows),
        warnings=notes,
        case_notes=[(key, i, note) for key in keys for i, f in enumerate(files) if key in f.cases
                    for note in f.cases[key].notes()],
        alpha=alpha,
        min_effect_pct=effect_rounds if min_effect_pct is None else min_effect_pct,
        floors_path=floors.path,
    )


def host_lean_notes(files: list[BenchmarkFile], rows: list[Row]) -> list[str]:
    """One note per file whose host-driven cases (those whose descriptor names the machine's cause) moved one
    way together against the first file's, while its copies at the host link's rate held, and where compare
    called some of them that way. A host slower or faster for a whole run moves them so; so does a change in
    the driver's host path. Only a rerun tells the two apart (docs/methodology.md, "What the interval does not
    yet hold")."""
    notes = []
    for i in range(1, len(files)):
        host: list[tuple[Row, Versus]] = []
        link: list[float] = []
        for r in rows:
            v = r.versus[i]
            if v is None or v.ratio is None or v.measured_differently:
                continue
            d = files[0].descriptor(r.family)
            if d is not None and d.machine_cause(r.key):
                host.append((r, v))
            elif d is not None and d.is_link_bound(files[0].cases[r.key]):
                link.append(v.slowdown_pct)
        if len(host) < HOST_LEAN_MIN_CASES or len(link) < LINK_HELD_MIN_CASES:
            continue
        held = statistics.median(link)
        slower = [v for _, v in host if v.slowdown_pct > 0]
        faster = [v for _, v in host if v.slowdown_pct < 0]
        way, leaning = ("slower", slower) if len(slower) >= len(faster) else ("faster", faster)
        called = [r for r, v in host if v.verdict == way]
        if len(leaning) < HOST_LEAN_SHARE * len(host) or abs(held) >= LINK_HELD_PCT or not called:
            continue
        moved = statistics.median(v.slowdown_pct for _, v in host)
        all_called = sum(1 for r in rows if r.versus[i] is not None and r.versus[i].verdict == way)
        notes.append(
            f"[{i + 1}]'s host-driven cases moved together: {len(leaning)} of the {len(host)} whose descriptor names "
            f"the machine's cause read {way} than [1]'s (median {moved:+.2f}%, + slower), while the "
            f"{len(link)} copies at the host link's rate held (median {held:+.2f}%). {len(called)} of the "
            f"{all_called} {way} verdicts are among them ({_which_cases(called, rows)}). A host {way} for the "
            "whole run reads so, as does a change in the driver's host path: rerun both to tell them apart")
    return notes


def busy_host_notes(files: list[BenchmarkFile]) -> list[str]:
    """One note where any file's run was made on a busy host (BUSY_HOST_PCT), with each file's share."""
    medians = [others_share_pct(f.fact("gpu_bench.round_host")) for f in files]
    busy = [i for i, f in enumerate(files) if busy_host_pct(f.fact("gpu_bench.round_host")) is not None]
    if not busy:
        return []
    shares = "; ".join(f"[{i + 1}] " + ("not recorded" if m is None else f"{m:.1f}%") for i, m in enumerate(medians))
    which = ", ".join(f"[{i + 1}]" for i in busy)
    return [f"{which} ran on a busy host: other processes used {BUSY_HOST_PCT:g}% or more of its CPU time in the "
            f"median round (gpu_bench.round_host; {shares}). Host-driven figures read slower and noisier there, so "
            "a change in them may be the host's: rerun on a quiet host"]


def _last_files_cause(files: list[BenchmarkFile], row: Row) -> str | None:
    """The machine_variance_cause the last of `files` whose descriptor names one gives the row's case."""
    for f in reversed(files):
        d = f.descriptor(row.family)
        if d is not None and (cause := d.machine_cause(row.key)):
            return cause
    return None


def _which_cases(some: list[Row], rows: list[Row]) -> str:
    """Which of the compared rows `some` are, by family ('all 24 HostBlocking cases'), and the first case."""
    some = list({r.key: r for r in some}.values())  # a row of several files is in `some` once for each
    counts: dict[str, int] = {}
    for r in some:
        counts[r.family] = counts.get(r.family, 0) + 1
    totals: dict[str, int] = {}
    for r in rows:
        totals[r.family] = totals.get(r.family, 0) + 1
    fams = [f"all {n} {fam} cases" if n == totals[fam] else f"{n} of the {totals[fam]} {fam} cases"
            for fam, n in counts.items()]
    return f"{', '.join(fams)}, e.g. {some[0].key}" if len(some) > 1 else some[0].key


def verdict(speed: float | None, p: float | None, alpha: float, min_effect_pct: float,
           noise: float | None) -> str:
    """faster/slower when the change is at least min_effect, beyond the noise and (where tested) significant."""
    if speed is None:
        return "error"
    change = abs(speed - 1.0) * 100.0
    if change < min_effect_pct:
        return "same"
    if (noise is not None and change <= noise) or (p is not None and p >= alpha):
        return "noisy"
    return "faster" if speed > 1.0 else "slower"


def adjust_over_cases(rows: list[Row], nfiles: int) -> None:
    """Sets the q_value of each comparison judged on both sides' rounds: its p-value adjusted by Benjamini-Hochberg
    over every such comparison of its file against the first. Between two default runs of one build, some of
    565 cases reach p < 0.05 by chance: --fail-on-regression 5 fired in 20 of 23 committed A/A pairs so. A side
    of one round is judged by the between-run floor, a wider interval than its samples' test: it has none."""
    for i in range(1, nfiles):
        tested = [r.versus[i] for r in rows
                  if r.versus[i] is not None and r.versus[i].p_value is not None and r.versus[i].method == "moderated-rounds"]
        for v, q in zip(tested, bh_adjusted([v.p_value for v in tested])):
            v.q_value = q


def verdict_key(v: Versus) -> str:
    """A comparison's verdict, with '?' where a faster or slower one is not tested (fmt_verdict's words), and
    MACHINE_VERDICT_KEY where a noisy one is the machine's own variance."""
    if v.machine_variance:
        return MACHINE_VERDICT_KEY
    if v.measured_differently:
        return CHANGED_VERDICT_KEY
    return v.verdict if v.tested or v.verdict not in ("faster", "slower") else v.verdict + "?"


def group_summaries(files: list[BenchmarkFile], rows: list[Row]) -> list[GroupSummary]:
    """The rows' verdicts per family, spread axes (memory kind, direction) and size band: the families whose
    figure is a rate (bandwidth, a buyer's first question) before those whose figure is a time, each in the
    rows' order of families and axes, with its bands from the smallest size up."""
    nfiles = len(files)
    groups: dict[tuple, GroupSummary] = {}
    for r in rows:
        name = parse_name(r.key)
        spread = set(files[0].spread_axes(r.family))
        axes = tuple((k, v) for k, v in name.axes if k in spread)
        size = name.axis("bytes")
        nbytes = int(size) if size is not None and size.isdigit() else None
        band = round_model.size_band(nbytes) if nbytes is not None else None
        g = groups.get((r.family, axes, band))
        if g is None:
            g = groups[(r.family, axes, band)] = GroupSummary(r.family, axes, band, None, 0, r.higher_is_better,
                                                              [{} for _ in range(nfiles)])
        g.cases += 1
        if nbytes is not None:
            g.sizes = (min(g.sizes[0], nbytes), max(g.sizes[1], nbytes)) if g.sizes else (nbytes, nbytes)
        for i in range(1, nfiles):
            v = r.versus[i]
            if v is not None:
                g.speeds[i].setdefault(verdict_key(v), []).append(v.speed if v.speed is not None else math.nan)
    families = list(dict.fromkeys(g.family for g in groups.values()))
    axes_order = list(dict.fromkeys((g.family, g.axes) for g in groups.values()))
    return sorted(groups.values(), key=lambda g: (not g.higher_is_better, families.index(g.family),
                                                  axes_order.index((g.family, g.axes)), g.sizes[0] if g.sizes else 0))


def _family_summaries(rows: list[Row], nfiles: int) -> list[FamilySummary]:
    fams: dict[str, list[Row]] = {}
    for r in rows:
        fams.setdefault(r.family, []).append(r)
    out = []
    for fam, rs in fams.items():
        geo: list[float | None] = [None] * nfiles
        counts: list[dict[str, int]] = [{} for _ in range(nfiles)]
        for i in range(1, nfiles):
            geo[i] = gmean([r.versus[i].speed for r in rs if r.versus[i] and r.versus[i].speed])
            for r in rs:
                v = r.versus[i]
                if v:
                    counts[i][v.verdict] = counts[i].get(v.verdict, 0) + 1
        out.append(FamilySummary(fam, len(rs), geo, counts))
    return out
