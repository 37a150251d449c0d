"""gpu-bench-aa spans: how far a case's median moves with the span of time its samples cover."""

import copy

import numpy as np

import synth
from conftest import run_cli
from gpu_bench_tools.aa import spans
from gpu_bench_tools.cli import aa as cli_aa
from gpu_bench_tools.cli.common import EXIT_BAD_INPUT, EXIT_OK


def states(seed, blocks=80, per_block=50):
    """Samples of about a millisecond whose level changes every `per_block` samples (about 50 ms), each
    level drawn between 1.0 and 1.1 ms: a copy whose link changes state every few tens of milliseconds while
    the samples of one state agree to a tenth of a percent."""
    rng = np.random.default_rng(seed)
    out = []
    for level in rng.uniform(1.0e-3, 1.1e-3, blocks):
        out += list(level * (1 + 0.001 * rng.standard_normal(per_block)))
    return out


def test_windows_go_by_the_samples_own_time_and_drop_the_last_part():
    assert spans.window_medians([1.0] * 5, 2.0) == [1.0, 1.0]
    assert spans.window_medians([1.0, 3.0, 1.0, 1.0, 1.0], 2.0) == [2.0, 1.0]
    # A sample longer than the span is a window of its own.
    assert spans.window_medians([5.0, 1.0, 1.0], 2.0) == [5.0, 1.0]
    assert spans.window_medians([], 1.0) == []


def test_a_state_that_changes_every_fifty_milliseconds_moves_short_windows_more_than_long_ones():
    runs = [states(seed) for seed in range(8)]
    by_span = {s.span_s: s for s in spans.span_spread(runs, (0.01, 0.4))}
    short, long = by_span[0.01], by_span[0.4]
    # Ten milliseconds see one state: the windows spread as the levels do (uniform over 10%: about 2.8%).
    assert 2.0 < short.between_windows_pct < 3.6 and 1.0 < short.between_runs_pct < 4.5
    # Four tenths of a second hold eight of them, and their median moves far less.
    assert long.between_windows_pct < short.between_windows_pct / 2
    assert long.between_runs_pct < short.between_runs_pct / 2
    assert long.windows == 8 * 10 and short.windows > 30 * long.windows


def test_spans_reads_every_case_of_runs_with_sample_times(tmp_path, capsys):
    doc = synth.make_run(schema="2", sample_times=True, errors=False, aggregates=False, reps=1,
                         families=("Transfer",))
    paths = [synth.write(tmp_path / f"run{i}.json", copy.deepcopy(doc)) for i in range(2)]
    code, out, err = run_cli(cli_aa.main, ["spans", *paths, "--span", "0.001", "--span", "0.002"], capsys)
    assert code == EXIT_OK, err
    lines = out.splitlines()
    assert "0.001 s" in lines[1] and "0.002 s" in lines[1]
    cases = [e["name"] for e in doc["benchmarks"] if e.get("sample_times_s")]
    assert len(lines) == 2 + len(cases) and cases
    assert all(any(line.startswith(c.replace("/manual_time", "")) for line in lines[2:]) for c in cases)


def test_spans_refuses_runs_without_sample_times_in_one_line(tmp_path, capsys):
    doc = synth.make_run(schema="2", sample_times=False, errors=False, aggregates=False, reps=1,
                         families=("Transfer",))
    path = synth.write(tmp_path / "run.json", doc)
    code, out, err = run_cli(cli_aa.main, ["spans", path], capsys)
    assert code == EXIT_BAD_INPUT and out == ""
    assert len(err.strip().splitlines()) == 1 and "--samples=on" in err
