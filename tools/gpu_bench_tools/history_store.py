"""The history database: every SQL statement of the tools, behind small functions (SQLite, standard library).

Schema version 2 (meta.schema): machines; series (a machine in one configuration: driver, runtime, gate
and NUMA facts); runs (one file each, content-addressed); cases (names interned); results (one row per
run and case: the headline's median over repetitions, each repetition's headline, the noise gpu_bench
wrote, every counter, or the error).
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Iterable, Sequence

from .errors import InputError

SCHEMA_VERSION = "2"

DDL = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE machines (id INTEGER PRIMARY KEY, fingerprint TEXT NOT NULL UNIQUE, host TEXT, "
    "gpu_uuids TEXT, gpu_label TEXT)",
    "CREATE TABLE series (id INTEGER PRIMARY KEY, machine_id INTEGER NOT NULL REFERENCES machines(id), "
    "facts_json TEXT NOT NULL, UNIQUE (machine_id, facts_json))",
    "CREATE TABLE runs (id INTEGER PRIMARY KEY, machine_id INTEGER NOT NULL REFERENCES machines(id), "
    "series_id INTEGER NOT NULL REFERENCES series(id), content_sha256 TEXT NOT NULL UNIQUE, "
    "run_time TEXT NOT NULL, ingested_at TEXT NOT NULL, git TEXT, source TEXT, context_json TEXT NOT NULL)",
    "CREATE INDEX runs_by_machine ON runs (machine_id, run_time)",
    "CREATE TABLE cases (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, family TEXT NOT NULL)",
    "CREATE TABLE results (run_id INTEGER NOT NULL REFERENCES runs(id), case_id INTEGER NOT NULL "
    "REFERENCES cases(id), metric TEXT, unit TEXT, better TEXT, value REAL, reps_json TEXT, noise_pct REAL, "
    "time_unit TEXT, counters_json TEXT, error TEXT, PRIMARY KEY (run_id, case_id))",
    "CREATE INDEX results_by_case ON results (case_id, run_id)",
)
RESULT_COLUMNS = ("run_id", "case_id", "metric", "unit", "better", "value", "reps_json", "noise_pct", "time_unit",
                  "counters_json", "error")


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
                raise InputError(f"{p}: history schema {row[0] if row else '?'} is not {SCHEMA_VERSION}; "
                                 "ingest the JSON files again into a new database")
        elif create:
            conn.execute("BEGIN IMMEDIATE")
            for stmt in DDL:
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


def begin(conn: sqlite3.Connection) -> None:
    conn.execute("BEGIN IMMEDIATE")


def commit(conn: sqlite3.Connection) -> None:
    conn.execute("COMMIT")


def rollback(conn: sqlite3.Connection) -> None:
    if conn.in_transaction:
        conn.execute("ROLLBACK")


def has_run(conn: sqlite3.Connection, sha256: str) -> bool:
    return conn.execute("SELECT 1 FROM runs WHERE content_sha256 = ?", (sha256,)).fetchone() is not None


def machine_id(conn: sqlite3.Connection, fingerprint: str, host: str | None, gpu_uuids: str, gpu_label: str) -> int:
    conn.execute("INSERT OR IGNORE INTO machines (fingerprint, host, gpu_uuids, gpu_label) VALUES (?,?,?,?)",
                 (fingerprint, host, gpu_uuids, gpu_label))
    return conn.execute("SELECT id FROM machines WHERE fingerprint = ?", (fingerprint,)).fetchone()[0]


def series_id(conn: sqlite3.Connection, machine: int, facts_json: str) -> int:
    conn.execute("INSERT OR IGNORE INTO series (machine_id, facts_json) VALUES (?,?)", (machine, facts_json))
    return conn.execute("SELECT id FROM series WHERE machine_id = ? AND facts_json = ?",
                        (machine, facts_json)).fetchone()[0]


def add_run(conn: sqlite3.Connection, machine: int, series: int, sha256: str, run_time: str, ingested_at: str,
            git: str | None, source: str, context_json: str) -> int:
    cur = conn.execute(
        "INSERT INTO runs (machine_id, series_id, content_sha256, run_time, ingested_at, git, source, context_json) "
        "VALUES (?,?,?,?,?,?,?,?)", (machine, series, sha256, run_time, ingested_at, git, source, context_json))
    return cur.lastrowid


def case_ids(conn: sqlite3.Connection, names: dict[str, str]) -> dict[str, int]:
    """name -> id for every case name (family given per name), adding the new ones."""
    conn.executemany("INSERT OR IGNORE INTO cases (name, family) VALUES (?, ?)", names.items())
    out = {}
    names_list = list(names)
    for k in range(0, len(names_list), 500):
        chunk = names_list[k:k + 500]
        marks = ",".join("?" * len(chunk))
        out.update(conn.execute(f"SELECT name, id FROM cases WHERE name IN ({marks})", chunk).fetchall())
    return out


def add_results(conn: sqlite3.Connection, rows: Iterable[Sequence]) -> None:
    conn.executemany(f"INSERT INTO results ({', '.join(RESULT_COLUMNS)}) VALUES "
                     f"({', '.join('?' * len(RESULT_COLUMNS))})", rows)


def machines(conn: sqlite3.Connection) -> list[tuple]:
    """(id, fingerprint, host, gpu_uuids, gpu_label) per machine."""
    return conn.execute("SELECT id, fingerprint, host, gpu_uuids, gpu_label FROM machines ORDER BY id").fetchall()


def runs_of(conn: sqlite3.Connection, machine: int) -> list[tuple]:
    """(id, series_id, facts_json, run_time, git, context_json) per run of a machine, oldest first."""
    return conn.execute(
        "SELECT runs.id, runs.series_id, series.facts_json, runs.run_time, runs.git, runs.context_json "
        "FROM runs JOIN series ON series.id = runs.series_id WHERE runs.machine_id = ? "
        "ORDER BY runs.run_time, runs.id", (machine,)).fetchall()


def cases(conn: sqlite3.Connection) -> dict[int, tuple[str, str]]:
    """case id -> (name, family)."""
    return {i: (n, f) for i, n, f in conn.execute("SELECT id, name, family FROM cases")}


def results_of(conn: sqlite3.Connection, run_ids: Sequence[int], with_counters: bool = False) -> list[tuple]:
    """(run_id, case_id, metric, unit, better, value, reps_json, noise_pct, time_unit, counters_json or None,
    error) for every case of the runs."""
    out: list[tuple] = []
    counters = "counters_json" if with_counters else "NULL"
    for k in range(0, len(run_ids), 500):
        chunk = list(run_ids[k:k + 500])
        marks = ",".join("?" * len(chunk))
        out += conn.execute(
            f"SELECT run_id, case_id, metric, unit, better, value, reps_json, noise_pct, time_unit, {counters}, "
            f"error FROM results WHERE run_id IN ({marks})", chunk).fetchall()
    return out


def case_count(conn: sqlite3.Connection, run_id: int) -> int:
    return conn.execute("SELECT COUNT(*) FROM results WHERE run_id = ?", (run_id,)).fetchone()[0]
