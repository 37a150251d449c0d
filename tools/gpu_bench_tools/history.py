"""Nightly history in SQLite: ingest runs, check the newest run of each machine against its past, plot trends.

A machine is its host and its GPU (UUID, or name and PCI bus where the UUID is unavailable).  Driver,
CUDA and the gpu_bench build are facts of each run, so a driver update shows as a change on the same
machine instead of a new machine.  Each ingest is one transaction: all files or none.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from statistics import median
from typing import Iterable

from .load import (
    TIME_UNIT_NS,
    BenchmarkFile,
    InputError,
    benchmark_file_from_doc,
    canonical_metric,
    higher_is_better,
    metric_unit,
    read_json,
    short_gpu_name,
)

SCHEMA_VERSION = "1"

DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS machines (
    id INTEGER PRIMARY KEY,
    fingerprint TEXT NOT NULL UNIQUE,
    host TEXT, gpu_uuid TEXT, gpu_name TEXT, pci_bus_id TEXT
);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    machine_id INTEGER NOT NULL REFERENCES machines(id),
    content_sha256 TEXT NOT NULL UNIQUE,
    run_time TEXT NOT NULL,
    ingested_at TEXT NOT NULL,
    driver TEXT, cuda TEXT, runtime TEXT,
    gpu_bench_version TEXT, gpu_bench_git TEXT, benchmark_version TEXT,
    source TEXT, context_json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_by_machine ON runs (machine_id, run_time);
CREATE TABLE IF NOT EXISTS results (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    case_name TEXT NOT NULL,
    family TEXT NOT NULL,
    repetition INTEGER NOT NULL,
    kind TEXT NOT NULL,
    real_time REAL, cpu_time REAL, time_unit TEXT, iterations INTEGER,
    counters_json TEXT, error TEXT,
    PRIMARY KEY (run_id, case_name, repetition)
);
CREATE INDEX IF NOT EXISTS results_by_case ON results (case_name);
"""


def default_db_path() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "gpu_bench" / "history.sqlite"


# ---------------------------------------------------------------------------------------------
# opening


def open_db(path: str | os.PathLike, create: bool) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit); refuses what is not our database."""
    p = Path(path)
    if p.is_dir():
        raise InputError(f"{p}: is a directory, not a history database")
    if not create and not p.exists():
        raise InputError(f"{p}: no history database here; run 'gpu-bench-history ingest FILE...' first")
    if create:
        p.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(p), isolation_level=None)
    else:
        conn = sqlite3.connect(f"file:{p.resolve()}?mode=ro", uri=True, isolation_level=None)
    try:
        conn.execute("PRAGMA foreign_keys = ON")
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if tables and "meta" not in tables:
            raise InputError(f"{p}: an SQLite database, but not a gpu-bench-history one")
        if "meta" in tables:
            row = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
            if not row or row[0] != SCHEMA_VERSION:
                raise InputError(f"{p}: history schema {row[0] if row else '?'} is not {SCHEMA_VERSION}")
        elif create:
            conn.execute("BEGIN IMMEDIATE")
            for stmt in DDL.strip().split(";"):
                if stmt.strip():
                    conn.execute(stmt)
            conn.execute("INSERT INTO meta (key, value) VALUES ('schema', ?)", (SCHEMA_VERSION,))
            conn.execute("COMMIT")
        else:
            raise InputError(f"{p}: empty history database; ingest some runs first")
    except sqlite3.DatabaseError as e:
        conn.close()
        raise InputError(f"{p}: not a history database ({e})") from None
    except InputError:
        conn.close()
        raise
    return conn


# ---------------------------------------------------------------------------------------------
# ingest


@dataclass
class Machine:
    fingerprint: str
    host: str | None
    gpu_uuid: str | None
    gpu_name: str | None
    pci_bus_id: str | None

    @property
    def label(self) -> str:
        name = short_gpu_name(self.gpu_name or "GPU")
        ident = (self.gpu_uuid or "")[:12] or self.pci_bus_id or "?"
        return f"{name} [{ident}] on {self.host or '?'}"


def machine_of(f: BenchmarkFile) -> Machine:
    uuid, name = f.fact("gpu.uuid"), f.fact("gpu.name")
    host, pci = f.fact("host_name"), f.fact("gpu.pci_bus_id")
    if not f.is_gpu_bench:
        raise InputError(f"{f.path}: plain Google Benchmark JSON; history needs gpu_bench's GPU facts")
    if not uuid and not name:
        raise InputError(f"{f.path}: neither gpu.uuid nor gpu.name is known, so the machine cannot be told")
    gpu = uuid or f"{name}@{pci or '?'}"
    return Machine(f"{host or '?'}|{gpu}", host, uuid, name, pci)


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
    f = benchmark_file_from_doc(path, doc, require_figures=False)
    canon = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    sha = hashlib.sha256(canon.encode("utf-8")).hexdigest()
    return _Prepared(str(path), f, sha, machine_of(f), parse_run_time(f))


@dataclass
class IngestResult:
    added: list[tuple[str, str, str]] = field(default_factory=list)  # path, machine label, run time
    already: list[str] = field(default_factory=list)
    rows: int = 0


def _result_rows(run_id: int, f: BenchmarkFile) -> Iterable[tuple]:
    for c in f.cases.values():
        if c.samples:
            for i, s in enumerate(c.samples):
                yield (run_id, c.key, c.family, i, "repetition", s.real_time, s.cpu_time, c.time_unit, s.iterations,
                       json.dumps(s.counters), None)
        elif c.ok:
            agg = c.aggregates.get("median") or c.aggregates["mean"]
            counters = {k: v for k, v in agg.items() if k not in ("real_time", "cpu_time")}
            yield (run_id, c.key, c.family, -1, "aggregate", agg.get("real_time"), agg.get("cpu_time"), c.time_unit,
                   None, json.dumps(counters), None)
        else:
            yield (run_id, c.key, c.family, -1, "error", None, None, c.time_unit, None, None, c.problem)


def _insert_results(conn: sqlite3.Connection, run_id: int, f: BenchmarkFile) -> int:
    rows = list(_result_rows(run_id, f))
    conn.executemany("INSERT INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    return len(rows)


def ingest(db: str | os.PathLike, paths: Iterable[str | os.PathLike]) -> IngestResult:
    """Add runs; a file already present (same content) adds nothing.  All files or none are added."""
    prepared = [_prepare(p) for p in paths]  # every file is read and checked before the database is touched
    conn = open_db(db, create=True)
    result = IngestResult()
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S+00:00")
    try:
        conn.execute("BEGIN IMMEDIATE")
        for p in prepared:
            if conn.execute("SELECT 1 FROM runs WHERE content_sha256 = ?", (p.sha256,)).fetchone():
                result.already.append(p.path)
                continue
            m = p.machine
            conn.execute(
                "INSERT OR IGNORE INTO machines (fingerprint, host, gpu_uuid, gpu_name, pci_bus_id) VALUES (?,?,?,?,?)",
                (m.fingerprint, m.host, m.gpu_uuid, m.gpu_name, m.pci_bus_id),
            )
            (machine_id,) = conn.execute("SELECT id FROM machines WHERE fingerprint = ?", (m.fingerprint,)).fetchone()
            f = p.file
            cur = conn.execute(
                "INSERT INTO runs (machine_id, content_sha256, run_time, ingested_at, driver, cuda, runtime, "
                "gpu_bench_version, gpu_bench_git, benchmark_version, source, context_json) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (machine_id, p.sha256, p.run_time, now, f.fact("driver.version"), f.fact("driver.cuda_version"),
                 f.fact("runtime.version"), f.fact("gpu_bench.version"), f.fact("gpu_bench.git"),
                 f.fact("benchmark.version") or f.fact("library_version"), os.path.abspath(p.path),
                 json.dumps(f.context, sort_keys=True)),
            )
            result.rows += _insert_results(conn, cur.lastrowid, f)
            result.added.append((p.path, m.label, p.run_time))
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    finally:
        conn.close()
    return result


# ---------------------------------------------------------------------------------------------
# reading back


@dataclass
class Run:
    id: int
    machine_id: int
    run_time: str
    driver: str | None
    cuda: str | None
    runtime: str | None
    git: str | None

    @property
    def env(self) -> tuple:
        return (self.driver, self.cuda, self.runtime)

    def env_text(self) -> str:
        return f"driver {self.driver or '?'}, CUDA {self.cuda or '?'}"


def machines(conn: sqlite3.Connection) -> dict[int, Machine]:
    return {r[0]: Machine(*r[1:]) for r in conn.execute(
        "SELECT id, fingerprint, host, gpu_uuid, gpu_name, pci_bus_id FROM machines ORDER BY id")}


def runs_of(conn: sqlite3.Connection, machine_id: int) -> list[Run]:
    return [Run(*r) for r in conn.execute(
        "SELECT id, machine_id, run_time, driver, cuda, runtime, gpu_bench_git FROM runs WHERE machine_id = ? "
        "ORDER BY run_time, id", (machine_id,))]


def _value(metric: str, real_time, time_unit, counters_json) -> float | None:
    m = canonical_metric(metric)
    if m == "real_time":
        if real_time is None:
            return None
        return float(real_time) * TIME_UNIT_NS.get(time_unit or "ns", 1.0)  # ns
    if counters_json is None:
        return None
    v = json.loads(counters_json).get(m)
    return float(v) if isinstance(v, (int, float)) and math.isfinite(v) else None


@dataclass
class _CaseData:
    family: str
    metric: str
    unit: str = "ns"
    values: dict[int, list[float]] = field(default_factory=dict)  # run id -> values
    errors: dict[int, str] = field(default_factory=dict)


def _load_cases(conn, run_ids: list[int], metric: str | None, rx: re.Pattern | None) -> dict[str, _CaseData]:
    out: dict[str, _CaseData] = {}
    if not run_ids:
        return out
    marks = ",".join("?" * len(run_ids))
    q = (f"SELECT run_id, case_name, family, real_time, time_unit, counters_json, error FROM results "
         f"WHERE run_id IN ({marks}) ORDER BY run_id, case_name, repetition")
    for run_id, case, family, real_time, unit, counters, error in conn.execute(q, run_ids):
        if rx and not rx.search(case):
            continue
        d = out.get(case)
        if d is None:
            # Without a --metric, a case is judged on its bandwidth where it has one (as a file without
            # family descriptors is read), else on its time.
            d = out[case] = _CaseData(family, metric or "gbps")
        if error:
            d.errors[run_id] = error
            continue
        v = _value(d.metric, real_time, unit, counters)
        if v is None and not metric and d.metric != "time" and not d.values:
            # A transfer-like case without a gbps counter is judged on its time, as compare does.
            d.metric = "time"
            v = _value("time", real_time, unit, counters)
        if v is not None:
            d.values.setdefault(run_id, []).append(v)
            if unit:
                d.unit = unit
    return out


# ---------------------------------------------------------------------------------------------
# check


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


@dataclass
class MachineCheck:
    machine: Machine
    newest: Run
    baseline_runs: list[Run]
    driver_change: tuple[str, str] | None  # (before, after) when the baseline ran another driver
    findings: list[Finding]
    cases_checked: int
    note: str = ""
    missing: int = 0  # cases the baseline runs had that the newest run does not

    @property
    def counts_for_exit(self) -> bool:
        return self.driver_change is None


@dataclass
class CheckReport:
    machines: list[MachineCheck]
    threshold_pct: float

    def failures(self) -> list[tuple[MachineCheck, Finding]]:
        return [(m, f) for m in self.machines if m.counts_for_exit for f in m.findings
                if f.kind in ("regression", "failing")]


def _mad_sigma(vals: list[float]) -> float:
    m = median(vals)
    return 1.4826 * median([abs(v - m) for v in vals])


def check(db: str | os.PathLike, window: int = 7, threshold_pct: float = 5.0, metric: str | None = None,
          case_regex: str | None = None, alpha: float = 0.05, k_sigma: float = 3.0) -> CheckReport:
    """Newest run of each machine against its trailing window of runs.

    A change counts when it is at least threshold_pct in the metric, the U test (five or more repetitions
    on both sides) says it is real, and, with three or more baseline runs, it lies beyond k_sigma robust
    standard deviations (1.4826 x MAD) of the baseline runs' medians.
    """
    from .compare import u_test_pvalues

    rx = re.compile(case_regex) if case_regex else None
    conn = open_db(db, create=False)
    try:
        out: list[MachineCheck] = []
        pending: list[tuple[Finding, list[float], list[float], bool, MachineCheck]] = []
        for mid, mach in machines(conn).items():
            runs = runs_of(conn, mid)
            if not runs:
                continue
            newest, prev = runs[-1], runs[:-1]
            same = [r for r in prev if r.env == newest.env]
            change = None
            if same:
                base = same[-window:]
            else:
                base = prev[-window:]
                if prev:
                    before = prev[-1]
                    change = (before.env_text(), newest.env_text())
            mc = MachineCheck(mach, newest, base, change, [], 0)
            out.append(mc)
            if not base:
                mc.note = "only one run so far: nothing to compare with yet"
                continue
            data = _load_cases(conn, [newest.id] + [r.id for r in base], metric, rx)
            for case, d in data.items():
                m = d.metric
                base_runs = [d.values[r.id] for r in base if d.values.get(r.id)]
                new = d.values.get(newest.id, [])
                unit_is_time = canonical_metric(m) == "real_time"
                show = (lambda v: v / TIME_UNIT_NS[d.unit]) if unit_is_time else (lambda v: v)
                unit = metric_unit(m, d.unit)
                if not new:
                    if base_runs and newest.id in d.errors:
                        mc.findings.append(Finding(case, m, unit, "failing", show(median([median(v) for v in base_runs])),
                                                   None, None, None, d.errors[newest.id]))
                    elif base_runs:
                        mc.missing += 1
                    continue
                if not base_runs:
                    continue
                mc.cases_checked += 1
                meds = [median(v) for v in base_runs]
                bm, nm = median(meds), median(new)
                if not bm:
                    continue
                ratio = nm / bm
                hib = higher_is_better(m)
                worse = (1.0 - ratio) * 100.0 if hib else (ratio - 1.0) * 100.0
                if abs(worse) < threshold_pct:
                    continue
                if len(meds) >= 3:
                    sigma = _mad_sigma(meds)
                    if sigma > 0 and abs(nm - bm) <= k_sigma * sigma:
                        continue
                f = Finding(case, m, unit, "regression" if worse > 0 else "improvement", show(bm), show(nm), worse,
                            None)
                pooled = [v for vs in base_runs for v in vs]
                if len(new) >= 5 and len(pooled) >= 5:
                    pending.append((f, new, pooled, True, mc))
                else:
                    f.detail = "too few repetitions for a U test"
                    mc.findings.append(f)
        pvals = u_test_pvalues([(a, b) for _, a, b, _, _ in pending])
        for (f, _, _, _, mc), p in zip(pending, pvals):
            f.p_value = p
            if p < alpha:
                mc.findings.append(f)
        for mc in out:
            order = {"failing": 0, "regression": 1, "improvement": 2}
            mc.findings.sort(key=lambda f: (order[f.kind], -(abs(f.worse_pct or 0.0))))
        return CheckReport(out, threshold_pct)
    finally:
        conn.close()


from .history_render import list_runs, render_check, trend  # noqa: E402  (the output half of this module)

__all__ = ["check", "default_db_path", "ingest", "list_runs", "open_db", "render_check", "trend"]
