"""Nightly history: ingest runs, and check the newest run of each machine against its series.

A machine is its host and all the GPUs of that host (UUIDs), whichever of them a run measured: a run of GPU 0
alone and a run of every GPU of a node are runs of one machine. A series is one machine in one configuration:
driver, CUDA versions, gate and NUMA facts; the newest run is judged against the earlier runs of its own
series only, and each case against those whose facts of what it ran on are the newest run's (case_facts):
the host link and NUMA node of its GPU and, for a host-side figure, the host's CPU. Each case is judged
against its own earlier nights (check.py): the newest nights' figures against a prediction interval from
the spread of that case's figures between the nights before them, and the change must also be at least
--threshold. A change is attributed to the first run of its new level, with what changed in the context
there. When the newest run starts a new configuration, it is compared with the runs of the configuration
before and those differences are listed as what the configuration change did.

Every SQL statement is in store.py (SQLite or PostgreSQL). Each ingest is one transaction: all files or none.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import re
import statistics
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import cached_property
from pathlib import Path
from typing import Iterable, Iterator

from . import store
from ..reading.facts import SETTING_FACTS, gate, gpu_label, host_cpu
from ..reading.families import host_side_rules, machine_variance_rules, revision_rules, rule_matches, way_of
from ..reading.load import (
    TIME_UNIT_NS,
    BenchmarkFile,
    Case,
    InputError,
    benchmark_file_from_doc,
    canonical_metric,
    higher_is_better,
    metric_unit,
    parse_name,
    read_json,
)
from ..reading.multigpu import described_gpu, first_gpu_facts_note, gpu_count, gpu_fact, gpu_summary, node_uuids

# Context keys that change from run to run by nature; they never explain a change.
VOLATILE_FACTS = frozenset({"date", "load_avg", "gpu_bench.elapsed_s", "gpu_bench.timed_s", "executable",
                            "mhz_per_cpu", "gpu.other_processes", "caches", "host.uptime_s",
                            "host.clock_read_ns", "gpu_bench.calibration_timed_s", "gpu_bench.round_processes",
                            "gpu_bench.round_host", "gpu_bench.start_s", "gpu_bench.cpu_moves"})
# ... and each GPU's link error counters at the run's start and end (gpu.N.errors.*), which only ever grow.
_VOLATILE_KEY = re.compile(r"^gpu\.\d+\.errors\.")


def is_volatile_fact(key: str) -> bool:
    """Whether a context key changes from run to run by nature, so that it never explains a change."""
    return key in VOLATILE_FACTS or bool(_VOLATILE_KEY.match(key))


def default_db_path() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "gpu_bench" / "history.sqlite"


# ---------------------------------------------------------------------------------------------
# ingest


@dataclass
class Machine:
    fingerprint: str
    host: str | None
    gpu_uuids: str
    gpu_label: str

    @property
    def label(self) -> str:
        first = self.gpu_uuids.split(",")[0]
        return f"{self.gpu_label} [{first[:12] or '?'}] on {self.host or '?'}"


def machine_of(f: BenchmarkFile) -> Machine:
    """The machine a run belongs to: its host and every GPU of it, whichever GPUs the run measured."""
    if not f.is_gpu_bench:
        raise InputError(f"{f.path}: plain Google Benchmark JSON; history needs gpu_bench's GPU facts")
    uuids = node_uuids(f)
    name = ((gpu_count(f) or 1) > 1 and gpu_summary(f, whole_node=True)) or gpu_label(f)
    if not uuids and not name:
        raise InputError(f"{f.path}: neither gpu.uuid nor gpu.name is known, so the machine cannot be told")
    ids = ",".join(uuids) or f"{f.fact('gpu.name')}@{f.fact('gpu.pci_bus_id') or '?'}"
    host = f.fact("host_name")
    return Machine(f"{host or '?'}|{ids}", host, ids, name or "GPU")


def series_facts(f: BenchmarkFile) -> dict[str, str | None]:
    """What a series is keyed on besides the machine: driver, CUDA versions, the settings (gate, NUMA, the
    thread's CPU policy, a filter) and, on a node of several GPUs, which of them the run measured (a run of GPU
    0 names its cases without /device:0)."""
    facts = {"driver": f.fact("driver.version"), "CUDA": f.fact("driver.cuda_version"),
             "CUDA runtime": f.fact("runtime.version"), "gate": gate(f)}
    facts.update({k: f.fact(k) for k in SETTING_FACTS if k != "gpu_bench.gate"})
    if (gpu_count(f) or 1) > 1:
        facts["GPUs measured"] = f.fact("gpu_bench.device") or "all"
    # A run of part of the matrix: its rounds hold other cases than the preset's, so its figures are a series
    # of their own. Only where there is a filter, so an unfiltered run stays in the series it was in.
    if f.chosen_filter:
        facts["filter"] = f.chosen_filter
    return facts


def series_text(facts: dict[str, str | None]) -> str:
    head = f"driver {facts.get('driver') or '?'}, CUDA {facts.get('CUDA') or '?'}"
    if facts.get("CUDA runtime") and facts.get("CUDA runtime") != facts.get("CUDA"):
        head += f" (runtime {facts['CUDA runtime']})"
    if facts.get("gate") == "off":
        head += ", gate off"
    return head


def series_change(before: dict, after: dict) -> str:
    """'driver 570.86.15 -> 580.159.04, CUDA runtime 12.8 -> 13.0': only what differs."""
    parts = [f"{k} {before.get(k) or '?'} -> {after.get(k) or '?'}" for k in after if before.get(k) != after.get(k)]
    return ", ".join(parts) or "nothing"


def parse_run_time(f: BenchmarkFile) -> str:
    """The run's date from the context, as UTC ISO-8601 (sortable as text)."""
    raw = str(f.context.get("date", "")).strip()
    try:
        dt = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise InputError(f"{f.path}: context 'date' {raw!r} is not a date") from None
    if dt.tzinfo is None:
        dt = dt.astimezone()  # Google Benchmark wrote local time without an offset
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S+00:00")


@dataclass
class _Prepared:
    path: str
    file: BenchmarkFile
    sha256: str
    machine: Machine
    run_time: str


def _prepare(path: str | os.PathLike) -> _Prepared:
    doc = read_json(path)
    f = benchmark_file_from_doc(path, doc, require_figures=False)  # a night where every case failed counts
    return _prepared(str(path), f, _sha256(doc))


def _sha256(content) -> str:
    canon = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()


def _prepared(path: str, f: BenchmarkFile, sha: str) -> _Prepared:
    return _Prepared(path, f, sha, machine_of(f), parse_run_time(f))


@dataclass
class IngestResult:
    added: list[tuple[str, str, str]] = field(default_factory=list)  # path, machine label, run time
    already: list[str] = field(default_factory=list)
    rows: int = 0
    notes: list[str] = field(default_factory=list)


@dataclass
class Figure:
    """One case's figure in one run: the family's headline (its median over repetitions) or why there is none."""

    case: Case
    metric: str
    unit: str
    better: str
    value: float | None
    reps: list[float]
    noise_pct: float | None
    error: str | None


def figures(f: BenchmarkFile) -> Iterator[Figure]:
    """Each case's headline per repetition in its unit, their median, the noise gpu_bench wrote, or the error."""
    for c in f.cases.values():
        d = f.descriptor(c.family)
        metric = d.headline
        unit = d.unit or (c.time_unit if metric == "real_time" else metric_unit(metric, c.time_unit))
        scale = 1.0
        if metric == "real_time" and unit in TIME_UNIT_NS:
            scale = TIME_UNIT_NS[c.time_unit] / TIME_UNIT_NS[unit]
        reps = [v * scale for v in c.values(metric)]
        value = statistics.median(reps) if reps else None
        if value is None and c.ok:
            agg = c.center(metric)
            value = agg * scale if agg is not None else None
        error = None if value is not None else (c.problem or f"no '{metric}' counter")
        # noise_pct is the interval of the case's time, so it speaks for a headline that follows from that time
        # (a rate or a time); a headline of another kind (HostBlocking's host time, the last round's alone)
        # has no interval of its own, and its nights' spread must judge it.
        noise = c.written_noise_pct() if metric == "real_time" or d.headline_kind in ("rate", "time") else None
        yield Figure(c, metric, unit, d.better, value, reps, noise, error)


def result_rows(f: BenchmarkFile, case_id: dict[str, int], run_id: int) -> list[tuple]:
    """One results row per case: the headline per repetition in its unit, their median, noise, counters."""
    out = []
    for g in figures(f):
        c = g.case
        counters = json.dumps([dict(s.counters, real_time=s.real_time, cpu_time=s.cpu_time) for s in c.samples]) \
            if c.samples else None
        out.append((run_id, case_id[c.key], g.metric, g.unit, g.better, g.value, json.dumps(g.reps),
                    g.noise_pct, c.time_unit, counters, g.error))
    return out


def _insert_results(conn, run_id: int, f: BenchmarkFile, case_id: dict[str, int]) -> int:
    rows = result_rows(f, case_id, run_id)
    store.add_results(conn, rows)
    return len(rows)


def _add(conn, prepared: list[_Prepared], now: str) -> IngestResult:
    """One transaction's work. Rows another writer may add at the same time are taken table by table in a
    fixed order (machines, series, runs, case names; each sorted): two ingests then never wait on each other
    in a cycle. A run another writer added first, even while this one ran, counts as already present."""
    result = IngestResult()
    present = store.present_runs(conn, (p.sha256 for p in prepared))
    todo: dict[str, _Prepared] = {}
    for p in prepared:
        if p.sha256 in present or p.sha256 in todo:
            result.already.append(p.path)
        else:
            todo[p.sha256] = p
    mids = store.machine_ids(conn, ((p.machine.fingerprint, p.machine.host, p.machine.gpu_uuids, p.machine.gpu_label)
                                    for p in todo.values()))
    facts = {sha: json.dumps(series_facts(p.file), sort_keys=True) for sha, p in todo.items()}
    sids = store.series_ids(conn, ((mids[p.machine.fingerprint], facts[sha]) for sha, p in todo.items()))
    run_ids = {}
    for sha in sorted(todo):
        p = todo[sha]
        mid = mids[p.machine.fingerprint]
        rid = store.add_run(conn, mid, sids[(mid, facts[sha])], sha, p.run_time, now, p.file.fact("gpu_bench.git"),
                            os.path.abspath(p.path), json.dumps(p.file.context, sort_keys=True))
        if rid is None:
            result.already.append(p.path)
        else:
            run_ids[sha] = rid
    ids = store.case_ids(conn, {c.key: c.family for sha in run_ids for c in todo[sha].file.cases.values()})
    for sha, p in todo.items():  # in the order given, for the report
        if sha in run_ids:
            result.rows += _insert_results(conn, run_ids[sha], p.file, ids)
            result.added.append((p.path, p.machine.label, p.run_time))
    return result


def ingest(db, paths: Iterable[str | os.PathLike]) -> IngestResult:
    """Add runs; a file already present (same content) adds nothing. All files of one call, or none, are added.

    `db` is an SQLite path or a database URL (dburl.py). Every file is read and checked before the database
    is touched.
    """
    return _ingest(db, [_prepare(p) for p in paths])


def ingest_files(db, files: Iterable[BenchmarkFile]) -> IngestResult:
    """Add runs already read (made or changed in memory), each identified by its whole content."""
    return _ingest(db, [_prepared(f.path, f, _sha256(dataclasses.asdict(f))) for f in files])


def _ingest(db, prepared: list[_Prepared]) -> IngestResult:
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S+00:00")
    with store.session(db, create=True) as conn:
        result = store.write(conn, lambda c: _add(c, prepared, now))
    note = first_gpu_facts_note([p.file for p in prepared])
    result.notes = [note] if note else []
    return result


def record_check_error(db, host: str, preset: str, reason: str) -> str:
    """Keep a check that could not judge its node (a tool missing, no results, a timeout): it has no run to
    ingest, yet the history must show the night. Returns the time recorded (UTC, as run times are)."""
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S+00:00")
    reason = " ".join(reason.split()) or "no reason given"
    with store.session(db, create=True) as conn:
        store.write(conn, lambda c: store.add_check_error(c, host, preset, now, reason))
    return now


# ---------------------------------------------------------------------------------------------
# reading back


@dataclass
class Run:
    id: int
    series_id: int
    facts: dict
    run_time: str
    git: str | None
    context: dict

    def env_text(self) -> str:
        return series_text(self.facts)

    @cached_property
    def file(self) -> BenchmarkFile:
        """The run's context as a file without cases, for the functions that read facts."""
        return BenchmarkFile(f"run {self.id}", self.context, {}, str(self.context.get("gpu_bench.schema") or "") or None)

    @cached_property
    def host_side(self) -> dict[str, str]:
        """Family name -> which of its cases' figures are the host's (the family's host_side rule)."""
        return host_side_rules(self.context)

    @cached_property
    def machine_variance(self) -> dict[str, tuple[str, str]]:
        """Family name -> (machine_variance rule, machine_variance_cause), where the family's descriptor names
        the machine's own cause of its cases' spread. Read from those keys alone, as host_side: a check never
        fails on a part of a stored descriptor it does not use."""
        return machine_variance_rules(self.context)

    @cached_property
    def revisions(self) -> dict[str, tuple[tuple[int, str], ...]]:
        """Family name -> which of its cases this run's gpu_bench measured in a later way (revision_rules)."""
        return revision_rules(self.context)

    def machine_cause(self, family: str, case: str) -> str | None:
        """What the case varies with between processes that gpu_bench cannot remove, by its family's descriptor
        in this run (FamilyDescriptor.machine_cause); None where it names no cause for the case."""
        rule, cause = self.machine_variance.get(family, ("no", ""))
        return cause if cause and rule_matches(rule, case) else None


def case_facts(run: Run, case: str) -> tuple[str | None, ...]:
    """What a case's figure in `run` depends on besides the run's series: the host link and NUMA node of the
    GPU it ran on (its device, or the source of a pair), the way gpu_bench measured it (FamilyDescriptor.way)
    and, where the figure is the host's, the host's CPU."""
    name = parse_name(case)
    where = name.axis("device") or name.axis("src")
    gpu = int(where) if where is not None and where.isdigit() else described_gpu(run.file)
    facts = (gpu_fact(run.file, gpu, "profile.host_link"), gpu_fact(run.file, gpu, "numa_node"),
             str(way_of(run.revisions.get(name.family, ()), case)))
    if rule_matches(run.host_side.get(name.family, "no"), case):
        facts += (host_cpu(run.file),)
    return facts


def same_case_facts(a: tuple[str | None, ...], b: tuple[str | None, ...]) -> bool:
    """Whether two runs' facts of a case agree; a fact one of them does not know (an older file) does not part
    them."""
    return len(a) == len(b) and all(x is None or y is None or x == y for x, y in zip(a, b))


def machines(conn) -> dict[int, Machine]:
    return {r[0]: Machine(*r[1:]) for r in store.machines(conn)}


def runs_of(conn, machine_id: int) -> list[Run]:
    return [Run(i, s, json.loads(fj), t, g, json.loads(cj)) for i, s, fj, t, g, cj in store.runs_of(conn, machine_id)]


@dataclass
class Point:
    """One run's figure of one case."""

    run: Run
    value: float
    reps: list[float]
    noise_pct: float | None  # as gpu_bench wrote it


@dataclass
class CaseSeries:
    name: str
    family: str
    metric: str
    unit: str
    higher_is_better: bool
    points: list[Point] = field(default_factory=list)
    errors: dict[int, str] = field(default_factory=dict)  # run id -> error


def _metric_value(metric: str, counters_json: str | None, time_unit: str | None) -> tuple[float | None, list[float]]:
    """(median, per repetition) of a counter other than the headline, from the stored counters."""
    if not counters_json:
        return None, []
    m = canonical_metric(metric)
    reps = [r.get(m) for r in json.loads(counters_json)]
    reps = [float(v) for v in reps if isinstance(v, (int, float)) and math.isfinite(v)]
    return (statistics.median(reps) if reps else None), reps


def load_series(conn, runs: list[Run], metric: str | None, rx: re.Pattern | None) -> dict[str, CaseSeries]:
    """Every case's figures over the given runs (oldest first), on its headline or on `metric`."""
    names = store.cases(conn)
    position = {r.id: i for i, r in enumerate(runs)}
    out: dict[str, CaseSeries] = {}
    rows = store.results_of(conn, [r.id for r in runs], with_counters=bool(metric))
    rows.sort(key=lambda row: position[row[0]])
    for run_id, case_id, headline, unit, better, value, reps_json, noise, time_unit, counters, error in rows:
        name, family = names[case_id]
        if rx and not rx.search(name):
            continue
        s = out.get(name)
        m = canonical_metric(metric) if metric else headline
        if s is None:
            if metric and m != headline:
                unit, hib = metric_unit(m, time_unit or "ns"), higher_is_better(m)
            else:
                hib = better == "higher"
            s = out[name] = CaseSeries(name, family, m, unit or "", hib)
        if error:
            s.errors[run_id] = error
            continue
        if metric and m != headline:
            value, reps = _metric_value(m, counters, time_unit)
            noise = None
        else:
            reps = json.loads(reps_json) if reps_json else []
        if value is not None and math.isfinite(value):
            s.points.append(Point(runs[position[run_id]], value, reps, noise))
    return out


def known_metrics(conn, runs: list[Run]) -> list[str]:
    """Headlines and counters the runs have, for an error message."""
    found = {"time"}
    for row in store.results_of(conn, [r.id for r in runs], with_counters=True):
        found.add(row[2])
        if row[9]:
            for rep in json.loads(row[9])[:1]:
                found.update(rep)
    return sorted(found - {"real_time"})


__all__ = ["case_facts", "same_case_facts", "default_db_path", "ingest", "ingest_files", "load_series", "machines",
           "runs_of", "store"]
