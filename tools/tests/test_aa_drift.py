"""gpu-bench-aa drift, and what the tools say of when a run started after its host did."""

import gzip
import json
import math

import synth
from conftest import REPO, run_cli
from gpu_bench_tools.aa import drift
from gpu_bench_tools.aa.analysis import report
from gpu_bench_tools.aa.figures import run_time
from gpu_bench_tools.aa.render import render
from gpu_bench_tools.cli import aa as cli_aa
from gpu_bench_tools.cli.common import EXIT_BAD_INPUT, EXIT_OK
from gpu_bench_tools.compare.verdicts import compare
from gpu_bench_tools.history.check import context_change
from gpu_bench_tools.history.series import Run
from gpu_bench_tools.reading.load import load_files

SPEEDING = "Transfer/dir:bidir/mem:pinned/bytes:268435456"


def series(tmp_path, runs=12, uptime=True, speedup_per_run=0.006, slow_phase=(), spacing_s=60):
    """`runs` one-round runs `spacing_s` apart from two minutes after the host started; SPEEDING gets faster
    by `speedup_per_run` each run, and 10% slower in the runs numbered in `slow_phase` (as a host link loaded
    for a few minutes); every other case holds still."""
    paths = []
    for i in range(runs):
        extra = {"host.uptime_s": str(120 + spacing_s * i)} if uptime else None
        # synth's `slow` divides the case's time
        factor = (1 + speedup_per_run) ** i / (1.10 if i in slow_phase else 1.0)
        doc = synth.make_run(seed=7 + i, reps=1, noise=0.002, families=("Transfer",), errors=False,
                             aggregates=False, slow={SPEEDING: factor},
                             date=f"2025-01-07T02:{i:02d}:00+00:00", extra_context=extra)
        # Written out of order: drift orders the runs by when they started, not by name.
        paths.append(synth.write(tmp_path / f"run_{(i * 5) % runs:02d}.json", doc))
    return paths


def test_a_case_that_speeds_up_run_after_run_is_found_and_the_others_are_not(tmp_path):
    clock, starts, drifts = drift.drift_of_files(load_files(series(tmp_path)))
    assert "host.uptime_s" in clock and starts == [120 + 60 * i for i in range(12)]
    by_key = {d.key: d for d in drifts}
    moving = by_key[SPEEDING]
    assert moving.rho < -0.9 and moving.p_value < 1e-4
    # Eight runs apart (the thirds' middles) at 0.6% a run: about 4.7% faster.
    assert -5.5 < moving.change_pct < -4.0
    still = [d for k, d in by_key.items() if k != SPEEDING]
    # Cases that hold still reach p < 0.01 about one time in a hundred.
    assert len(still) > 20 and sum(d.p_value < 0.01 for d in still) <= 0.05 * len(still)
    assert all(abs(d.change_pct) < 1.0 for d in still)


def test_without_uptimes_the_runs_are_ordered_by_their_date(tmp_path):
    clock, starts, drifts = drift.drift_of_files(load_files(series(tmp_path, uptime=False)))
    assert "date" in clock and starts == [60.0 * i for i in range(12)]
    assert {d.key: d for d in drifts}[SPEEDING].rho < -0.9


def test_drift_refuses_fewer_than_six_runs_in_one_line(tmp_path, capsys):
    paths = series(tmp_path, runs=5)
    code, out, err = run_cli(cli_aa.main, ["drift", *paths], capsys)
    assert code == EXIT_BAD_INPUT and out == ""
    assert len(err.strip().splitlines()) == 1 and "at least 6" in err


def test_drift_prints_each_case(tmp_path, capsys):
    code, out, err = run_cli(cli_aa.main, ["drift", *series(tmp_path)], capsys)
    assert code == EXIT_OK, err
    line = next(x for x in out.splitlines() if x.startswith(SPEEDING + " "))
    assert line.split()[1] == "12" and line.rstrip().endswith("%")


def phase_series(tmp_path):
    """36 runs 20 s apart, 120 to 820 s after the host started; SPEEDING is 10% slower from 360 to 580 s and
    holds still otherwise: no trend, its first and last thirds alike."""
    return series(tmp_path, runs=36, speedup_per_run=0.0, slow_phase=range(12, 24), spacing_s=20)


def test_windows_find_a_slow_phase_that_a_trend_misses(tmp_path):
    files = load_files(phase_series(tmp_path))
    moving = {d.key: d for d in drift.drift_of_files(files)[2]}[SPEEDING]
    assert abs(moving.change_pct) < 1.0 and moving.p_value > 0.01
    clock, windows, cases = drift.windows_of_files(files, 120)  # windows from the host's start: 0, 120, ...
    assert windows == [(120.0 * w, 6) for w in range(1, 7)]
    by_key = {c.key: c for c in cases}
    phase = by_key[SPEEDING]
    assert phase.p_value < 0.01 and 9.0 < phase.spread_pct < 11.0
    assert max(phase.medians_s) / min(phase.medians_s) > 1.09
    still = [c for k, c in by_key.items() if k != SPEEDING]
    assert len(still) > 20 and sum(c.p_value < 0.01 for c in still) <= 0.05 * len(still)
    assert all(c.spread_pct < 1.0 for c in still)


def test_drift_prints_the_windows_and_refuses_an_empty_one(tmp_path, capsys):
    paths = phase_series(tmp_path)
    code, out, err = run_cli(cli_aa.main, ["drift", "--window", "120", *paths], capsys)
    assert code == EXIT_OK, err
    assert out.startswith("36 runs in 6 windows of 120 s, seconds after the host started")
    cells = [float(c.rstrip("%")) for c in next(x for x in out.splitlines() if x.startswith(SPEEDING + " ")).split()[1:7]]
    assert all(abs(c) < 1.0 for c in cells[:2] + cells[4:]) and all(9.0 < c < 11.0 for c in cells[2:4])
    code, out, err = run_cli(cli_aa.main, ["drift", "--window", "0", *paths], capsys)
    assert code == EXIT_BAD_INPUT and out == "" and len(err.strip().splitlines()) == 1 and "--window" in err


def _pair(tmp_path, uptimes):
    paths = []
    for i, up in enumerate(uptimes):
        doc = synth.make_run(seed=3 + i, families=("Transfer",), errors=False,
                             extra_context={"host.uptime_s": str(up)} if up is not None else None)
        paths.append(synth.write(tmp_path / f"r{i}.json", doc))
    return load_files(paths)


def test_compare_says_nothing_of_a_young_host(tmp_path):
    # The host's age predicts no phase of the host link (docs/methodology.md), so it is no reason for a note.
    notes = compare(_pair(tmp_path, [150, 3600])).warnings
    assert not [n for n in notes if "host.uptime_s" in n or "after their host" in n]


def test_the_aa_report_gives_each_run_its_hosts_age(tmp_path):
    files = _pair(tmp_path, [150, 3600])
    times = [run_time(f) for f in files]
    assert times[0].uptime_s == 150 and times[1].uptime_s == 3600
    assert math.isnan(run_time(_pair(tmp_path, [None])[0]).uptime_s)
    text = render(report(files))
    run_lines = [x for x in text.splitlines() if x.startswith("  run ")]
    assert run_lines[0].endswith("; started 2.5 min after its host")
    assert run_lines[1].endswith("; started 60.0 min after its host")


def test_the_hosts_age_is_no_change_between_nights():
    before = Run(1, 1, {}, "2025-01-07T02:00:00+00:00", "abc", {"host.uptime_s": "150", "driver.version": "580"})
    after = Run(2, 1, {}, "2025-01-08T02:00:00+00:00", "abc", {"host.uptime_s": "86550", "driver.version": "580"})
    assert context_change(before, after) == "nothing in the context changed"


def _with_round_host(tmp_path, texts):
    paths = []
    for i, text in enumerate(texts):
        extra = {"host.uptime_s": "600"}
        if text is not None:
            extra["gpu_bench.round_host"] = text
        doc = synth.make_run(seed=5 + i, families=("Transfer",), errors=False, extra_context=extra)
        paths.append(synth.write(tmp_path / f"h{i}.json", doc))
    return load_files(paths)


def test_the_aa_report_gives_each_run_what_else_its_host_did_in_its_rounds(tmp_path):
    files = _with_round_host(tmp_path, ["round_1=0.40/0.00/120 link_1=2.50/0.10/80 last=0.60/0.02/300",
                                        "round_1=-/-/7 last=12.00/1.50/900", None])
    first, second, silent = (run_time(f) for f in files)
    assert (first.others_pct, first.others_max_pct, first.steal_pct, first.steal_max_pct) == (0.6, 2.5, 0.02, 0.1)
    # A round whose shares are not known counts for nothing; a file without the key says nothing.
    assert (second.others_pct, second.steal_max_pct) == (12.0, 1.5)
    assert math.isnan(silent.others_pct) and math.isnan(silent.steal_pct)
    text = render(report(files))
    run_lines = [x for x in text.splitlines() if x.startswith("  run ")]
    assert run_lines[0].endswith("; other processes used 0.6% of the host's CPU time in its median round "
                                 "(most 2.5%), the hypervisor took 0.02% (most 0.10%)")
    assert "other processes used 12.0%" in run_lines[1]
    assert run_lines[2].endswith("min after its host")


def test_two_real_runs_of_one_build_change_nothing_in_the_context():
    """What a run measures of itself (its time, its round processes, its host's load) is no change between
    nights: a regression's note names the facts that differ, and these always do."""
    contexts = [json.load(gzip.open(REPO / "results/aa/host_load_h200" / f"hogs{k}_1.json.gz"))["context"]
                for k in (0, 8)]
    before, after = (Run(i, 1, {}, c["date"], "abc", c) for i, c in enumerate(contexts, 1))
    assert context_change(before, after) == "nothing in the context changed"
