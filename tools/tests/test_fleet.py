"""gpu-bench-fleet: the bad GPUs among many, nothing else; nodes without a usable result reported, not dropped."""

import csv
import io
import json
from pathlib import Path

import pytest

import synth
import synth_fleet
from conftest import run_cli
from gpu_bench_tools.cli import fleet as cli_fleet
from gpu_bench_tools.history import dburl, series
from gpu_bench_tools.fleet import node_runs
from gpu_bench_tools.fleet.cohorts import analyse

H2D_SLOW = {r"^Transfer/dir:h2d/": 0.93}  # 7% slower: beyond 5%, on every h2d case


def node(tmp, i, gpu="H100", slow=None, driver="580.159.04", night=1, **kw) -> str:
    """Node i's default run (schema 2, one repetition) of one night, with a GPU UUID of its own."""
    doc = synth.make_run(gpu=gpu, seed=1000 * night + i, host=f"n{i:03d}", schema="2", reps=1, families=("Transfer",),
                         slow=slow, driver=driver, date=f"2025-02-{night + 1:02d}T02:{i % 60:02d}:00+00:00", **kw)
    doc["context"]["gpu.uuid"] = f"GPU-{gpu}-{i:04d}"
    return synth.write(Path(tmp) / f"n{i:03d}_{night}.json", doc)


def hosts(rep) -> set[str]:
    return {g.host for g, _ in rep.ranked()}


def test_planted_faults_among_100_nodes_are_found_and_nothing_else(tmp_path, capsys):
    """The benchmark's check (tools/benchmarks/bench_fleet.py) on 100 nodes redrawn from the committed runs."""
    if not all(p.exists() for p in synth_fleet.SOURCES.values()):
        pytest.skip("the committed default runs (results/sampled) are not here")
    faults = synth_fleet.spread_faults(100, 6)
    paths, planted = synth_fleet.build(tmp_path / "nodes", 100, faults, seed=3)
    out = tmp_path / "fleet.json"
    code, _, err = run_cli(cli_fleet.main, [*paths, "--format", "json", "--out", str(out)], capsys)
    assert code == 1 and "6 flagged" in err
    rep = json.loads(out.read_text())
    assert {g["host"] for g in rep["gpus_flagged"]} == set(planted)
    # A planted GPU's rows are the cases its fault slows, and now and then a lone noise outlier of its own.
    other = [f for f in rep["flags"] if not synth_fleet.faulty(f["case"], planted[f["host"]][0])]
    assert len(rep["flags"]) >= 6 * 8 and len(other) <= 2, other
    assert all(f["effect_pct"] >= 5 and (f["score"] is None or f["score"] >= 6) for f in rep["flags"])
    assert rep["problems"] == [] and {c["gpus"] for c in rep["cohorts"]} == {50}


def test_thresholds_effect_own_noise_lone_crowded_and_both_sides(tmp_path):
    paths = [node(tmp_path, i) for i in range(20)]
    paths[3] = node(tmp_path, 3, slow={r"^Transfer/dir:h2d/": 0.965})  # 3.5% slower: below --min-effect
    paths[4] = node(tmp_path, 4, slow=H2D_SLOW)  # flagged
    paths[5] = node(tmp_path, 5, slow={r"^Transfer/dir:h2d/mem:pinned/bytes:(1024|8192)$": 0.93})  # 2 cases: lone
    paths[6] = node(tmp_path, 6, slow={r"^Transfer/dir:d2h/": 1.10})  # faster: only with both_sides
    doc = json.loads(Path(node(tmp_path, 7, slow=H2D_SLOW)).read_text())
    for e in doc["benchmarks"]:
        e["noise_pct"] = 9.0  # its own run says its figures are only good to 9%
    paths[7] = synth.write(tmp_path / "n007_1.json", doc)
    for i in (10, 11, 12):  # 3 of 20 (more than 2%) slower on one case: that case's or the cohort's, not theirs
        paths[i] = node(tmp_path, i, slow={r"^Transfer/dir:bidir/mem:pinned/bytes:8192$": 0.8})
    inputs = node_runs.read_files(paths)
    rep = analyse(inputs)
    assert hosts(rep) == {"n004"}
    assert len(rep.flags) == 21 and all(f.case.startswith("Transfer/dir:h2d/") for f in rep.flags)
    assert {(f.gpu.host, f.case) for f in rep.lone} == {("n005", "Transfer/dir:h2d/mem:pinned/bytes:1024"),
                                                       ("n005", "Transfer/dir:h2d/mem:pinned/bytes:8192")}
    assert [(c.case, sorted(f.gpu.host for f in c.outside)) for c in rep.crowds] == [
        ("Transfer/dir:bidir/mem:pinned/bytes:8192", ["n010", "n011", "n012"])]
    assert not rep.problems
    assert hosts(analyse(inputs, both_sides=True)) == {"n004", "n006"}
    assert hosts(analyse(inputs, min_effect_pct=3.0)) == {"n003", "n004"}
    assert hosts(analyse(inputs, min_cases=2)) == {"n004", "n005"}


def test_cohorts_are_model_and_link_and_small_ones_are_not_judged(tmp_path):
    paths = [node(tmp_path, i) for i in range(10)] + [node(tmp_path, 10 + i, gpu="H200") for i in range(2)]
    gen4 = json.loads(Path(node(tmp_path, 20, slow={r"^Transfer/dir:(h2d|d2h|bidir)/": 0.5})).read_text())
    gen4["context"]["profile.host_link"] = "PCIe gen4 x16"  # half the link: a cohort of its own, not a fault
    paths.append(synth.write(tmp_path / "n020_1.json", gen4))
    paths += [node(tmp_path, 30 + i, driver="570.86.15", slow=H2D_SLOW) for i in range(2)]
    rep = analyse(node_runs.read_files(paths))
    assert sorted((c.label, c.gpus) for c in rep.cohorts) == [
        ("H100 80GB HBM3, PCIe gen4 x16, node of one GPU, preset default, gate on", 1),
        ("H100 80GB HBM3, PCIe gen5 x16, node of one GPU, preset default, gate on", 12),
        ("H200, PCIe gen5 x16, node of one GPU, preset default, gate on", 2)]
    not_judged = sorted(p.host for p in rep.problems if p.kind == "not judged")
    assert not_judged == ["n010", "n011", "n020"] and not any(p.counted for p in rep.problems)
    # The driver is not part of a cohort unless asked: two nodes on another driver stand out from the rest.
    assert hosts(rep) == {"n030", "n031"}
    split = analyse(node_runs.read_files(paths), split_driver=True, min_cohort=2)
    assert hosts(split) == set() and len(split.cohorts) == 4


def test_a_filtered_run_is_a_cohort_of_its_own(tmp_path):
    """A node that ran a part of the matrix (gpu_bench.filter) is neither counted in nor judged against its
    preset's cohort: its rounds held other cases."""
    paths = [node(tmp_path, i) for i in range(8)]
    part = json.loads(Path(node(tmp_path, 8, slow=H2D_SLOW)).read_text())
    part["context"]["gpu_bench.filter"] = "^Transfer/dir:h2d/"
    paths.append(synth.write(tmp_path / "n008_1.json", part))
    rep = analyse(node_runs.read_files(paths))
    assert sorted((c.label, c.gpus) for c in rep.cohorts) == [
        ("H100 80GB HBM3, PCIe gen5 x16, node of one GPU, preset default, filter ^Transfer/dir:h2d/, gate on", 1),
        ("H100 80GB HBM3, PCIe gen5 x16, node of one GPU, preset default, gate on", 8)]
    assert hosts(rep) == set()


def test_a_node_that_ran_on_a_busy_host_is_named_in_a_note(tmp_path, capsys):
    """A node whose other processes used 10% or more of its CPU time (gpu_bench.round_host) gets a note in
    every format; a quiet node and one without the record get none."""
    paths = [node(tmp_path, i, extra_context={"gpu_bench.round_host": "round_1=0.90/0.02/50 last=0.80/0.01/40"})
             for i in range(7)]
    paths.append(node(tmp_path, 7))
    paths.append(node(tmp_path, 8, extra_context={"gpu_bench.round_host": "round_1=49.90/0.40/90 last=50.00/0.10/95"}))
    rep = analyse(node_runs.read_files(paths))
    busy = [n for n in rep.notes if "busy host" in n]
    assert len(busy) == 1 and busy[0].startswith("n008 ran on a busy host: other processes used 50.0% of its CPU "
                                                 "time in the median round (gpu_bench.round_host; "), busy
    code, out, _ = run_cli(cli_fleet.main, [*paths, "--format", "json"], capsys)
    assert code == 0 and [n for n in json.loads(out)["notes"] if "busy host" in n] == busy


def test_multi_gpu_nodes_name_the_gpu_and_the_pair(tmp_path):
    paths = []
    for i in range(10):
        slow = {r"^Transfer/dir:h2d/.*/device:2$": 0.7} if i == 3 else None
        doc = synth.make_multi_run(gpus=4, seed=2000 + i, host=f"m{i:02d}", slow=slow, reps=1,
                                   links={(0, 1): "pcie_switch"} if i == 5 else None,
                                   date=f"2025-02-01T03:{i:02d}:00+00:00")
        for g in range(4):
            doc["context"][f"gpu.{g}.uuid"] = f"GPU-m{i:02d}-{g}"
        doc["context"]["gpu.uuid"] = "GPU-m{i:02d}-0"
        paths.append(synth.write(tmp_path / f"m{i:02d}.json", doc))
    rep = analyse(node_runs.read_files(paths))
    assert {(g.host, g.index, g.uuid) for g, _ in rep.ranked()} == {
        ("m03", "2", "GPU-m03-2"), ("m05", "0->1", "GPU-m05-0 -> GPU-m05-1"),
        ("m05", "1->0", "GPU-m05-1 -> GPU-m05-0")}
    cohorts = {c.label: c.gpus for c in rep.cohorts}
    assert cohorts["H100 80GB HBM3, PCIe gen5 x16, node of several GPUs, preset ?, gate on"] == 40
    assert all(f.case.startswith(("Peer/src:0/dst:1/peer_access:on", "Peer/src:1/dst:0/peer_access:on",
                                  "PeerLatency/src:0/dst:1/peer_access:on", "PeerLatency/src:1/dst:0/peer_access:on",
                                  "Transfer/dir:h2d/")) for f in rep.flags)
    assert not any("/device:" in f.case for f in rep.flags)


def test_nodes_without_a_usable_result_are_reported_not_dropped(tmp_path, capsys):
    paths = [node(tmp_path, i) for i in range(9)]
    trunc = tmp_path / "n050.json"
    trunc.write_text(Path(paths[0]).read_text()[:5000])
    failing = json.loads(Path(node(tmp_path, 51)).read_text())
    for e in failing["benchmarks"]:
        if "mem:pinned" in e["name"]:
            e.update(error_occurred=True, error_message="verification failed: 3 of 256 words differ")
    plain = synth.write(tmp_path / "n053.json", synth.make_run(schema=None, families=("Transfer",)))
    expect = tmp_path / "hosts.txt"
    expect.write_text("# every node of the partition\n" + "".join(f"n{i:03d}\n" for i in (*range(9), 50, 51, 52, 53)))
    args = [*paths, str(trunc), synth.write(tmp_path / "n051.json", failing), str(tmp_path / "n052.json"), plain,
            "--expect", str(expect)]
    code, out, err = run_cli(cli_fleet.main, args, capsys)
    assert code == 1 and "0 flagged" in err and "4 problem(s)" in err, out
    lines = [ln.split() for ln in out.splitlines()]
    kinds = {ln[0] for ln in lines if ln}
    assert {"unreadable", "missing", "failed"} <= kinds
    assert "truncated JSON" in out and "plain Google Benchmark JSON" in out and "n052.json: no such file" in out
    assert "21 case(s) failed, e.g. Transfer/dir:h2d/mem:pinned/bytes:1024 on GPU 0: error: verification" in out
    code, out, _ = run_cli(cli_fleet.main, [*args, "--format", "csv"], capsys)
    rows = list(csv.DictReader(io.StringIO(out)))
    assert sorted(r["kind"] for r in rows) == ["failed cases", "missing", "unreadable", "unreadable"]
    code, out, _ = run_cli(cli_fleet.main, [*args, "--format", "json"], capsys)
    failed = [p for p in json.loads(out)["problems"] if p["kind"] == "failed cases"][0]
    assert failed["host"] == "n051" and len(failed["cases"]) == 21 and failed["counted"]
    code, out, _ = run_cli(cli_fleet.main, [*args, "--format", "html"], capsys)
    assert out.startswith("<!DOCTYPE html>") and "n052.json: no such file" in out and "<script" not in out
    # Hosts expected but with no result at all, not even a file: missing by name.
    expect.write_text("n000\nn099\n")
    code, out, _ = run_cli(cli_fleet.main, [*paths, "--expect", str(expect)], capsys)
    assert code == 1 and "missing       n099" in out


def test_the_history_database_gives_the_same_verdicts(tmp_path, capsys, monkeypatch):
    paths = [node(tmp_path, i, slow=H2D_SLOW if i == 6 else None) for i in range(12)]
    db = str(tmp_path / "h.sqlite")
    series.ingest(db, paths[:6])
    series.ingest(db, paths[6:] + [node(tmp_path, 6, night=0)])  # the night before, when n006 was well
    files = analyse(node_runs.read_files(paths))
    code, out, _ = run_cli(cli_fleet.main, ["--db", db, "--format", "json"], capsys)
    assert code == 1 and hosts(files) == {"n006"}
    got = json.loads(out)
    assert [(f["host"], f["case"]) for f in got["flags"]] == [(f.gpu.host, f.case) for f in files.flags]
    # The files of both nights: the newer one of each node is judged, the older one is said to be superseded.
    both = analyse(node_runs.read_files(paths + [node(tmp_path, 6, night=0)]))
    assert [(f.gpu.host, f.case) for f in both.flags] == [(f.gpu.host, f.case) for f in files.flags]
    assert [(p.kind, p.host) for p in both.problems] == [("superseded", "n006")]
    monkeypatch.setenv(dburl.ENV, db)
    code, out, err = run_cli(cli_fleet.main, ["--max-age", "24"], capsys)
    assert code == 1 and out.count("stale") == 12 and "0 flagged" in err


def test_the_history_database_on_postgresql(tmp_path, pg_url, capsys, monkeypatch):
    paths = [node(tmp_path, i, slow=H2D_SLOW if i == 2 else None) for i in range(10)]
    series.ingest(pg_url, paths)
    monkeypatch.setenv(dburl.ENV, pg_url)
    code, out, err = run_cli(cli_fleet.main, ["--format", "csv"], capsys)
    assert code == 1 and {r["host"] for r in csv.DictReader(io.StringIO(out))} == {"n002"}


@pytest.mark.parametrize("args, message", [
    ([], "nothing to judge"),
    (["a.json", "--db", "h.sqlite"], "not both"),
    (["--db", "postgresql://u:secret@127.0.0.1:1/db"], "a password on the command line"),
    (["--db", "postgresql://u@127.0.0.1:1/db"], "cannot connect"),
    (["--db", "missing.sqlite"], "no history database here"),
    (["a.json", "--score", "0"], "must be more than 0"),
    (["a.json", "--min-cohort", "2"], "must be 3 or more"),
    (["a.json", "--expect", "no-such-list.txt"], "--expect no-such-list.txt: cannot read"),
])
def test_bad_usage_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys, args, message):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(dburl.ENV, raising=False)
    code, out, err = run_cli(cli_fleet.main, args, capsys)
    assert code == 2 and message in err and "secret" not in err
    assert err.splitlines()[-1].startswith("gpu-bench-fleet: error: ") and err.count("error") == 1


def test_a_real_process_prints_one_line_and_imports_lightly(tmp_path):
    import socket
    import subprocess
    import sys

    from conftest import subprocess_env

    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    env = dict(subprocess_env(), GPU_BENCH_DB=f"postgresql://nightly:Pa55-in-env@127.0.0.1:{port}/db")
    p = subprocess.run([sys.executable, "-m", "gpu_bench_tools.cli.fleet"], capture_output=True, text=True, env=env,
                       timeout=60)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "cannot connect" in p.stderr, p.stderr
    assert "Traceback" not in p.stderr and "Pa55-in-env" not in p.stderr and "nightly:***@" in p.stderr
    code = ("import sys, gpu_bench_tools.fleet.cohorts, gpu_bench_tools.fleet.node_runs, gpu_bench_tools.fleet.render, "
            "gpu_bench_tools.cli.fleet, gpu_bench_tools.history.dburl, gpu_bench_tools.history.store\n"
            "heavy = [m for m in ('matplotlib', 'scipy', 'numpy', 'sqlalchemy') if m in sys.modules]\n"
            "print(heavy); sys.exit(1 if heavy else 0)")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=subprocess_env(), timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr


# Committed runs: the default run of every GPU of a node of four H100s and that of its GPU 0 alone, and the first
# default run of each committed H100 that was the only GPU of its host.
H100X4 = [synth_fleet.REPO / "results/multi/h100x4_b03a548" / f"default_{k}_h100x4.json.gz" for k in ("all", "node")]
H100_HOSTS = sorted((synth_fleet.REPO / "results/aa").glob("h100_default_*/default_h100_run1.json*"))
SEVERAL = "node of several GPUs"


@pytest.fixture(scope="module")
def committed_h100():
    return node_runs.read_files([*H100X4, *H100_HOSTS], jobs=1)


def copy_of_node(run: node_runs.NodeRun, i: int, slow_gpu: str | None = None) -> node_runs.NodeRun:
    """The node's run as another node of the same kind would give it: its own host and GPUs; with slow_gpu, that
    GPU's every small copy twice as slow."""
    ctx = dict(run.context, host_name=f"copy{i}")
    for k in [k for k in ctx if k.endswith(".uuid")]:
        ctx[k] = f"{ctx[k]}-copy{i}"
    figs = [(key, m, u, b, v * 2 if slow_gpu is not None and key.startswith("SmallCopy/")
             and key.endswith(f"/device:{slow_gpu}") and v is not None else v, n, e)
            for key, m, u, b, v, n, e in run.figures]
    return node_runs.NodeRun(f"copy{i}.json", ctx, run.run_time, figs)


def test_committed_nodes_of_several_gpus_have_cohorts_of_their_own(committed_h100):
    """The host of a node of four H100s reads a 4-byte copy in about 5.2 us, a host of one H100 in 2.7 to 3.5 us:
    GPUs are judged among GPUs of their node's shape, and none of the node's is flagged for its shape."""
    rep = analyse(committed_h100)
    node = set(committed_h100[0].context[f"gpu.{i}.uuid"] for i in range(4))
    for g in rep.gpus:
        assert (SEVERAL in g.cohort) == any(u in g.uuid for u in node), (g.uuid, g.cohort)
    assert not [g.uuid for g, _ in rep.ranked() if any(u in g.uuid for u in node)]
    assert {c.label for c in rep.cohorts if SEVERAL in c.label} == {
        f"{m}, PCIe gen5 x16, {SEVERAL}, preset default, gate on" for m in ("H100 80GB HBM3", "4 x H100 80GB HBM3")
    } | {f"H100 80GB HBM3, PCIe gen5 x16, {SEVERAL}, preset default, gate on, host CPU Intel(R) Xeon(R) Processor, "
         "64 CPUs"}


def test_small_copies_twice_as_slow_on_one_gpu_of_a_node_are_flagged(committed_h100):
    """Three nodes of four H100s (the committed one and two like it), GPU 2 of one with every small copy
    twice as slow, beside the committed hosts of one H100: that GPU is flagged, in its node shape's cohort."""
    whole = committed_h100[0]
    rep = analyse([*committed_h100, copy_of_node(whole, 1), copy_of_node(whole, 2, slow_gpu="2")])
    flagged = {(g.host, g.index) for g, _ in rep.ranked() if SEVERAL in g.cohort[2]}
    assert flagged == {("copy2", "2")}, flagged
    rows = [f for f in rep.flags if f.gpu.host == "copy2"]
    assert len(rows) >= 10 and all(f.case.startswith("SmallCopy/") for f in rows)
    assert {f.cohort for f in rows} == {f"H100 80GB HBM3, PCIe gen5 x16, {SEVERAL}, preset default, gate on"}
    assert {f.cohort_size for f in rows} == {12}


def test_nothing_judged_exits_3_with_one_line(tmp_path, capsys):
    paths = [node(tmp_path, i) for i in range(5)]
    db = str(tmp_path / "h.sqlite")
    series.ingest(db, paths)
    for args in (paths, ["--db", db]):
        code, out, err = run_cli(cli_fleet.main, args, capsys)
        assert code == cli_fleet.EXIT_NOT_JUDGED == 3, out
        assert err == ("gpu-bench-fleet: nothing judged: no cohort has a case held by --min-cohort 8 GPU units or "
                       "more: H100 80GB HBM3, PCIe gen5 x16, node of one GPU, preset default, gate on "
                       "(5 GPU unit(s))\n")
    # One cohort judged, one too small: exit 3 still, as the small one's GPUs are not vouched for.
    paths += [node(tmp_path, 5 + i) for i in range(5)] + [node(tmp_path, 20, gpu="H200")]
    code, out, err = run_cli(cli_fleet.main, paths, capsys)
    assert code == 3 and err.count("\n") == 1 and err.startswith("gpu-bench-fleet: 1 of 2 cohort(s) not judged"), err
    assert "H200, PCIe gen5 x16, node of one GPU, preset default, gate on (1 GPU unit(s))" in err
    # A flagged GPU or a node's problem outranks it: exit 1.
    paths[0] = node(tmp_path, 0, slow=H2D_SLOW)
    code, _, err = run_cli(cli_fleet.main, paths, capsys)
    assert code == 1 and "1 flagged" in err and "1 cohort(s) not judged" in err


def test_one_node_is_one_machine_in_the_history_and_the_fleet(tmp_path, capsys, monkeypatch):
    """The committed runs of GPU 0 of a node of four H100s and of all four: one machine, one node of four GPUs."""
    monkeypatch.delenv(dburl.ENV, raising=False)
    db = str(tmp_path / "h.sqlite")
    series.ingest(db, H100X4)
    with series.store.session(db) as conn:
        machines = series.machines(conn)
        assert [m.label for m in machines.values()] == ["4 x H100 80GB HBM3 [GPU-01160935] on vm"]
        runs = series.runs_of(conn, next(iter(machines)))
    assert [r.facts["GPUs measured"] for r in runs] == ["0", "all"]
    code, out, err = run_cli(cli_fleet.main, ["--db", db], capsys)
    assert out.startswith("1 node(s), 4 GPU(s) (and 12 GPU pair(s), 1 whole node(s)) in 3 cohort(s): 0 flagged")
    assert code == 3 and err.count("\n") == 1 and "nothing judged" in err, err
