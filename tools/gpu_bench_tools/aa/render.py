"""The A/A report as text."""

from __future__ import annotations

import math

from ..reading.families import MACHINE_VARIANCE_PCT
from .agreement import (CAUGHT_TARGETS, COVERAGE_TARGET, DETECTABLE_PCT_LIMIT, DETECTABLE_SHARE_TARGET, DRIFT_P,
                        FALSE_CALL_LIMIT, FAMILY_DETECTABLE_TARGET_PCT, FAMILY_MIN_CASES, FAMILY_SLOWDOWNS,
                        HOST_DRIVEN_FAMILIES, MACHINE_CAUSE_SHARE_LIMIT, PAGEABLE_DETECTABLE_TARGET_PCT, ROUND_KINDS,
                        RUN_TIME_TARGET_S, TIMED_SHARE_TARGET, FamilyAgreement, Report)


def _pct(x: float) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100.0 * x:.1f}%"


def render(r: Report) -> str:
    lines = [f"A/A over {len(r.runs)} runs on {r.gpu}, {len(r.cases)} cases in every run"]
    gpus = {t.gpu_uuid for t in r.run_times}
    if r.one_machine:
        lines.append(f"  every run on one GPU ({next(iter(gpus))})")
    elif r.run_times:
        lines.append(f"  the runs were on {len(gpus)} GPUs (gpu.uuid): the spread between them includes the machines'")
    for i, t in enumerate(r.run_times, 1):
        # Where each run fell in its host's life, for reading a pair whose host link moved between the runs
        # (docs/methodology.md, "The host link over minutes"), and what else its host did in its rounds.
        about = "" if math.isnan(t.uptime_s) else f"; started {t.uptime_s / 60:.1f} min after its host"
        if not math.isnan(t.others_pct):
            about += (f"; other processes used {t.others_pct:.1f}% of the host's CPU time in its median round "
                      f"(most {t.others_max_pct:.1f}%), the hypervisor took {t.steal_pct:.2f}% "
                      f"(most {t.steal_max_pct:.2f}%)")
        if math.isnan(t.timed_share):
            lines.append(f"  run {i}: no gpu_bench.elapsed_s and timed_s in its file{about}")
            continue
        calibrations = "" if math.isnan(t.calibration_timed_s) else \
            f", calibrations' {t.calibration_timed_s:.1f} s of them"
        lines.append(f"  run {i}: {t.elapsed_s:.1f} s (target {RUN_TIME_TARGET_S:.0f} s or less), {t.timed_s:.1f} s "
                     f"of it timed samples ({_pct(t.timed_share)}{calibrations}; target at least "
                     f"{TIMED_SHARE_TARGET:.0%}){about}")
    lines.append(f"  between runs: median case spread {r.median_spread_pct:.2f}% (max-min over median); "
                 f"median noise_pct {r.median_noise_pct:.2f}%")
    if not math.isnan(r.detection_median("noise")):
        detectable = r.detection_median("detectable")
        lines.append(f"  pinned and registered copies of 1 MiB and more: median noise_pct "
                     f"{r.detection_median('noise'):.2f}%"
                     + ("" if math.isnan(detectable) else f", median detectable_pct {detectable:.2f}%"))
    pageable = r.large_pageable_detectable_by_run()
    if pageable:
        lines.append(f"  pageable copies of 1 MiB and more: median detectable_pct "
                     f"{', '.join(f'{d:.2f}%' for d in pageable)}, per run (target at most "
                     f"{PAGEABLE_DETECTABLE_TARGET_PCT:g}%)")
    named, unnamed = r.above_machine_variance_pct()
    examples = f": {', '.join(c.key for c in unnamed[:3])}{', ...' if len(unnamed) > 3 else ''}" if unnamed else ""
    share = _pct(len(named) / len(r.cases) if r.cases else math.nan)
    lines.append(f"  above {MACHINE_VARIANCE_PCT:g}% (noise_pct or detectable_pct in a run): {len(named)} case(s) "
                 f"whose descriptor names the machine's own cause ({share} of {len(r.cases)}; target at most "
                 f"{MACHINE_CAUSE_SHARE_LIMIT:.0%}), {len(unnamed)} that name none (target 0{examples})")
    lines.append(f"  coverage: run k's interval holds run k+1's figure {_pct(r.coverage_next)} of the time "
                 f"(target {COVERAGE_TARGET:.0%}); over every ordered pair {_pct(r.coverage_all)}")
    lines.append(_whole_matrix(r))
    # Which way the calls lean: runs of one build should lean neither, so calls mostly one way say the
    # runs' order (or a change of the machine between them) moved many cases at once.
    per_pair = ", ".join(f"{p['faster'] + p['slower']}/{p['cases']} ({p['faster']} faster, {p['slower']} slower)"
                         for p in r.false_calls)
    lines.append(f"  gpu-bench-compare between consecutive runs: {_pct(r.false_call_rate)} of cases called "
                 f"faster or slower (target at most {FALSE_CALL_LIMIT:.0%}; per pair: {per_pair}); "
                 f"--fail-on-regression {r.gate_pct:g} fires for {sum(bool(p.get('gate_fired')) for p in r.false_calls)} "
                 f"of {len(r.false_calls)} pairs")
    o = r.one_round
    if o is not None and o.compared:
        lines.append(f"  one round a side (each round of run k against each of run k+1, as compare judges files of "
                     f"one round): {_pct(o.rate)} called faster or slower beyond the between-run floors (target at "
                     f"most {FALSE_CALL_LIMIT:.0%}; {o.called}/{o.compared}; floors: {o.floors})")
    if o is not None:
        for pct, (caught, pairs) in sorted(o.slowed.items()):
            if pairs:
                lines.append(f"    one round a side, the later round {pct:g}% slower: {_pct(caught / pairs)} of the "
                             f"pinned and registered copies of 1 MiB and more called slower ({caught}/{pairs})")
    if o is not None and o.unfloored:
        lines.append(f"    no floor for {', '.join(o.unfloored)}: compare cannot widen their files of one round "
                     "(write floors from runs that hold them: --floor)")
    for s in r.slowdowns:
        lines.append(f"  every figure {s.pct:g}% slower: {_pct(s.rate)} of pinned and registered copies of 1 MiB "
                     f"and more called slower ({s.detected}/{s.detection_cases}); --fail-on-regression "
                     f"{r.gate_pct:g} fires for {s.gate_fired} of {s.pairs} pairs")
        lines.append(f"    the earlier run of each pair {s.pct:g}% slower instead: {_pct(s.rate_earlier)} "
                     f"({s.detected_earlier}/{s.detection_cases}); fires for {s.gate_fired_earlier} of {s.pairs}")
    for k in sorted({d.pair for d in r.link_drift}):
        groups = [d for d in r.link_drift if d.pair == k]
        lines.append(f"  the host link, run {k + 1} against run {k} (pinned and registered copies of 1 MiB and more, "
                     "median change, + slower; Wilcoxon's p): " + "; ".join(
                         f"{d.direction} {d.change_pct:+.2f}% (p {d.p_value:.3f}, {d.cases})" for d in groups))
        moved = [d.direction for d in groups if d.moved]
        if moved:
            lines.append(f"    moved between the runs (p < {DRIFT_P:g}): {', '.join(moved)}: the link changed, which no "
                         "interval from one run's rounds holds, and a slowdown of the faster run is partly hidden "
                         "by it")
    if r.round_kinds:
        lines.append("  rounds by their process (pinned and registered copies of 1 MiB and more; each round over its "
                     "case's fastest, the median excess and how many rounds): full, a round of every case; link, of "
                     "the link-bound cases alone; extra, the extra rounds; last, in the process the user started")
    for k in r.round_kinds:
        parts = []
        for group in ("one way", "bidir"):
            kinds = k.excess_pct.get(group)
            if kinds:
                parts.append(f"{group} " + ", ".join(f"{kind} {kinds[kind]:.2f}% ({k.rounds[group][kind]})"
                                                   for kind in ROUND_KINDS if kind in kinds))
        lines.append(f"    run {k.run}: " + "; ".join(parts))
    if r.full_over_link:
        worst = sorted(r.full_over_link.items(),
                       key=lambda kv: -max((abs(v) for v in kv[1] if math.isfinite(v)), default=0.0))
        lines.append("  full rounds over link rounds, by family, worst first (each case that took every full and "
                     "link round: its middle full round over its middle link round, + slower in the full rounds; the "
                     "median over the family's cases, per run; about 0 where a case meets the same cases before it "
                     "in both): " + "; ".join(f"{fam} " + ", ".join(f"{v:+.2f}%" if math.isfinite(v) else "none" for v in runs)
                                          for fam, runs in worst))
    if r.spread_by_kind:
        widest = sorted(r.spread_by_kind.items(), key=lambda kv: -kv[1][1])
        lines.append("  rounds' spread by their process, by family, widest link rounds first (each case that took two "
                     "or more full and link rounds: the sd of its full rounds' log times, then of its link rounds'; "
                     "the median over the family's cases and runs; link rounds run the cases that take --link_rounds "
                     "alone, back to back): " + "; ".join(f"{fam} {full:.2f}%, {link:.2f}%"
                                                          for fam, (full, link) in widest))
    lines += _render_families(r.families)
    if r.families:
        lines.append(_family_targets(r))
    worst = sorted(r.cases, key=lambda c: c.covered / max(1, c.pairs))[:8]
    lines.append("  least covered cases: " + "; ".join(
        f"{c.key} {c.covered}/{c.pairs} (spread {c.spread_pct:.1f}%)" for c in worst))
    return "\n".join(lines) + "\n"


def _whole_matrix(r: Report) -> str:
    """The matrix-wide targets in one line: the families' table gives the same catches family by family."""
    if any(m.counted for m in r.detectable_runs):
        runs = [f"{_pct(m.rate)} ({m.met}/{m.counted})" for m in r.detectable_runs]
        shares = " and ".join([", ".join(runs[:-1]), runs[-1]] if len(runs) > 2 else runs)
        detectable = f" in {shares} of the cases that wrote one, per run"
    else:
        detectable = ": no run wrote one"
    caught = []
    for pct, target in CAUGHT_TARGETS.items():
        m = r.caught_all(pct)
        called, of = ("called slower ", " of all cases") if not caught else ("", "")
        caught.append(f"{pct:g}% slower {called}in {_pct(m.rate)}{of} ({m.met}/{m.counted}; target at least "
                      f"{target:.0%})")
    return (f"  whole matrix: detectable_pct {DETECTABLE_PCT_LIMIT:g}% or less{detectable} (target at least "
            f"{DETECTABLE_SHARE_TARGET:.0%}); every figure of the later run " + ", ".join(caught))


def _family_targets(r: Report) -> str:
    """The targets each family is held to on its own, and the families that miss them."""
    coverage, detectable = r.family_misses()
    named = ", ".join(HOST_DRIVEN_FAMILIES[:-1]) + f" and {HOST_DRIVEN_FAMILIES[-1]}"
    below = ", ".join(f"{name} {_pct(v)}" for name, v in coverage.items()) or "none"
    above = ", ".join(f"{name} {v:.2f}%" for name, v in detectable.items()) or "none"
    return (f"  each family's own targets: coverage of the next run at least {COVERAGE_TARGET:.0%} in every family of "
            f"{FAMILY_MIN_CASES} cases or more, below it: {below}; median detectable_pct at most "
            f"{FAMILY_DETECTABLE_TARGET_PCT:g}% in {named}, above it: {above}")


def _render_families(families: dict[str, FamilyAgreement]) -> list[str]:
    def pct_of(x: float) -> str:
        return "n/a" if math.isnan(x) else f"{x:.2f}%"

    caught = "  ".join(f"{pct:g}% slower" for pct in FAMILY_SLOWDOWNS)
    lines = ["  by family, worst first (Transfer by memory kind): its cases' median spread, their shift (the median "
             "over its cases of the later run over the earlier, + slower; of several pairs, the largest: a whole "
             "run's state moves a family together), coverage of the next run, "
             "floor (p90 relative sd), detectable_pct's median and p90 over every case and run, how many of those "
             f"lie above {DETECTABLE_PCT_LIMIT:g}%, runs/rounds (the "
             "between-run mean square of its rounds over the within-run one: about 1 where nothing holds for a "
             "whole run, well above it where more rounds cannot help), and the share of its cases compare calls "
             "slower with every figure of the later run that much slower"]
    width = max([len("family"), *(len(name) for name in families)])
    over = f"det>{DETECTABLE_PCT_LIMIT:g}%"
    lines.append(f"    {'family':{width}s} {'cases':>5s} {'spread':>7s} {'shift':>7s} {'coverage':>8s} {'floor':>8s} "
                 f"{'det p50':>9s} {'det p90':>9s} {over:>9s} {'runs/rounds':>11s}  {caught}")
    for name, f in families.items():
        ratio = "n/a" if math.isnan(f.runs_over_rounds) else f"{f.runs_over_rounds:.2f}"
        shift = "n/a" if math.isnan(f.shift_pct) else f"{f.shift_pct:+.2f}%"
        lines.append(f"    {name:{width}s} {f.cases:5d} {pct_of(f.median_spread_pct):>7s} {shift:>7s} "
                     f"{_pct(f.coverage_next):>8s} "
                     f"{pct_of(f.floor_pct):>8s} {pct_of(f.detectable_median_pct):>9s} "
                     f"{pct_of(f.detectable_p90_pct):>9s} {f'{f.detectable_over_limit}/{f.detectable_written}':>9s} "
                     f"{ratio:>11s}  "
                     + "  ".join(f"{_pct(f.caught(pct)):>{len(f'{pct:g}% slower')}s}" for pct in FAMILY_SLOWDOWNS))
    return lines
