"""The history database: every SQL statement of the tools, through SQLAlchemy Core, on SQLite or PostgreSQL.

Schema version 2 (meta.schema), the same on both: machines; series (a machine in one configuration: driver,
runtime, gate and NUMA facts); runs (one file each, content-addressed); cases (names interned); results (one
row per run and case: the headline's median over repetitions, each repetition's headline, the noise
gpu_bench wrote, every counter, or the error); check_errors (a node's check that could not judge it, and
why: no run to keep). A version 2 database made before check_errors gets it at its first such record.

Writers that run at once (every node of a cluster ingesting its night) neither lose nor duplicate a row:
- SQLite: a writer takes the database's write lock when its transaction begins (BEGIN IMMEDIATE) and waits
  up to BUSY_TIMEOUT_S for another writer to finish; readers do not hold a lock between statements.
- PostgreSQL: every row that two writers may both add (machine, series, run, case name) is added with
  INSERT ... ON CONFLICT DO NOTHING on its unique key and then read back, so the second writer waits for the
  first to commit and then takes its row. One ingest adds machines, then series, then runs, then case names,
  each in sorted order, so two ingests always wait on each other in the same order and cannot deadlock; a
  deadlock or serialization failure (another program's locks) is still retried from the start. Creating
  the schema is serialised by a transaction-scoped advisory lock.
"""

from __future__ import annotations

import random
import sqlite3
import time
from contextlib import contextmanager
from functools import lru_cache
from types import SimpleNamespace
from typing import Callable, Iterable, Iterator, Sequence
from urllib.parse import quote

from . import dburl
from ..reading.errors import InputError

SCHEMA_VERSION = "2"
BUSY_TIMEOUT_S = 60  # how long an SQLite writer waits for another one
RETRIES = 5  # attempts of one ingest transaction that PostgreSQL aborted to break a deadlock
TRANSIENT_SQLSTATES = ("40P01", "40001")  # deadlock detected, serialization failure
_SCHEMA_LOCK = 0x6770755F62656E63  # advisory lock key ('gpu_benc') held while the schema is created
CHUNK = 500  # ids per IN (...) list
RESULT_COLUMNS = ("run_id", "case_id", "metric", "unit", "better", "value", "reps_json", "noise_pct", "time_unit",
                  "counters_json", "error")


@lru_cache(maxsize=None)
def tables() -> SimpleNamespace:
    import sqlalchemy as sa
    from sqlalchemy import Column, ForeignKey, Integer, Text

    md = sa.MetaData()
    t = SimpleNamespace(md=md)
    t.meta = sa.Table("meta", md, Column("key", Text, primary_key=True), Column("value", Text, nullable=False))
    t.machines = sa.Table("machines", md, Column("id", Integer, primary_key=True),
                          Column("fingerprint", Text, nullable=False, unique=True), Column("host", Text),
                          Column("gpu_uuids", Text), Column("gpu_label", Text))
    t.series = sa.Table("series", md, Column("id", Integer, primary_key=True),
                        Column("machine_id", Integer, ForeignKey("machines.id"), nullable=False),
                        Column("facts_json", Text, nullable=False), sa.UniqueConstraint("machine_id", "facts_json"))
    t.runs = sa.Table("runs", md, Column("id", Integer, primary_key=True),
                      Column("machine_id", Integer, ForeignKey("machines.id"), nullable=False),
                      Column("series_id", Integer, ForeignKey("series.id"), nullable=False),
                      Column("content_sha256", Text, nullable=False, unique=True),
                      Column("run_time", Text, nullable=False), Column("ingested_at", Text, nullable=False),
                      Column("git", Text), Column("source", Text), Column("context_json", Text, nullable=False))
    sa.Index("runs_by_machine", t.runs.c.machine_id, t.runs.c.run_time)
    t.cases = sa.Table("cases", md, Column("id", Integer, primary_key=True),
                       Column("name", Text, nullable=False, unique=True), Column("family", Text, nullable=False))
    t.results = sa.Table("results", md, Column("run_id", Integer, ForeignKey("runs.id"), primary_key=True),
                         Column("case_id", Integer, ForeignKey("cases.id"), primary_key=True),
                         Column("metric", Text), Column("unit", Text), Column("better", Text),
                         Column("value", sa.Double), Column("reps_json", Text), Column("noise_pct", sa.Double),
                         Column("time_unit", Text), Column("counters_json", Text), Column("error", Text))
    sa.Index("results_by_case", t.results.c.case_id, t.results.c.run_id)
    t.check_errors = sa.Table("check_errors", md, Column("id", Integer, primary_key=True),
                              Column("host", Text, nullable=False), Column("preset", Text, nullable=False),
                              Column("check_time", Text, nullable=False), Column("reason", Text, nullable=False))
    return t


# ---------------------------------------------------------------------------------------------
# connecting


def _sqlite_engine(t: dburl.Target, create: bool):
    import sqlalchemy as sa
    from sqlalchemy.pool import NullPool

    p = t.path
    if p.is_dir():
        raise InputError(f"{p}: is a directory, not a history database")
    if not create and not p.exists():
        raise InputError(f"{p}: no history database here; run 'gpu-bench-history ingest FILE...' first")
    if create:
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise InputError(f"{p}: cannot create its folder ({e.strerror or e})") from None

    def connect():
        if create:
            c = sqlite3.connect(str(p), timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
        else:
            c = sqlite3.connect(f"file:{quote(str(p.resolve()))}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_S,
                                isolation_level=None, check_same_thread=False)
        c.execute("PRAGMA foreign_keys = ON")
        return c

    engine = sa.create_engine("sqlite://", creator=connect, poolclass=NullPool, hide_parameters=True)

    # pysqlite would begin a transaction only at the first write, after the reads that decided what to write;
    # a writer takes the write lock up front instead, and a reader holds no lock between statements.
    @sa.event.listens_for(engine, "begin")
    def _begin(conn):
        if create:
            conn.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def _engine(t: dburl.Target, create: bool, application: str):
    if t.kind == "sqlite":
        return _sqlite_engine(t, create)
    import sqlalchemy as sa
    from sqlalchemy.pool import NullPool

    url, args = dburl.pg_engine_args(t, read_only=not create, application=application)
    return sa.create_engine(url, connect_args=args, poolclass=NullPool, hide_parameters=True)


def _check_schema(conn, t: dburl.Target, create: bool) -> None:
    import sqlalchemy as sa

    tb = tables()
    if t.kind == "postgresql" and create:
        conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _SCHEMA_LOCK})
    present = set(sa.inspect(conn).get_table_names())
    if "meta" in present:
        row = conn.execute(sa.select(tb.meta.c.value).where(tb.meta.c.key == "schema")).first()
        if not row or row[0] != SCHEMA_VERSION:
            raise InputError(f"{t.shown}: history schema {row[0] if row else '?'} is not {SCHEMA_VERSION}; "
                             "ingest the JSON files again into a new database")
        return
    # An SQLite file is a database of its own; a PostgreSQL database may hold other tables than ours.
    if (present if t.kind == "sqlite" else present & set(tb.md.tables)):
        what = "an SQLite database" if t.kind == "sqlite" else "a PostgreSQL database with tables named like ours"
        raise InputError(f"{t.shown}: {what}, but not a gpu-bench-history one")
    if not create:
        raise InputError(f"{t.shown}: empty history database; ingest some runs first")
    tb.md.create_all(conn)
    conn.execute(sa.insert(tb.meta).values(key="schema", value=SCHEMA_VERSION))


def _reason(e: BaseException, t: dburl.Target) -> str:
    orig = getattr(e, "orig", None)
    text = dburl.one_line(orig if orig is not None else e, t)
    if t.kind == "sqlite":
        if "database is locked" in text:
            return f"locked by another writer for {BUSY_TIMEOUT_S} s; try again when it has finished"
        if "file is not a database" in text or "malformed" in text:
            return f"not a history database ({text})"
    return text


@contextmanager
def session(target, create: bool = False, application: str = "gpu-bench-history") -> Iterator:
    """A connection to the history (created where `create` and not there yet) that is ours and of our schema.

    Anything the database or its driver raises inside becomes one InputError line naming the database with
    its password masked: a server that does not answer or refuses the login, a locked or foreign file.
    """
    from sqlalchemy import exc

    t = target if isinstance(target, dburl.Target) else dburl.parse(target)
    engine = _engine(t, create, application)
    try:
        try:
            conn = engine.connect()
        except exc.DBAPIError as e:
            raise InputError(f"{t.shown}: cannot connect: {_reason(e, t)}") from None
        try:
            with conn.begin():
                _check_schema(conn, t, create)
            yield conn
        finally:
            conn.close()
    except exc.SQLAlchemyError as e:
        raise InputError(f"{t.shown}: {_reason(e, t)}") from None
    finally:
        engine.dispose()


def write(conn, work: Callable):
    """work(conn) in one transaction, run again from the start where PostgreSQL aborted it to break a deadlock."""
    from sqlalchemy import exc

    for attempt in range(RETRIES):
        try:
            with conn.begin():
                return work(conn)
        except exc.DBAPIError as e:
            state = getattr(e.orig, "sqlstate", None) or getattr(e.orig, "pgcode", None)
            if state not in TRANSIENT_SQLSTATES or attempt + 1 == RETRIES:
                raise
            time.sleep(random.uniform(0.05, 0.2) * 2 ** attempt)


# ---------------------------------------------------------------------------------------------
# writing


def _insert(conn, table):
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    return insert(table)


def _chunks(items: Sequence, n: int = CHUNK) -> Iterable[list]:
    items = list(items)
    for k in range(0, len(items), n):
        yield items[k:k + n]


def present_runs(conn, sha256s: Iterable[str]) -> set[str]:
    """The content hashes among these that are in the database already."""
    r = tables().runs
    out: set[str] = set()
    for chunk in _chunks(sorted(set(sha256s))):
        out.update(v for (v,) in conn.execute(r.select().with_only_columns(r.c.content_sha256)
                                              .where(r.c.content_sha256.in_(chunk))))
    return out


def machine_ids(conn, machines: Iterable[tuple[str, str | None, str, str]]) -> dict[str, int]:
    """fingerprint -> id for (fingerprint, host, gpu_uuids, gpu_label) rows, adding the new ones (sorted)."""
    m = tables().machines
    rows = sorted({r[0]: r for r in machines}.values())
    if not rows:
        return {}
    conn.execute(_insert(conn, m).on_conflict_do_nothing(index_elements=["fingerprint"]),
                 [dict(fingerprint=f, host=h, gpu_uuids=u, gpu_label=lab) for f, h, u, lab in rows])
    out = {}
    for chunk in _chunks([r[0] for r in rows]):
        q = m.select().with_only_columns(m.c.fingerprint, m.c.id).where(m.c.fingerprint.in_(chunk))
        out.update((f, i) for f, i in conn.execute(q))
    return out


def series_ids(conn, pairs: Iterable[tuple[int, str]]) -> dict[tuple[int, str], int]:
    """(machine id, facts_json) -> series id, adding the new ones (sorted)."""
    s = tables().series
    rows = sorted(set(pairs))
    if not rows:
        return {}
    conn.execute(_insert(conn, s).on_conflict_do_nothing(index_elements=["machine_id", "facts_json"]),
                 [dict(machine_id=m, facts_json=f) for m, f in rows])
    out = {}
    for mid in sorted({m for m, _ in rows}):
        facts = [f for m, f in rows if m == mid]
        for chunk in _chunks(facts):
            for sid, fj in conn.execute(s.select().with_only_columns(s.c.id, s.c.facts_json)
                                        .where(s.c.machine_id == mid, s.c.facts_json.in_(chunk))):
                out[(mid, fj)] = sid
    return out


def add_run(conn, machine: int, series: int, sha256: str, run_time: str, ingested_at: str, git: str | None,
            source: str, context_json: str) -> int | None:
    """The new run's id, or None where another writer added the same content first."""
    r = tables().runs
    stmt = _insert(conn, r).values(machine_id=machine, series_id=series, content_sha256=sha256, run_time=run_time,
                                   ingested_at=ingested_at, git=git, source=source, context_json=context_json)
    stmt = stmt.on_conflict_do_nothing(index_elements=["content_sha256"])
    if conn.dialect.insert_returning:
        row = conn.execute(stmt.returning(r.c.id)).first()
        return row[0] if row else None
    res = conn.execute(stmt)  # SQLite before 3.35: this writer holds the write lock, so the insert happened
    return res.inserted_primary_key[0] if res.rowcount else None


def case_ids(conn, names: dict[str, str]) -> dict[str, int]:
    """name -> id for every case name (family given per name), adding the new ones (sorted)."""
    c = tables().cases
    order = sorted(names)
    if not order:
        return {}
    conn.execute(_insert(conn, c).on_conflict_do_nothing(index_elements=["name"]),
                 [dict(name=n, family=names[n]) for n in order])
    out = {}
    for chunk in _chunks(order):
        q = c.select().with_only_columns(c.c.name, c.c.id).where(c.c.name.in_(chunk))
        out.update((n, i) for n, i in conn.execute(q))
    return out


def add_check_error(conn, host: str, preset: str, check_time: str, reason: str) -> None:
    """One check that could not judge its node; the table is made first in a database from before it."""
    import sqlalchemy as sa

    t = tables()
    if conn.dialect.name == "postgresql":
        conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _SCHEMA_LOCK})
    t.check_errors.create(conn, checkfirst=True)
    conn.execute(t.check_errors.insert().values(host=host, preset=preset, check_time=check_time, reason=reason))


def add_results(conn, rows: Iterable[Sequence]) -> None:
    rows = [dict(zip(RESULT_COLUMNS, r)) for r in rows]
    if rows:
        conn.execute(tables().results.insert(), rows)


# ---------------------------------------------------------------------------------------------
# reading


def machines(conn) -> list[tuple]:
    """(id, fingerprint, host, gpu_uuids, gpu_label) per machine."""
    m = tables().machines
    return [tuple(r) for r in conn.execute(m.select().order_by(m.c.id))]


def runs_of(conn, machine: int) -> list[tuple]:
    """(id, series_id, facts_json, run_time, git, context_json) per run of a machine, oldest first."""
    import sqlalchemy as sa

    t = tables()
    r, s = t.runs, t.series
    q = (sa.select(r.c.id, r.c.series_id, s.c.facts_json, r.c.run_time, r.c.git, r.c.context_json)
         .join(s, s.c.id == r.c.series_id).where(r.c.machine_id == machine).order_by(r.c.run_time, r.c.id))
    return [tuple(row) for row in conn.execute(q)]


def latest_runs(conn) -> list[tuple]:
    """(run id, run_time, context_json, host, gpu_uuids, source) of the newest run of each machine."""
    import sqlalchemy as sa

    t = tables()
    r, m = t.runs, t.machines
    rank = sa.func.row_number().over(partition_by=r.c.machine_id, order_by=(r.c.run_time.desc(), r.c.id.desc()))
    newest = sa.select(r.c.id, r.c.machine_id, r.c.run_time, r.c.context_json, r.c.source,
                       rank.label("rank")).subquery()
    q = (sa.select(newest.c.id, newest.c.run_time, newest.c.context_json, m.c.host, m.c.gpu_uuids, newest.c.source)
         .join(m, m.c.id == newest.c.machine_id).where(newest.c.rank == 1).order_by(m.c.id))
    return [tuple(row) for row in conn.execute(q)]


def check_errors(conn) -> list[tuple]:
    """(host, preset, check_time, reason) of every check that could not judge its node, oldest first; none in a
    database from before the table."""
    import sqlalchemy as sa

    t = tables().check_errors
    if not sa.inspect(conn).has_table(t.name):
        return []
    q = sa.select(t.c.host, t.c.preset, t.c.check_time, t.c.reason).order_by(t.c.check_time, t.c.id)
    return [tuple(row) for row in conn.execute(q)]


def cases(conn) -> dict[int, tuple[str, str]]:
    """case id -> (name, family)."""
    c = tables().cases
    return {i: (n, f) for i, n, f in conn.execute(c.select().with_only_columns(c.c.id, c.c.name, c.c.family))}


def results_of(conn, run_ids: Sequence[int], with_counters: bool = False) -> list[tuple]:
    """(run_id, case_id, metric, unit, better, value, reps_json, noise_pct, time_unit, counters_json or None,
    error) for every case of the runs."""
    import sqlalchemy as sa

    r = tables().results
    cols = [r.c[k] for k in RESULT_COLUMNS]
    if not with_counters:
        cols[RESULT_COLUMNS.index("counters_json")] = sa.null().label("counters_json")
    out: list[tuple] = []
    for chunk in _chunks(run_ids):
        out += [tuple(row) for row in conn.execute(sa.select(*cols).where(r.c.run_id.in_(chunk)))]
    return out


def case_counts(conn) -> dict[int, int]:
    """run id -> how many cases it holds, for every run, in one query."""
    import sqlalchemy as sa

    r = tables().results
    return dict(conn.execute(sa.select(r.c.run_id, sa.func.count()).group_by(r.c.run_id)).all())
