import json
import sqlite3
from pathlib import Path

import pytest

import interrupted_ingest
import synth
from conftest import run_cli
from gpu_bench_tools.cli import history as cli_history
from gpu_bench_tools.history import series

FAMS = ("Transfer", "SmallCopy")


def night(tmp, n, driver="570.86.15", slow=None, seed=None, **kw):
    doc = synth.make_run(seed=100 + n if seed is None else seed, date=f"2025-01-{n:02d}T02:00:00+00:00",
                         driver=driver, slow=slow, families=FAMS, **kw)
    return synth.write(Path(tmp) / f"night{n:02d}_{driver}.json", doc)


def counts(db):
    with sqlite3.connect(db) as c:
        return tuple(c.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("machines", "runs", "results"))


@pytest.fixture
def db(tmp_path):
    return str(tmp_path / "h.sqlite")


def test_ingest_is_idempotent(tmp_path, db, capsys):
    a, b = night(tmp_path, 1), night(tmp_path, 2)
    code, out, _ = run_cli(cli_history.main, ["--db", db, "ingest", a, b], capsys)
    assert code == 0 and "2 run(s) added" in out
    first = counts(db)
    assert first[0] == 1 and first[1] == 2
    # one row per case, holding each repetition's headline
    doc = json.load(open(a))
    n_cases = len({e["run_name"] for e in doc["benchmarks"] if e["run_type"] == "iteration"})
    n_reps = len([e for e in doc["benchmarks"] if e["run_type"] == "iteration" and not e.get("error_occurred")])
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT COUNT(*) FROM results WHERE run_id = 1").fetchone()[0] == n_cases
        reps = [json.loads(r[0]) for r in c.execute("SELECT reps_json FROM results WHERE run_id = 1")]
        assert sum(len(r) for r in reps) == n_reps
    code, out, _ = run_cli(cli_history.main, ["--db", db, "ingest", a, b, a], capsys)
    assert code == 0 and "0 run(s) added, 3 already present" in out
    assert counts(db) == first
    # The same run written with other whitespace is the same run.
    c = tmp_path / "reformatted.json"
    c.write_text(json.dumps(json.load(open(a)), indent=None))
    run_cli(cli_history.main, ["ingest", str(c), "--db", db], capsys)
    assert counts(db) == first


def test_interrupted_ingest_leaves_the_database_as_it_was(tmp_path, db, monkeypatch, capsys):
    series.ingest(db, [night(tmp_path, 1)])
    two = [night(tmp_path, 2), night(tmp_path, 3)]
    interrupted_ingest.check(monkeypatch, capsys, db, counts, ["--db", db, "ingest", *two], two)
    with sqlite3.connect(db) as c:
        assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_a_bad_file_adds_nothing(tmp_path, db, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    code, _, err = run_cli(cli_history.main, ["--db", db, "ingest", night(tmp_path, 1), str(bad)], capsys)
    assert code == 2 and "truncated JSON" in err
    assert not Path(db).exists()
    plain = synth.write(tmp_path / "plain.json", synth.make_run(schema=None, families=FAMS))
    code, _, err = run_cli(cli_history.main, ["--db", db, "ingest", plain], capsys)
    assert code == 2 and "history needs gpu_bench's GPU facts" in err


def nights(tmp_path, db, n=6, **last):
    paths = [night(tmp_path, i) for i in range(1, n)]
    paths.append(night(tmp_path, n, **last))
    series.ingest(db, paths)


def test_check_flags_a_slower_night(tmp_path, db, capsys):
    nights(tmp_path, db, slow={"Transfer/dir:h2d/mem:pinned": 0.88})
    code, out, err = run_cli(cli_history.main, ["--db", db, "check"], capsys)
    assert code == 1, out
    reg = [ln for ln in out.splitlines() if ln.strip().startswith("REGRESSION")]
    assert len(reg) == 7 and all("Transfer/dir:h2d/mem:pinned/" in ln and "worse" in ln for ln in reg)
    assert "against 5 earlier run(s)" in out and "regression(s) or newly failing" in err
    code, out, _ = run_cli(cli_history.main, ["--db", db, "check", "--threshold", "20"], capsys)
    assert code == 0


def test_check_is_quiet_on_an_ordinary_night(tmp_path, db, capsys):
    nights(tmp_path, db)
    code, out, _ = run_cli(cli_history.main, ["--db", db, "check"], capsys)
    assert code == 0, out
    assert "REGRESSION" not in out and "0 regression(s), 0 improvement(s), 0 newly failing" in out


def test_check_reports_improvements_without_failing(tmp_path, db, capsys):
    nights(tmp_path, db, slow={"SmallCopy/dir:h2d/mem:pinned": 1.5})
    code, out, _ = run_cli(cli_history.main, ["--db", db, "check"], capsys)
    assert code == 0 and out.count(" improvement ") == 5


def test_driver_change_is_shown_as_such(tmp_path, db, capsys):
    nights(tmp_path, db, driver="580.159.04", slow={"Transfer/dir:d2h": 0.9})
    code, out, _ = run_cli(cli_history.main, ["--db", db, "check"], capsys)
    assert code == 0, out
    assert "CONFIGURATION CHANGE: driver 570.86.15 -> 580.159.04." in out
    assert "REGRESSION" not in out and out.count(" changed ") == 21
    # The next night on the new driver is judged against the new driver's runs only.
    series.ingest(db, [night(tmp_path, 7, driver="580.159.04", slow={"Transfer/dir:d2h": 0.9}, seed=777)])
    code, out, _ = run_cli(cli_history.main, ["--db", db, "check"], capsys)
    assert code == 0 and "CONFIGURATION CHANGE" not in out and "against 1 earlier run(s)" in out
    assert "0 regression(s)" in out


def test_newly_failing_case_fails_the_check(tmp_path, db, capsys):
    paths = [night(tmp_path, i) for i in range(1, 4)]
    doc = synth.make_run(seed=9, date="2025-01-04T02:00:00+00:00", driver="570.86.15", families=FAMS)
    for e in doc["benchmarks"]:
        if e["name"].startswith("Transfer/dir:h2d/mem:pinned/bytes:1024/"):
            e.update(error_occurred=True, error_message="verification failed: 3 of 256 words differ")
    doc["benchmarks"] = [e for e in doc["benchmarks"] if not (e["run_type"] == "aggregate" and e.get("error_occurred"))]
    paths.append(synth.write(tmp_path / "failing.json", doc))
    series.ingest(db, paths)
    code, out, _ = run_cli(cli_history.main, ["--db", db, "check"], capsys)
    assert code == 1 and "FAILING      Transfer/dir:h2d/mem:pinned/bytes:1024: now fails (error: verification" in out


def test_machines_are_kept_apart(tmp_path, db, capsys):
    nights(tmp_path, db, n=3)
    other = synth.make_run(gpu="H200", host="node-b", seed=5, date="2025-01-09T02:00:00+00:00", families=FAMS,
                           slow={"Transfer": 0.5})
    series.ingest(db, [synth.write(tmp_path / "b.json", other)])
    code, out, _ = run_cli(cli_history.main, ["--db", db, "check"], capsys)
    assert code == 0 and "H200 [GPU-a03b77e1] on node-b" in out and "only one run so far" in out
    code, out, _ = run_cli(cli_history.main, ["--db", db, "runs"], capsys)
    assert code == 0 and "H100 80GB HBM3 [GPU-6f1e2d3c] on node-a: 3 run(s)" in out
    b_line = [line for line in out.splitlines() if "2025-01-09" in line]
    n_cases = len({b.get("run_name", b["name"]) for b in other["benchmarks"]})
    assert len(b_line) == 1 and b_line[0].endswith(f" {n_cases} cases"), out


def test_default_database_lives_in_the_users_data_dir(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("GPU_BENCH_DB", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert series.default_db_path() == tmp_path / "xdg" / "gpu_bench" / "history.sqlite"
    code, out, _ = run_cli(cli_history.main, ["ingest", night(tmp_path, 1)], capsys)
    assert code == 0 and (tmp_path / "xdg" / "gpu_bench" / "history.sqlite").is_file()
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert series.default_db_path() == tmp_path / "home" / ".local" / "share" / "gpu_bench" / "history.sqlite"


def test_the_database_named_in_the_environment_wins_over_the_default(tmp_path, monkeypatch, capsys):
    """A batch job or pod names its database in GPU_BENCH_DB; --db still wins over it."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("GPU_BENCH_DB", str(tmp_path / "env.sqlite"))
    code, out, _ = run_cli(cli_history.main, ["ingest", night(tmp_path, 1)], capsys)
    assert code == 0 and f"database {tmp_path / 'env.sqlite'}" in out
    assert counts(str(tmp_path / "env.sqlite"))[1] == 1 and not (tmp_path / "xdg").exists()
    code, out, _ = run_cli(cli_history.main, ["--db", str(tmp_path / "arg.sqlite"), "ingest", night(tmp_path, 2)],
                           capsys)
    assert code == 0 and counts(str(tmp_path / "arg.sqlite"))[1] == 1 and counts(str(tmp_path / "env.sqlite"))[1] == 1


def test_check_and_trend_refuse_a_missing_or_foreign_database(tmp_path, capsys):
    code, _, err = run_cli(cli_history.main, ["--db", str(tmp_path / "none.sqlite"), "check"], capsys)
    assert code == 2 and "no history database here" in err and not (tmp_path / "none.sqlite").exists()
    junk = tmp_path / "junk.sqlite"
    junk.write_text("not a database at all, just text " * 100)
    code, _, err = run_cli(cli_history.main, ["--db", str(junk), "check"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as c:
        c.execute("CREATE TABLE t (x)")
    code, _, err = run_cli(cli_history.main, ["--db", str(other), "trend", "--case", ".", "--out", str(tmp_path)],
                           capsys)
    assert code == 2 and "not a gpu-bench-history one" in err


def test_trend_plots_cases_over_time_with_driver_changes(tmp_path, db, capsys):
    import xml.etree.ElementTree as ET

    nights(tmp_path, db, driver="580.159.04")
    out_dir = tmp_path / "trend"
    code, out, _ = run_cli(cli_history.main, ["--db", db, "trend", "--case", r"Transfer/dir:h2d/mem:pinned/bytes:(1024|268435456)$",
                                              "--out", str(out_dir), "--format", "png,svg"], capsys)
    assert code == 0
    files = sorted(p.name for p in out_dir.iterdir())
    assert files == ["trend_transfer-dir-h2d-mem-pinned-bytes-1024.png", "trend_transfer-dir-h2d-mem-pinned-bytes-1024.svg",
                     "trend_transfer-dir-h2d-mem-pinned-bytes-268435456.png",
                     "trend_transfer-dir-h2d-mem-pinned-bytes-268435456.svg"]
    text = " ".join(ET.parse(out_dir / files[3]).getroot().itertext())
    assert "driver 580.159.04, CUDA 13.0" in text and "bandwidth (GB/s)" in text and "H100 80GB HBM3" in text
    code, _, err = run_cli(cli_history.main, ["--db", db, "trend", "--case", "Nothing", "--out", str(out_dir)], capsys)
    assert code == 2 and "no case in the database matches" in err
    code, _, err = run_cli(cli_history.main, ["--db", db, "trend", "--case", ".", "--out", str(out_dir)], capsys)
    assert code == 2 and "narrow --case" in err


def test_cases_left_out_of_the_newest_run_are_counted(tmp_path, db, capsys):
    paths = [night(tmp_path, i) for i in range(1, 4)]
    doc = synth.make_run(seed=9, date="2025-01-04T02:00:00+00:00", driver="570.86.15", families=("Transfer",))
    paths.append(synth.write(tmp_path / "partial.json", doc))
    series.ingest(db, paths)
    code, out, _ = run_cli(cli_history.main, ["--db", db, "check"], capsys)
    assert code == 0 and "note: 20 case(s) of the earlier runs are not in the newest run" in out


def test_link_error_counters_in_the_context_never_explain_a_change():
    """Each GPU's link error counters (gpu.N.errors.*.start, .end) differ between any two runs: what changed
    in the context leaves them out, and keeps a changed limit."""
    from gpu_bench_tools.history.check import context_change
    from gpu_bench_tools.history.series import Run

    ctx = {"driver.version": "580", "gpu.0.power_limit_w": "700", "gpu.0.errors.pcie_replay.start": "3",
           "gpu.0.errors.pcie_replay.end": "3", "gpu.1.errors.nvlink_replay.end": "0"}
    later = dict(ctx, **{"gpu.0.errors.pcie_replay.start": "5", "gpu.0.errors.pcie_replay.end": "9",
                         "gpu.1.errors.nvlink_replay.end": "2", "gpu.1.errors.nvlink_replay.start": "1"})
    before = Run(1, 1, {}, "2025-01-07T02:00:00+00:00", "abc", ctx)
    assert context_change(before, Run(2, 1, {}, "2025-01-08T02:00:00+00:00", "abc", later)) == \
        "nothing in the context changed"
    capped = Run(2, 1, {}, "2025-01-08T02:00:00+00:00", "abc", dict(later, **{"gpu.0.power_limit_w": "500"}))
    assert context_change(before, capped) == "gpu.0.power_limit_w 700 -> 500"
