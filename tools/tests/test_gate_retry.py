"""gpu-bench-gate measures a figure beyond its expectation again before it calls the node degraded.

A stand-in gpu_bench (a Python script written here) writes planted copies of a committed gate run to the
--benchmark_out it is given, one copy a call, and notes the arguments of each call."""

from __future__ import annotations

import json
import re
import socket
import sys
from pathlib import Path

import gatefiles as gf
import pytest
from conftest import run_cli

from gpu_bench_tools.cli import export as cli_export
from gpu_bench_tools.cli.gate import main
from gpu_bench_tools.reading.load import load_file

# A committed gate run with its round settings in the context (gpu_bench.rounds and the rest).
RUN = gf.REPO / "results" / "gate" / "gate_h200_8c1870c.json"
H2D = "Transfer/dir:h2d/mem:pinned/bytes:268435456/"
STUB = """#!{python}
import json, sys
from pathlib import Path
here = Path(__file__).parent
with open(here / "calls.jsonl", "a") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")
planted = json.loads((here / "planted.json").read_text())
calls = len((here / "calls.jsonl").read_text().splitlines())
out = next(a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--benchmark_out="))
Path(out).write_text(Path(planted[min(calls, len(planted)) - 1]).read_text())
"""


def run_of_this_host(doc: dict) -> dict:
    """The run as if measured here: the gate measures again only on the host that made the run."""
    doc["context"]["host_name"] = socket.gethostname()
    return doc


def h2d_scaled(factor: float) -> dict:
    return run_of_this_host(gf.scaled(gf.read(RUN), H2D, "gbps", factor))


def stub(tmp_path: Path, *measurements: dict) -> Path:
    """A gpu_bench stand-in that writes `measurements` in turn, one a call (the last one again after that)."""
    folder = tmp_path / "stub"
    folder.mkdir()
    planted = [gf.write(folder / f"m{k}.json", doc) for k, doc in enumerate(measurements, 2)]
    (folder / "planted.json").write_text(json.dumps(planted))
    exe = folder / "gpu_bench"
    exe.write_text(STUB.format(python=sys.executable))
    exe.chmod(0o755)
    return exe


def calls(exe: Path) -> list[list[str]]:
    log = exe.parent / "calls.jsonl"
    return [json.loads(x) for x in log.read_text().splitlines()] if log.exists() else []


def gate(capsys, *argv):
    code, out, err = run_cli(main, [str(a) for a in argv], capsys)
    return code, out.splitlines(), err


def h2d_line(lines: list[str]) -> str:
    (line,) = [x for x in lines if re.match(r"  \S+ +GPU 0  h2d {2,}", x)]
    return line


def test_a_figure_slow_once_passes_on_a_second_measurement(tmp_path, capsys):
    slow = h2d_scaled(0.8)
    results = tmp_path / "gate.json"
    exe = stub(tmp_path, h2d_scaled(1.0))
    slow["context"]["executable"] = str(exe)  # the run's own gpu_bench, found without --gpu-bench
    gf.write(results, slow)
    before = results.read_bytes()
    code, lines, err = gate(capsys, results)
    assert code == 0 and err == "", (lines, err)
    assert lines[0] == "PASS: 8 figures within expectations, 1 on a second measurement on GPU 0 H200", lines[0]
    first = f"{gf.entry(slow, H2D)['gbps']:.5g}"
    again = f"{gf.entry(gf.read(RUN), H2D)['gbps']:.5g}"
    line = h2d_line(lines)
    assert line.startswith("  ok    GPU 0  h2d  ") and f" {again} GB/s " in line, line
    assert line.endswith(f"passed on a second measurement (before: {first} GB/s)"), line
    # One call, for the one slow case, as the run was measured: the same device and round settings; no
    # --preset=gate, which selects its own cases and refuses a filter.
    (args,) = calls(exe)
    assert f"--benchmark_filter=^({H2D}manual_time)$" in args, args
    assert {"--device=0", "--rounds=3", "--link_rounds=5", "--link_max_rounds=15", "--noise=0.5",
            "--max_time_per_case=0.5", "--target_detectable=1.5", "--benchmark_out_format=json"} <= set(args), args
    assert not any(a.startswith("--preset") for a in args), args
    # The measurement is kept beside the run, which is left as it was.
    kept = tmp_path / "gate.retry1.json"
    assert kept.is_file() and f"  note: the second measurement is kept in {kept}" in lines
    assert results.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gate.json", "gate.retry1.json", "stub"]


def test_a_figure_slow_every_time_is_degraded_naming_each_value(tmp_path, capsys):
    results = gf.write(tmp_path / "gate.json", h2d_scaled(0.8))
    exe = stub(tmp_path, h2d_scaled(0.81), h2d_scaled(0.79))
    code, lines, _ = gate(capsys, results, "--gpu-bench", exe, "--retries", "2")
    values = [f"{gf.entry(gf.read(RUN), H2D)['gbps'] * k:.5g}" for k in (0.8, 0.81, 0.79)]
    assert code == 1, lines
    assert lines[0] == f"DEGRADED: h2d {', '.join(values)} GB/s < 49.94 on GPU 0 H200", lines[0]
    line = h2d_line(lines)
    assert line.startswith("  LOW   GPU 0  h2d  ") and f"3 measurements: {', '.join(values)} GB/s" in line, line
    assert len(calls(exe)) == 2
    assert [p.name for p in sorted(tmp_path.glob("gate.retry*.json"))] == ["gate.retry1.json", "gate.retry2.json"]


def test_a_figure_slow_twice_passes_on_a_third_measurement(tmp_path, capsys):
    results = gf.write(tmp_path / "gate.json", h2d_scaled(0.8))
    exe = stub(tmp_path, h2d_scaled(0.8), h2d_scaled(1.0))
    code, lines, _ = gate(capsys, results, "--gpu-bench", exe, "--retries", "3")
    assert code == 0 and "1 on a third measurement" in lines[0], lines
    assert "passed on a third measurement (before: " in h2d_line(lines)
    assert len(calls(exe)) == 2  # the third passed: no fourth


def test_no_retries_judges_the_one_measurement_and_runs_nothing(tmp_path, capsys):
    results = gf.write(tmp_path / "gate.json", h2d_scaled(0.8))
    exe = stub(tmp_path, h2d_scaled(1.0))
    code, lines, err = gate(capsys, results, "--gpu-bench", exe, "--retries", "0")
    assert code == 1 and lines[0].startswith("DEGRADED: h2d ") and err == "", (lines, err)
    assert calls(exe) == [] and not list(tmp_path.glob("*.retry*"))


@pytest.mark.parametrize("how", ["not executable", "fails as without a GPU"])
def test_a_gpu_bench_that_cannot_run_leaves_the_verdict_on_one_measurement(how, tmp_path, capsys):
    results = gf.write(tmp_path / "gate.json", h2d_scaled(0.8))
    exe = tmp_path / "gpu_bench"
    if how == "not executable":
        exe.write_text("#!/bin/sh\nexit 0\n")
        exe.chmod(0o644)
        why = f"--gpu-bench {exe} is not an executable file"
    else:
        exe.write_text('#!/bin/sh\necho "gpu_bench: no CUDA GPU is visible" >&2\nexit 1\n')
        exe.chmod(0o755)
        why = f"{exe} wrote no results (exit 1: gpu_bench: no CUDA GPU is visible)"
    code, lines, err = gate(capsys, results, "--gpu-bench", exe)
    once, one_lines, _ = gate(capsys, results, "--retries", "0")
    assert (code, lines) == (once, one_lines) and code == 1, lines
    assert err == f"gpu-bench-gate: could not measure again: {why}; the verdict rests on one measurement\n", err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gate.json", "gpu_bench"]  # nothing left behind


def test_a_run_of_another_host_is_not_measured_here(tmp_path, capsys):
    doc = h2d_scaled(0.8)
    doc["context"]["host_name"] = "another-node"
    exe = stub(tmp_path, h2d_scaled(1.0))
    code, _, err = gate(capsys, gf.write(tmp_path / "gate.json", doc), "--gpu-bench", exe)
    assert code == 1 and calls(exe) == []
    assert err.startswith("gpu-bench-gate: could not measure again: the run is of host another-node, "), err


def test_a_measurement_of_another_gpu_is_not_used(tmp_path, capsys):
    other = h2d_scaled(1.0)
    other["context"]["gpu.uuid"] = other["context"]["gpu.0.uuid"] = "GPU-00000000-0000-0000-0000-000000000000"
    exe = stub(tmp_path, other)
    code, lines, err = gate(capsys, gf.write(tmp_path / "gate.json", h2d_scaled(0.8)), "--gpu-bench", exe)
    assert code == 1 and lines[0].startswith("DEGRADED: h2d "), lines
    assert "it measured another GPU 0 (GPU-00000000-0000-0000-0000-000000000000, not GPU-" in err, err


def test_the_export_judges_the_measurements_the_gate_kept(tmp_path, capsys):
    """gpu-bench-export reads RESULTS.retryN.json beside the run, so both tools give one verdict."""
    results = gf.write(tmp_path / "gate.json", h2d_scaled(0.8))
    assert gate(capsys, results, "--gpu-bench", stub(tmp_path, h2d_scaled(1.0)))[0] == 0
    code, out, _ = run_cli(cli_export.main, ["--out", str(tmp_path / "textfile"), results], capsys)
    assert code == 0 and out.endswith("; gate PASS\n"), out
    # A measurement older than the run (a file of an earlier night of the same name) is not used.
    old = h2d_scaled(1.0)
    old["context"]["date"] = "2026-01-01T00:00:00+00:00"
    gf.write(tmp_path / "gate.retry1.json", old)
    code, out, err = run_cli(cli_export.main, ["--out", str(tmp_path / "textfile"), results], capsys)
    assert code == 0 and out.endswith("; gate DEGRADED\n") and "it is older than the run" in err, (out, err)


def test_the_filter_matches_exactly_the_names_given():
    from gpu_bench_tools.fleet.measure_again import exact_names_filter

    names = ["Transfer/dir:h2d/mem:pinned/bytes:268435456/device:1/manual_time", "X/a:b.c(d)+[e]|f$/manual_time"]
    rx = re.compile(exact_names_filter(names))
    assert all(rx.search(n) for n in names)
    for near in ("Transfer/dir:h2d/mem:pinned/bytes:268435456/device:10/manual_time",
                 "Transfer/dir:h2d/mem:pinned/bytes:2684354560/device:1/manual_time",
                 "X/a:bxc(d)+[e]|f$/manual_time", "X/a:b.c(d)+[e]"):
        assert not rx.search(near), near


def test_a_node_run_of_every_gpu_is_measured_again_on_every_gpu():
    """A --device=all run's case names end in /device:N only under --device=all: the retry keeps it."""
    from gpu_bench_tools.fleet.measure_again import gpu_bench_args, retry_path

    f = load_file(gf.GATE_H200X4, require_figures=False)
    args = gpu_bench_args(f, ["Transfer/dir:h2d/mem:pinned/bytes:268435456/device:3/manual_time"], "/x/out.json")
    assert "--device=all" in args and "--rounds=3" in args and "--benchmark_out=/x/out.json" in args, args
    assert retry_path("/r/gate.json", 2) == Path("/r/gate.retry2.json")
    assert retry_path("/r/default_h100.json.gz", 1) == Path("/r/default_h100.retry1.json")
