"""Fleet's input: each node's newest gpu_bench run, from result files (read in parallel where there are
many) or from a history database, and a problem for each node whose result cannot be used."""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable

from ..history import series
from ..reading.load import InputError, load_file


# Problems that make the command exit 1; the others are said and do not fail a nightly job.
COUNTED = ("missing", "unreadable", "no figures", "failed cases", "error counters", "stale")
PARALLEL_FROM = 64  # files: below this, reading them in one process is quicker than starting workers


@dataclass
class NodeRun:
    """One node's run as read: where from, its context, its date, and each case's figure or error."""

    source: str
    context: dict
    run_time: str | None
    figures: list[tuple]  # (case key, metric, unit, better, value, noise_pct, error)


@dataclass
class Problem:
    kind: str  # see COUNTED; also "not judged" and "superseded"
    host: str | None
    source: str
    detail: str
    cases: list[tuple[str, str, str]] = field(default_factory=list)  # (GPU, case, error) for failed cases

    @property
    def counted(self) -> bool:
        return self.kind in COUNTED


# ---------------------------------------------------------------------------------------------
# reading


def _read(path: str) -> NodeRun | Problem:
    try:
        f = load_file(path, require_figures=False)
    except InputError as e:
        kind = "missing" if not os.path.lexists(path) else "unreadable"
        return Problem(kind, None, path, str(e))
    if not f.is_gpu_bench:
        return Problem("unreadable", None, path, f"{path}: plain Google Benchmark JSON, without gpu_bench's GPU facts")
    try:
        when = series.parse_run_time(f)
    except InputError:
        when = None
    ctx = _kept_context(f.context)
    figs = [(g.case.key, g.metric, g.unit, g.better, g.value, g.noise_pct, g.error) for g in series.figures(f)]
    return NodeRun(path, ctx, when, figs)


def _kept_context(ctx: dict) -> dict:
    """The context without the family descriptors, but for which of each family's cases are host-side and
    which it measures in a later way."""
    return {k: v for k, v in ctx.items()
            if not str(k).startswith("family.") or str(k).endswith((".name", ".host_side", ".revisions"))}


def _quiet_gc() -> None:
    import gc

    gc.disable()


def read_files(paths: Iterable[str | os.PathLike], jobs: int | None = None) -> list[NodeRun | Problem]:
    """Each file's run, or the problem that stops it being read; many files are read by several processes.

    The cyclic garbage collector is off while files are read: parsing makes millions of objects and no
    cycles, and the collector's passes over them cost a quarter of the time.
    """
    import gc

    paths = [os.fspath(p) for p in paths]
    jobs = jobs or min(os.cpu_count() or 1, 8)
    was = gc.isenabled()
    gc.disable()
    try:
        if jobs > 1 and len(paths) >= PARALLEL_FROM:
            from concurrent.futures import ProcessPoolExecutor

            try:
                with ProcessPoolExecutor(jobs, initializer=_quiet_gc) as pool:
                    return list(pool.map(_read, paths, chunksize=max(1, len(paths) // (jobs * 8))))
            except (OSError, RuntimeError):
                pass  # no worker processes here (a sandbox without /dev/shm): read them in this one
        return [_read(p) for p in paths]
    finally:
        if was:
            gc.enable()


def read_database(db) -> list[NodeRun]:
    """The newest run of each machine in a history database (SQLite path or URL)."""
    import json

    from ..history import store

    with store.session(db, application="gpu-bench-fleet") as conn:
        newest = store.latest_runs(conn)
        names = store.cases(conn)
        rows = store.results_of(conn, [r[0] for r in newest])
    by_run: dict[int, list[tuple]] = defaultdict(list)
    for run_id, case_id, metric, unit, better, value, _reps, noise, _tu, _counters, error in rows:
        by_run[run_id].append((names[case_id][0], metric, unit, better, value, noise, error))
    out = []
    for run_id, when, context_json, _host, _uuids, source in newest:
        ctx = _kept_context(json.loads(context_json))
        out.append(NodeRun(f"{source or 'database'} (run {run_id})", ctx, when, by_run[run_id]))
    return out
