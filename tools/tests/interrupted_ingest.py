"""One check for every history back end: an ingest interrupted half way through leaves nothing behind."""

from __future__ import annotations

from conftest import run_cli
from gpu_bench_tools.cli import history as cli_history
from gpu_bench_tools.history import series


def check(monkeypatch, capsys, db: str, counts, ingest_args: list[str], later: list[str]) -> None:
    """Runs `gpu-bench-history INGEST_ARGS` (two files) with Ctrl-C arriving while the second file's
    results go in: exit 130, the database as before; the same two files then ingest in full."""
    before = counts(db)
    real = series._insert_results
    calls = []

    def failing(conn, run_id, *rest):
        calls.append(run_id)
        n = real(conn, run_id, *rest)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return n

    monkeypatch.setattr(series, "_insert_results", failing)
    code, _, err = run_cli(cli_history.main, ingest_args, capsys)
    assert code == 130 and "interrupted" in err
    assert len(calls) == 2 and counts(db) == before
    monkeypatch.setattr(series, "_insert_results", real)
    assert len(series.ingest(db, later).added) == 2
