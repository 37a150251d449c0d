"""history check: series per configuration, each case against its own nights, attribution, noise, exit statuses."""

import copy
import json
import re
from pathlib import Path

import pytest

import synth
from conftest import REPO, run_cli
from gpu_bench_tools.cli import history as cli_history

H100 = REPO / "results" / "transfer_h100_reps5.json"
FAMS = ("Transfer",)


def check(db, capsys, *extra):
    return run_cli(cli_history.main, ["--db", str(db), "check", *extra], capsys)


def ingest(db, paths, capsys):
    code, out, err = run_cli(cli_history.main, ["--db", str(db), "ingest", *map(str, paths)], capsys)
    assert code == 0, err


def real_night(src, day, rep, tmp_path):
    """One 'night' made of one repetition of a committed run."""
    doc = {"context": dict(src["context"], date=f"2026-02-{day:02d}T02:00:00+00:00"), "benchmarks": []}
    for e in src["benchmarks"]:
        if e.get("run_type") == "iteration" and e.get("repetition_index") == rep:
            doc["benchmarks"].append(dict(e, repetition_index=0, repetitions=1))
    p = tmp_path / f"real_{day}.json"
    p.write_text(json.dumps(doc))
    return p


def slower(doc, pattern, factor):
    for e in doc["benchmarks"]:
        if re.search(pattern, e["name"]) and e.get("run_type") == "iteration" and not e.get("error_occurred"):
            e["real_time"] *= factor
            e["cpu_time"] *= factor
            for k in ("gbps", "bytes_per_second"):
                if k in e:
                    e[k] /= factor
    return doc


@pytest.fixture(scope="module")
def h100():
    return json.loads(H100.read_text())


def test_noise_only_nights_from_real_repetitions_pass(h100, tmp_path, capsys):
    ingest(tmp_path / "h.sqlite", [real_night(h100, k + 1, k, tmp_path) for k in range(5)], capsys)
    code, out, err = check(tmp_path / "h.sqlite", capsys)
    assert code == 0, out
    assert "300 cases checked: 0 regression(s)" in out


def test_a_15_percent_slower_night_on_pinned_copies_fails(h100, tmp_path, capsys):
    nights = [real_night(h100, k + 1, k, tmp_path) for k in range(5)]
    slow = slower(copy.deepcopy(h100), r"/mem:pinned/", 1.15)
    slow["context"]["date"] = "2026-02-06T02:00:00+00:00"
    slow["benchmarks"] = [e for e in slow["benchmarks"] if e.get("run_type") == "iteration"]
    p = tmp_path / "slow.json"
    p.write_text(json.dumps(slow))
    ingest(tmp_path / "h.sqlite", [*nights, p], capsys)
    code, out, err = check(tmp_path / "h.sqlite", capsys)
    assert code == 1, out
    regressions = [ln for ln in out.splitlines() if ln.strip().startswith("REGRESSION")]
    assert len(regressions) >= 20 and all("/mem:pinned/" in ln for ln in regressions)
    assert all("13.0% worse" in ln or re.search(r"1[0-9]\.\d% worse", ln) for ln in regressions)


def night(tmp_path, n, **kw):
    kw.setdefault("families", FAMS)
    kw.setdefault("seed", 500 + n)
    doc = synth.make_run(date=f"2025-03-{n:02d}T02:00:00+00:00", **kw)
    return synth.write(Path(tmp_path) / f"n{n:02d}.json", doc)


def test_a_change_is_attributed_to_the_run_and_the_fact_that_brought_it(tmp_path, capsys):
    slow = {"Transfer/dir:d2h/mem:pinned": 0.8}
    paths = [night(tmp_path, n) for n in range(1, 6)]
    paths += [night(tmp_path, n, git="def5678", slow=slow) for n in range(6, 9)]
    ingest(tmp_path / "h.sqlite", paths, capsys)
    code, out, _ = check(tmp_path / "h.sqlite", capsys)
    assert code == 1, out
    assert out.count("REGRESSION") == 7
    assert "since 2025-03-06T02:00:00+00:00 (2 run(s) ago); there: gpu_bench.git abc1234 -> def5678" in out


def test_a_change_an_older_driver_brought_is_not_blamed_on_the_newest(tmp_path, capsys):
    slow = {"Transfer/dir:h2d/mem:pinned": 0.8}
    paths = [night(tmp_path, n, driver="570.86.15") for n in range(1, 6)]
    paths += [night(tmp_path, n, driver="580.65.06", slow=slow) for n in range(6, 10)]
    paths.append(night(tmp_path, 10, driver="580.159.04", slow=slow))
    ingest(tmp_path / "h.sqlite", paths, capsys)
    code, out, _ = check(tmp_path / "h.sqlite", capsys)
    assert code == 0, out
    assert "CONFIGURATION CHANGE: driver 580.65.06 -> 580.159.04." in out
    assert "0 worse and 0 better with the new configuration" in out
    assert "570.86.15" not in out  # the driver that had the other level is not in the comparison


def test_a_runtime_only_change_is_named_as_such(tmp_path, capsys):
    paths = [night(tmp_path, n) for n in range(1, 5)]
    doc = synth.make_run(date="2025-03-05T02:00:00+00:00", families=FAMS, seed=505)
    doc["context"]["runtime.version"] = "13.1"
    paths.append(synth.write(tmp_path / "rt.json", doc))
    ingest(tmp_path / "h.sqlite", paths, capsys)
    code, out, _ = check(tmp_path / "h.sqlite", capsys)
    assert code == 0 and "CONFIGURATION CHANGE: CUDA runtime 13.0 -> 13.1." in out and "driver 580" not in \
        out.split("CONFIGURATION CHANGE")[1].split(".")[0]


@pytest.mark.parametrize("fact,value,text", [
    ("gpu_bench.gate", "off", "gate on -> off"),
    ("host.numa_binding", "node 1", "host.numa_binding ? -> node 1"),
    ("host.thread_cpu", "fast state of 16 held", "host.thread_cpu ? -> fast state of 16 held"),
    ("gpu_bench.placements", "8", "gpu_bench.placements ? -> 8"),
    ("gpu_bench.filter", "^Transfer/", "filter ? -> ^Transfer/"),
])
def test_settings_start_a_series_of_their_own(tmp_path, capsys, fact, value, text):
    paths = [night(tmp_path, n) for n in range(1, 5)]
    paths.append(night(tmp_path, 5, extra_context={fact: value}, slow={"Transfer/dir:h2d": 0.7}))
    ingest(tmp_path / "h.sqlite", paths, capsys)
    code, out, _ = check(tmp_path / "h.sqlite", capsys)
    assert code == 0 and f"CONFIGURATION CHANGE: {text}." in out and " changed " in out


def test_an_outlier_in_a_single_repetition_run_is_reported_but_not_counted(tmp_path, capsys):
    paths = [night(tmp_path, n, reps=1) for n in range(1, 6)]
    paths.append(night(tmp_path, 6, reps=1, slow={"Transfer/dir:h2d/mem:pinned/bytes:268435456": 0.7}))
    ingest(tmp_path / "h.sqlite", paths, capsys)
    code, out, _ = check(tmp_path / "h.sqlite", capsys)
    assert code == 0, out
    assert "unconfirmed  Transfer/dir:h2d/mem:pinned/bytes:268435456" in out and "1 unconfirmed" in out
    # The next night at the same level confirms it.
    ingest(tmp_path / "h.sqlite", [night(tmp_path, 7, reps=1, slow={
        "Transfer/dir:h2d/mem:pinned/bytes:268435456": 0.7})], capsys)
    code, out, _ = check(tmp_path / "h.sqlite", capsys)
    assert code == 1 and "REGRESSION   Transfer/dir:h2d/mem:pinned/bytes:268435456" in out


def test_many_noisy_nights_raise_nothing(tmp_path, capsys):
    ingest(tmp_path / "h.sqlite", [night(tmp_path, n, noise=0.02) for n in range(1, 29)], capsys)
    code, out, _ = check(tmp_path / "h.sqlite", capsys)
    assert code == 0, out


def test_unknown_metric_and_unmatched_case_are_usage_errors(tmp_path, capsys):
    ingest(tmp_path / "h.sqlite", [night(tmp_path, n) for n in range(1, 4)], capsys)
    code, _, err = check(tmp_path / "h.sqlite", capsys, "--metric", "bogus")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "--metric 'bogus': no case has it; metrics: bytes_per_second, cpu_time, gbps" in err
    code, _, err = check(tmp_path / "h.sqlite", capsys, "--case", "NoSuchFamily")
    assert code == 2 and "--case 'NoSuchFamily' matches no case; cases: Transfer/" in err and " more" in err
    code, out, _ = check(tmp_path / "h.sqlite", capsys, "--metric", "host_blocked_us", "--case", "h2d")
    assert code == 0 and "cases checked" in out
    for bad in (["--alpha", "2"], ["--alpha", "0"], ["--window", "0"], ["--threshold", "-1"]):
        code, _, err = check(tmp_path / "h.sqlite", capsys, *bad)
        assert code == 2 and "Traceback" not in err


def test_long_lists_say_how_many_more(tmp_path, capsys):
    paths = [night(tmp_path, n, full=True) for n in range(1, 5)]
    paths.append(night(tmp_path, 5, full=True, slow={"Transfer/dir:(h2d|d2h)": 0.7}))
    ingest(tmp_path / "h.sqlite", paths, capsys)
    code, out, err = check(tmp_path / "h.sqlite", capsys)
    assert code == 1
    assert re.search(r"^  \.\.\. and \d+ more$", out, re.M)
