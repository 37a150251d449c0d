"""Google Benchmark JSON into what a benchmark file holds (results.py), checked on the way: anything
unusable becomes one InputError line a person can act on.

A benchmark file is Google Benchmark JSON, optionally with gpu_bench's context facts (docs/json.md).
"""

from __future__ import annotations

import math
import os
from typing import Any, Iterable

from .errors import InputError
from .files import converted, read_json
from .names import parse_name
from .results import BenchmarkFile
from .cases import ROUND_CENTERS, TIME_UNIT_NS, Case, Sample
from .timeline import is_timeline

KNOWN_SCHEMAS = ("1", "2")
KNOWN_GB_JSON_SCHEMAS = (1,)
# Aggregates Google Benchmark writes that carry no time figure.
COMPLEXITY_AGGREGATES = ("BigO", "RMS")
_NOT_COUNTERS = frozenset(
    {
        "name", "run_name", "run_type", "family_index", "per_family_instance_index", "repetitions",
        "repetition_index", "threads", "iterations", "real_time", "cpu_time", "time_unit",
        "aggregate_name", "aggregate_unit", "error_occurred", "error_message", "skipped", "skip_message",
        "label", "sample_times_s", "round_times_s", "round_prior_sd", "round_prior_dof",
        # what the run cost in wall time, and how much of it went into sampling and calibrations: about the
        # tool, not the GPU
        "wall_s", "sampling_wall_s", "calibration_wall_s",
    }
)



def benchmark_file_from_doc(path: str | os.PathLike, doc: Any, require_figures: bool = True) -> BenchmarkFile:
    """Check and convert a parsed document; anything unusable raises InputError with one line.

    require_figures: refuse a file in which no case has a figure (every case failed or was skipped).
    """
    f = converted(path, doc, _benchmark_file_from_doc, "not Google Benchmark output")
    if require_figures and not f.ok_cases():
        first = next(iter(f.cases.values()))
        raise InputError(f"{path}: no case has a figure ({len(f.cases)} case(s), every one failed or was skipped; "
                         f"{first.key}: {first.problem})")
    return f


def _benchmark_file_from_doc(path: str, doc: Any) -> BenchmarkFile:
    if is_timeline(doc):
        raise InputError(f"{path}: a Chrome trace (such as a --timeline file), not benchmark results")
    if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list):
        raise InputError(f"{path}: not Google Benchmark output (no 'benchmarks' list)")
    ctx = doc.get("context")
    if not isinstance(ctx, dict):
        raise InputError(f"{path}: not Google Benchmark output (no 'context' object)")
    gb_schema = ctx.get("json_schema_version")
    if gb_schema is not None and gb_schema not in KNOWN_GB_JSON_SCHEMAS:
        raise InputError(f"{path}: Google Benchmark json_schema_version {gb_schema!r} is not one these tools read")
    schema = ctx.get("gpu_bench.schema")
    if schema is not None:
        schema = str(schema)
        if schema not in KNOWN_SCHEMAS:
            raise InputError(
                f"{path}: gpu_bench.schema {schema!r} is unknown (these tools read {', '.join(KNOWN_SCHEMAS)}); "
                "update gpu_bench_tools"
            )
    entries = doc["benchmarks"]
    if not entries:
        raise InputError(f"{path}: no benchmarks in the file (was the filter empty?)")

    cases: dict[str, Case] = {}
    seen: set[tuple] = set()
    numbers = (int, float)  # exact types: a JSON true/false is a bool, never a figure
    for i, e in enumerate(entries):
        where = f"{path}: benchmarks[{i}]"
        if type(e) is not dict or type(e.get("name")) is not str or not e["name"]:
            raise InputError(f"{where} has no name: not Google Benchmark output")
        run_type = e.get("run_type", "iteration")
        agg_name = e.get("aggregate_name")
        if run_type == "aggregate":
            if type(agg_name) is not str:
                raise InputError(f"{where}: aggregate without 'aggregate_name'")
            if agg_name in COMPLEXITY_AGGREGATES:
                continue
        elif run_type != "iteration":
            raise InputError(f"{where}: unknown run_type {run_type!r}")
        run_name = e.get("run_name")
        if type(run_name) is not str or not run_name:
            run_name = e["name"]
            if run_type == "aggregate" and run_name.endswith("_" + agg_name):
                run_name = run_name[: -len(agg_name) - 1]
        rep = e.get("repetition_index")
        ident = (run_name, agg_name) if run_type == "aggregate" else (run_name, rep) if type(rep) is int else None
        if ident is not None:
            if ident in seen:
                what = f"aggregate {agg_name!r}" if run_type == "aggregate" else f"repetition {rep}"
                raise InputError(f"{where}: a second {what} of {run_name}: two runs in one file? "
                                 "(give each run its own file)")
            seen.add(ident)
        cn = parse_name(run_name)
        case = cases.get(cn.key)
        time_unit = e.get("time_unit", "ns")
        if type(time_unit) is not str or time_unit not in TIME_UNIT_NS:
            raise InputError(f"{where}: unknown time_unit {time_unit!r}")
        if case is None:
            case = cases[cn.key] = Case(cn.key, cn, time_unit)
        label = e.get("label")
        if label and type(label) is str:
            case.label = label
        if e.get("error_occurred") is True:
            case.errors.append(str(e.get("error_message") or "error without a message"))
            continue
        if e.get("skipped") is True:
            case.skips.append(str(e.get("skip_message") or "skipped"))
            continue
        real = e.get("real_time")
        cpu = e.get("cpu_time", 0.0)
        if type(real) not in numbers or type(cpu) not in numbers:
            bad = "real_time" if type(real) not in numbers else "cpu_time"
            raise InputError(f"{where}: '{bad}' is not a number")
        if real < 0 or cpu < 0:
            bad, v = ("real_time", real) if real < 0 else ("cpu_time", cpu)
            raise InputError(f"{where}: '{bad}' is negative ({v}): not a time")
        if time_unit != case.time_unit and not (run_type == "aggregate" and e.get("aggregate_unit") == "percentage"):
            f = TIME_UNIT_NS[time_unit] / TIME_UNIT_NS[case.time_unit]
            real, cpu = real * f, cpu * f
        counters = {k: float(v) for k, v in e.items() if type(v) in numbers and k not in _NOT_COUNTERS}
        if run_type == "aggregate":
            counters["real_time"] = float(real)
            counters["cpu_time"] = float(cpu)
            case.aggregates[agg_name] = counters
            case.aggregate_units[agg_name] = str(e.get("aggregate_unit", "time"))
            continue
        if not math.isfinite(real):
            case.errors.append(f"real_time is {real}")
            case.non_finite = "real_time"
            continue
        times = e.get("sample_times_s")
        if times is not None:
            if type(times) is not list or not all(type(t) in numbers and math.isfinite(t) and t > 0 for t in times):
                raise InputError(f"{where}: 'sample_times_s' is not a list of positive numbers of seconds")
            times = [float(t) for t in times] or None
        rounds = e.get("round_times_s")
        if rounds is not None:
            if type(rounds) is not list or not all(type(t) in numbers and math.isfinite(t) and t > 0 for t in rounds):
                raise InputError(f"{where}: 'round_times_s' is not a list of positive numbers of seconds")
            rounds = [float(t) for t in rounds] or None
        prior = None
        if "round_prior_sd" in e or "round_prior_dof" in e:
            sd, dof = e.get("round_prior_sd"), e.get("round_prior_dof")
            if not (type(sd) in numbers and type(dof) in numbers and math.isfinite(sd) and math.isfinite(dof)
                    and sd >= 0 and dof >= 0):
                raise InputError(f"{where}: 'round_prior_sd' and 'round_prior_dof' are not two non-negative numbers")
            prior = (float(sd), float(dof))
        if type(rep) is not int:
            rep = len(case.samples)
        iters = e.get("iterations", 0)
        iters = int(iters) if type(iters) in numbers and math.isfinite(iters) else 0
        case.samples.append(Sample(rep, float(real), float(cpu), iters, counters, times, rounds, prior))
    if not cases:
        raise InputError(f"{path}: no benchmarks in the file")
    center = str(ctx.get("gpu_bench.round_center", "mean"))
    if center not in ROUND_CENTERS:
        raise InputError(f"{path}: gpu_bench.round_center is {center!r}, not one of {', '.join(ROUND_CENTERS)}")
    for case in cases.values():
        case.round_center = center
    out = BenchmarkFile(path, ctx, cases, schema)
    out.families  # a schema 2 file's descriptors are checked here, with the rest of the file
    return out


def load_file(path: str | os.PathLike, require_figures: bool = True) -> BenchmarkFile:
    """Load one benchmark JSON file or raise InputError with one line saying what is wrong."""
    return benchmark_file_from_doc(path, read_json(path), require_figures)


def load_files(paths: Iterable[str | os.PathLike]) -> list[BenchmarkFile]:
    return [load_file(p) for p in paths]
