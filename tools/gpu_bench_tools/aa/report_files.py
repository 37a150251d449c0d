"""The A/A report's files: the report as JSON, its between-run floors as TOML, and the floors of several
machines' reports merged into the file gpu-bench-compare reads."""

from __future__ import annotations

import json
from dataclasses import asdict

from ..reading.errors import InputError
from ..reading.families import MACHINE_VARIANCE_PCT
from ..reading.files import read_json
from .agreement import (CAUGHT_TARGETS, COVERAGE_TARGET, DETECTABLE_PCT_LIMIT, DETECTABLE_SHARE_TARGET,
                        FAMILY_DETECTABLE_TARGET_PCT, FAMILY_MIN_CASES, HOST_DRIVEN_FAMILIES,
                        PAGEABLE_DETECTABLE_TARGET_PCT, RUN_TIME_TARGET_S, TIMED_SHARE_TARGET, Report)


def write_json(r: Report, path: str) -> None:
    doc = asdict(r)
    doc["false_call_rate"] = r.false_call_rate
    doc["median_spread_pct"] = r.median_spread_pct
    doc["median_noise_pct"] = r.median_noise_pct
    doc["one_machine"] = r.one_machine
    for t, d in zip(r.run_times, doc["run_times"]):
        d["timed_share"] = t.timed_share
        d["within_run_time_target"] = bool(t.elapsed_s <= RUN_TIME_TARGET_S)
        d["within_timed_share_target"] = bool(t.timed_share >= TIMED_SHARE_TARGET)
    for s, d in zip(r.slowdowns, doc["slowdowns"]):
        d["rate"] = s.rate
        d["rate_earlier"] = s.rate_earlier
    if r.one_round is not None:
        doc["one_round"]["rate"] = r.one_round.rate
    for d, out in zip(r.link_drift, doc["link_drift"]):
        out["moved"] = d.moved
    doc["detection_median_noise_pct"] = r.detection_median("noise")
    doc["detection_median_detectable_pct"] = r.detection_median("detectable")
    doc["large_pageable"] = {"median_detectable_pct_by_run": r.large_pageable_detectable_by_run(),
                             "target_pct": PAGEABLE_DETECTABLE_TARGET_PCT}
    named, unnamed = r.above_machine_variance_pct()
    doc["above_machine_variance_pct"] = {
        "pct": MACHINE_VARIANCE_PCT, "cases": len(r.cases), "named_cause": len(named),
        "named_cause_share": len(named) / len(r.cases) if r.cases else None, "no_cause": len(unnamed),
        "no_cause_cases": [c.key for c in unnamed]}
    for f, out in zip(r.families.values(), doc["families"].values()):
        out["coverage_next"] = f.coverage_next
        for c, d in zip(f.slowdowns, out["slowdowns"]):
            d["rate"] = c.rate
    # The matrix-wide targets as one object, each beside the share it judges: the runs' counts belong in it alone.
    doc.pop("detectable_runs")
    doc["whole_matrix"] = {
        "detectable_pct_at_most": DETECTABLE_PCT_LIMIT, "detectable_target": DETECTABLE_SHARE_TARGET,
        "detectable_runs": [{"run": i, "at_most": m.met, "cases": m.counted, "rate": m.rate}
                            for i, m in enumerate(r.detectable_runs, 1)],
        "slowdowns": [{"pct": pct, "caught": m.met, "cases": m.counted, "rate": m.rate, "target": target}
                      for pct, target in CAUGHT_TARGETS.items() for m in [r.caught_all(pct)]]}
    coverage, detectable = r.family_misses()
    doc["family_targets"] = {
        "coverage_target": COVERAGE_TARGET, "min_cases": FAMILY_MIN_CASES, "coverage_below": coverage,
        "detectable_target_pct": FAMILY_DETECTABLE_TARGET_PCT, "host_driven": list(HOST_DRIVEN_FAMILIES),
        "detectable_above": detectable}
    with open(path, "w") as out:
        json.dump(doc, out, indent=1)
        out.write("\n")


def _toml_table(floors: dict[str, float]) -> list[str]:
    return [f"{json.dumps(key) if '/' in key else key} = {v}" for key, v in sorted(floors.items())]


def _write_floor_toml(path: str, floors: dict[str, float], measured_on: str, how: str, runs: list[str],
                      reports: list[str] = (), machines: dict[str, dict[str, float]] | None = None) -> None:
    lines = [
        "# Between-run floors (floors.py): per spread group, family and memory kind, and family, the 90th",
        "# percentile over its cases of the relative standard deviation, in percent, of one round's headline",
        f"# between processes on one machine; {how}",
        f"measured_on = {json.dumps(measured_on)}",
        f"runs = {json.dumps(runs)}",
    ]
    if reports:
        lines.append(f"reports = {json.dumps(list(reports))}")
    lines += ["", "[floor_pct]", *_toml_table(floors)]
    for gpu, table in sorted((machines or {}).items()):
        lines += ["", f"[machine.{json.dumps(gpu)}.floor_pct]", *_toml_table(table)]
    with open(path, "w") as out:
        out.write("\n".join(lines) + "\n")


def write_floor(r: Report, path: str) -> None:
    """The floors as TOML, with where they were measured: one machine's, so both its GPU model's and every
    model's table."""
    _write_floor_toml(path, r.floors, f"{r.gpu}, {len(r.runs)} runs of gpu_bench {r.revision}",
                      "written by gpu-bench-aa report --floor from the runs named below.", r.runs,
                      machines={r.gpu: r.floors})


def _report_floors(path: str) -> dict:
    """A report gpu-bench-aa report --json wrote, checked for what merge_floors needs."""
    doc = read_json(path)
    floors = doc.get("floors") if isinstance(doc, dict) else None
    if not isinstance(floors, dict) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 for v in floors.values()) or \
            not isinstance(doc.get("runs"), list):
        raise InputError(f"{path}: not an A/A report with floors (gpu-bench-aa report --json writes one)")
    if doc.get("one_machine") is False:
        raise InputError(f"{path}: its runs were on several GPUs; a floor is one machine's spread between its "
                         "own runs")
    return doc


def merge_floors(report_paths: list[str], path: str, measured_on: str | None = None) -> dict[str, float]:
    """Writes, as TOML, each floor the larger over several machines' A/A reports: a table per GPU model (the
    larger over its reports) and one over every model, for a GPU model none measured; returns the latter.
    `measured_on`: where they were measured, in place of each report's GPU, runs and revision (a revision
    that gpu_bench read from a stale checkout, say)."""
    docs = [_report_floors(p) for p in report_paths]
    merged: dict[str, float] = {}
    machines: dict[str, dict[str, float]] = {}
    for doc in docs:
        own = machines.setdefault(str(doc.get("gpu") or "a GPU"), {})
        for key, v in doc["floors"].items():
            merged[key] = max(merged.get(key, 0.0), float(v))
            own[key] = max(own.get(key, 0.0), float(v))
    about = "; ".join(f"{d.get('gpu', 'a GPU')}, {len(d['runs'])} runs of gpu_bench {d.get('revision', 'unknown')}"
                      for d in docs)
    _write_floor_toml(path, merged, measured_on or f"the larger of each floor over: {about}",
                      "written by gpu-bench-aa floors from the A/A reports named below: each GPU model's table the "
                      "larger of each floor over its reports, [floor_pct] the larger over all.",
                      [r for d in docs for r in d["runs"]], report_paths, machines)
    return merged
