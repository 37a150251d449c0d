"""History on PostgreSQL behaves as on SQLite; writers at once lose and duplicate nothing on either; the
password stays out of the command line and out of every message."""

import multiprocessing
import socket
import sqlite3
import time
from pathlib import Path

import pytest

import interrupted_ingest
import synth
from conftest import run_cli
from gpu_bench_tools.cli import history as cli_history
from gpu_bench_tools.history import dburl, series, check as history_check
from gpu_bench_tools.history import store

FAMS = ("Transfer", "SmallCopy")
TABLES = ("machines", "series", "runs", "cases", "results")


def night(tmp, n, host="node-a", gpu="H100", slow=None, uuid=None):
    doc = synth.make_run(seed=100 + n, date=f"2025-01-{n:02d}T02:00:00+00:00", host=host, gpu=gpu, slow=slow,
                         families=FAMS)
    if uuid:
        doc["context"]["gpu.uuid"] = uuid
    return synth.write(Path(tmp) / f"{host}_{n:02d}.json", doc)


def counts(db) -> dict[str, int]:
    import sqlalchemy as sa

    with store.session(db) as conn:
        return {t: conn.execute(sa.select(sa.func.count()).select_from(getattr(store.tables(), t))).scalar_one()
                for t in TABLES}


def test_same_history_and_same_check_on_postgresql_as_on_sqlite(tmp_path, pg_url, monkeypatch, capsys):
    paths = [night(tmp_path, i) for i in range(1, 6)]
    paths.append(night(tmp_path, 6, slow={"Transfer/dir:h2d/mem:pinned": 0.88}))
    lite = str(tmp_path / "h.sqlite")
    outs = {}
    for name, db in (("sqlite", lite), ("postgresql", pg_url)):
        monkeypatch.setenv(dburl.ENV, db)  # the password comes from the environment, never from argv
        code, out, _ = run_cli(cli_history.main, ["ingest", *paths[:3]], capsys)
        assert code == 0 and "3 run(s) added" in out
        code, out, _ = run_cli(cli_history.main, ["ingest", *paths], capsys)
        assert code == 0 and "3 run(s) added, 3 already present" in out
        code, out, _ = run_cli(cli_history.main, ["check"], capsys)
        assert code == 1, out
        outs[name] = (counts(db), out, run_cli(cli_history.main, ["runs"], capsys)[1])
    assert outs["sqlite"] == outs["postgresql"]
    assert outs["postgresql"][1].count("REGRESSION") == 7


def test_ingest_output_masks_the_password(tmp_path, pg_url, pg_server, monkeypatch, capsys):
    import pgserver

    monkeypatch.setenv(dburl.ENV, pg_url)
    code, out, err = run_cli(cli_history.main, ["ingest", night(tmp_path, 1)], capsys)
    assert code == 0 and "postgresql://nightly:***@127.0.0.1" in out
    assert pgserver.ROLE_PASSWORD not in out + err


def test_interrupted_ingest_leaves_postgresql_as_it_was(tmp_path, pg_url, monkeypatch, capsys):
    series.ingest(pg_url, [night(tmp_path, 1)])
    two = [night(tmp_path, 2), night(tmp_path, 3)]
    monkeypatch.setenv(dburl.ENV, pg_url)
    interrupted_ingest.check(monkeypatch, capsys, pg_url, counts, ["ingest", *two], two)


# ---------------------------------------------------------------------------------------------
# 8 writers at once


def _writer(db, plan, barrier, queue):
    barrier.wait()
    added = already = 0
    try:
        for chunk in plan:
            r = series.ingest(db, chunk)
            added += len(r.added)
            already += len(r.already)
        queue.put((added, already, None))
    except BaseException as e:  # noqa: BLE001 - reported to the test, which fails on it
        queue.put((added, already, f"{type(e).__name__}: {e}"))


def _eight_writers(tmp_path, db):
    """8 processes ingest overlapping sets of 12 runs of 3 machines into an empty database, all at once."""
    files = [night(tmp_path, n, host=f"node-{m}", uuid=f"GPU-{m}") for m in "abc" for n in range(1, 5)]
    plans = []
    for k in range(8):
        mine = [files[(k * 5 + j) % len(files)] for j in range(7)]  # 7 of the 12, each file in 4 or 5 plans
        mine = mine[::-1] if k % 2 else mine
        plans.append([mine] if k % 3 == 0 else [mine[:3], mine[3:]] if k % 3 == 1 else [[p] for p in mine])
    ctx = multiprocessing.get_context("fork")
    barrier, queue = ctx.Barrier(8), ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(db, plan, barrier, queue)) for plan in plans]
    for p in procs:
        p.start()
    reports = [queue.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=30)
    assert [r[2] for r in reports] == [None] * 8
    assert sum(r[0] for r in reports) == len(files)  # each run added exactly once
    assert sum(r[0] + r[1] for r in reports) == sum(len(c) for plan in plans for c in plan)
    n_cases = len(series._prepare(files[0]).file.cases)
    got = counts(db)
    assert got == {"machines": 3, "series": 3, "runs": 12, "cases": n_cases, "results": 12 * n_cases}, got
    return files


def test_eight_writers_at_once_on_sqlite(tmp_path):
    db = str(tmp_path / "h.sqlite")
    _eight_writers(tmp_path, db)
    with sqlite3.connect(db) as c:
        assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert history_check.check(db).machines


def test_eight_writers_at_once_on_postgresql(tmp_path, pg_url):
    _eight_writers(tmp_path, pg_url)
    assert len(history_check.check(pg_url).machines) == 3


# ---------------------------------------------------------------------------------------------
# credentials and a database that cannot be used


def test_a_password_on_the_command_line_is_refused(tmp_path, pg_url, capsys):
    import pgserver

    code, _, err = run_cli(cli_history.main, ["--db", pg_url, "ingest", night(tmp_path, 1)], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "GPU_BENCH_DB" in err and "~/.pgpass" in err and pgserver.ROLE_PASSWORD not in err
    code, _, err = run_cli(cli_history.main, ["--db", "postgresql://nightly@h/db?password=topsecret", "runs"], capsys)
    assert code == 2 and "password=***" in err and "topsecret" not in err


def test_a_wrong_password_is_one_line_without_the_password(tmp_path, pg_server, pg_url, monkeypatch, capsys):
    wrong = "Wr0ng-pa55word-that-must-not-show"
    monkeypatch.setenv(dburl.ENV, pg_server.url(pg_url.rsplit("/", 1)[1], password=wrong))
    code, out, err = run_cli(cli_history.main, ["ingest", night(tmp_path, 1)], capsys)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert "cannot connect" in err and "password authentication failed" in err and wrong not in err
    assert pg_server.admin("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'",
                           pg_url.rsplit("/", 1)[1]).stdout.strip() == "0"  # nothing half-written


def test_pgpass_and_a_service_file_hold_the_password(tmp_path, pg_server, pg_url, monkeypatch, capsys):
    import pgserver

    dbname = pg_url.rsplit("/", 1)[1]
    home = tmp_path / "home"
    home.mkdir()
    pgpass = home / ".pgpass"
    pgpass.write_text(f"127.0.0.1:{pg_server.port}:{dbname}:{pgserver.ROLE}:{pgserver.ROLE_PASSWORD}\n")
    pgpass.chmod(0o600)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("PGPASSFILE", raising=False)
    bare = f"postgresql://{pgserver.ROLE}@127.0.0.1:{pg_server.port}/{dbname}"
    code, out, err = run_cli(cli_history.main, ["--db", bare, "ingest", night(tmp_path, 1)], capsys)
    assert code == 0 and "1 run(s) added" in out, err
    services = tmp_path / "pg_service.conf"
    services.write_text(f"[fleet]\nhost=127.0.0.1\nport={pg_server.port}\ndbname={dbname}\nuser={pgserver.ROLE}\n")
    monkeypatch.setenv("PGSERVICEFILE", str(services))
    code, out, err = run_cli(cli_history.main, ["--db", "postgresql:///?service=fleet", "runs"], capsys)
    assert code == 0 and "on node-a: 1 run(s)" in out, err


def test_a_database_that_refuses_or_does_not_answer_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    monkeypatch.setenv(dburl.ENV, f"postgresql://nightly:pw@127.0.0.1:{port}/db")
    code, out, err = run_cli(cli_history.main, ["ingest", night(tmp_path, 1)], capsys)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "cannot connect" in err
    # A host that takes the connection and never answers: libpq's connect_timeout ends the wait.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        monkeypatch.setenv(dburl.ENV, f"postgresql://nightly@127.0.0.1:{silent.getsockname()[1]}/db?connect_timeout=2")
        t0 = time.monotonic()
        code, out, err = run_cli(cli_history.main, ["check"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "cannot connect" in err, err
    assert time.monotonic() - t0 < 15


def test_urls_are_shown_without_passwords_and_get_a_timeout():
    t = dburl.parse("postgresql://u:p%40ss@db.example:5433/hist?sslmode=require")
    assert t.shown == "postgresql://u:***@db.example:5433/hist?sslmode=require" and t.secret == "p@ss"
    assert dburl.one_line("FATAL:\n  bad p@ss and p%40ss", t) == "FATAL: bad *** and ***"
    url, args = dburl.pg_engine_args(t, read_only=True, application="x")
    assert url.drivername == "postgresql+psycopg" and args["connect_timeout"] == dburl.CONNECT_TIMEOUT_S
    assert "default_transaction_read_only=on" in args["options"]
    assert dburl.parse("sqlite:////tmp/h.sqlite").path == Path("/tmp/h.sqlite")
    assert dburl.parse("relative/h.sqlite").kind == "sqlite"
    with pytest.raises(Exception, match="mysql is not supported"):
        dburl.parse("mysql://u:secret@h/db")
    try:
        dburl.parse("mysql://u:secret@h/db")
    except Exception as e:  # noqa: BLE001
        assert "secret" not in str(e)


def test_the_environment_names_the_database_when_no_db_is_given(tmp_path, monkeypatch, capsys):
    db = tmp_path / "from-env.sqlite"
    monkeypatch.setenv(dburl.ENV, str(db))
    code, out, _ = run_cli(cli_history.main, ["ingest", night(tmp_path, 1)], capsys)
    assert code == 0 and db.is_file() and str(db) in out
    other = tmp_path / "given.sqlite"
    code, _, _ = run_cli(cli_history.main, ["--db", str(other), "ingest", night(tmp_path, 2)], capsys)
    assert code == 0 and other.is_file()


def test_roles_need_only_what_docs_fleet_md_grants(tmp_path, pg_server, pg_url, monkeypatch, capsys):
    """An ingesting role with SELECT and INSERT (and its sequences), a reading role with SELECT only."""
    dbname = pg_url.rsplit("/", 1)[1]
    series.ingest(pg_url, [night(tmp_path, 1)])  # the database's owner made the schema
    pg_server.admin("CREATE ROLE ingester LOGIN PASSWORD 'pw-ingest'; CREATE ROLE reader LOGIN PASSWORD 'pw-read'")
    pg_server.admin("GRANT SELECT, INSERT ON ALL TABLES IN SCHEMA public TO ingester; "
                    "GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO ingester; "
                    "GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader", dbname)
    monkeypatch.setenv(dburl.ENV, pg_server.url(dbname, password="pw-ingest", user="ingester"))
    code, out, err = run_cli(cli_history.main, ["ingest", night(tmp_path, 2), night(tmp_path, 3)], capsys)
    assert code == 0 and "2 run(s) added" in out, err
    monkeypatch.setenv(dburl.ENV, pg_server.url(dbname, password="pw-read", user="reader"))
    code, out, err = run_cli(cli_history.main, ["runs"], capsys)
    assert code == 0 and "3 run(s)" in out, err
    code, out, err = run_cli(cli_history.main, ["ingest", night(tmp_path, 4)], capsys)
    assert code == 2 and "permission denied" in err and len(err.strip().splitlines()) == 1, err
    assert counts(pg_url)["runs"] == 3
