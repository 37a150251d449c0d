"""gpu-bench-gate fails a node whose GPU's error counter rose during its run (gpu.N.errors.COUNTER.start and
.end), naming the GPU and the counter; gpu-bench-export and gpu-bench-fleet carry the same reason."""

from __future__ import annotations

import gatefiles as gf
from conftest import run_cli
from prometheus_client.parser import text_string_to_metric_families

from gpu_bench_tools.cli import export as cli_export
from gpu_bench_tools.cli.gate import main
from gpu_bench_tools.fleet import cohorts, node_runs

# A committed run of two H200s made with CUDA_VISIBLE_DEVICES=1,0: CUDA's GPU 1 is NVML's GPU 0.
NODE = gf.REPO / "results" / "gate" / "gate_h200x2_cuda_order_1_0.json"
NO_COUNTERS = ("  note: no error counters were recorded (gpu.N.errors.*): a file from before gpu_bench read them, or "
               "NVML did not answer")


def with_counters(start: int, end: int) -> dict:
    """The node's run with NVML's counters as gpu_bench writes them: nvlink_replay of CUDA's GPU 1 from
    `start` to `end`, every other counter of both GPUs unchanged."""
    doc = gf.read(NODE)
    ctx = doc["context"]
    for gpu in (0, 1):
        for counter in ("pcie_replay", "nvlink_crc_flit", "nvlink_crc_data", "nvlink_replay", "nvlink_recovery"):
            ctx[f"gpu.{gpu}.errors.{counter}.start"] = ctx[f"gpu.{gpu}.errors.{counter}.end"] = "3"
    ctx["gpu.1.errors.nvlink_replay.start"], ctx["gpu.1.errors.nvlink_replay.end"] = str(start), str(end)
    return doc


def gate(capsys, path):
    code, out, err = run_cli(main, [str(path)], capsys)
    return code, out.splitlines(), err


def test_a_replay_counter_that_rose_fails_the_node_naming_the_gpu_and_counter(tmp_path, capsys):
    code, lines, _ = gate(capsys, gf.write(tmp_path / "rose.json", with_counters(0, 14)))
    assert code == 1 and lines[0] == "DEGRADED: nvlink_replay rose by 14 during the run on GPU 1 H200", lines[0]
    assert "  failed: GPU 1 (NVML index 0): nvlink_replay rose by 14 during the run (0 to 14)" in lines, lines
    assert sum(1 for x in lines if x.startswith("  ok ")) == 17  # every figure still shown, and within
    assert NO_COUNTERS not in lines


def test_counters_that_did_not_rise_pass(tmp_path, capsys):
    code, lines, _ = gate(capsys, gf.write(tmp_path / "same.json", with_counters(14, 14)))
    assert code == 0 and lines[0] == "PASS: 17 figures within expectations on 2 x H200", lines[0]
    assert "  ok    error counters: none of 10 rose at a fault's rate during the run, on 2 GPUs" in lines, lines
    assert NO_COUNTERS not in lines


def test_a_file_without_counters_passes_with_one_note(capsys):
    code, lines, _ = gate(capsys, NODE)
    assert code == 0 and lines[0].startswith("PASS: "), lines
    assert lines.count(NO_COUNTERS) == 1, lines


def test_a_counter_that_went_down_is_reported_not_failed(tmp_path, capsys):
    code, lines, _ = gate(capsys, gf.write(tmp_path / "reset.json", with_counters(14, 2)))
    assert code == 0, lines
    assert ("  note: GPU 1 (NVML index 0): nvlink_replay went down during the run (14 to 2), as after a reset: "
            "not judged") in lines, lines


def test_a_rise_is_not_measured_again(tmp_path, capsys):
    """No later measurement undoes errors a link made: the gate does not run gpu_bench for a slow figure then."""
    doc = gf.scaled(with_counters(0, 1), "Transfer/dir:d2h/mem:pinned/bytes:268435456/device:0/", "gbps", 0.5)
    never = tmp_path / "gpu_bench"
    never.write_text(f"#!/bin/sh\ntouch {tmp_path / 'ran'}\nexit 1\n")
    never.chmod(0o755)
    code, out, err = run_cli(main, [gf.write(tmp_path / "both.json", doc), "--gpu-bench", str(never)], capsys)
    assert code == 1 and out.startswith("DEGRADED: nvlink_replay rose by 1 during the run on GPU 1 H200 (+1 more)\n")
    assert err == "" and not (tmp_path / "ran").exists()


def test_the_export_and_the_fleet_carry_the_rise(tmp_path, capsys):
    rose = gf.write(tmp_path / "rose.json", with_counters(0, 14))
    code, out, _ = run_cli(cli_export.main, ["--out", str(tmp_path / "textfile"), rose], capsys)
    assert code == 0 and out.endswith("; gate DEGRADED\n"), out
    text = (tmp_path / "textfile" / "gpu_bench_gate.prom").read_text()
    samples = [s for fam in text_string_to_metric_families(text) for s in fam.samples
               if s.name == "gpu_bench_error_counter_increase"]
    assert len(samples) == 10 and sum(s.value for s in samples) == 14
    (risen,) = [s for s in samples if s.value > 0]
    assert (risen.labels["counter"], risen.labels["device"], risen.labels["gpu"]) == ("nvlink_replay", "1", "0")
    rep = cohorts.analyse(node_runs.read_files([rose]))
    (problem,) = [p for p in rep.problems if p.kind == "error counters"]
    assert problem.counted and problem.source == rose and rep.failed
    assert problem.detail == "GPU 1 (NVML index 0): nvlink_replay rose by 14 during the run (0 to 14)"



# A default run on GPU 0 of two H200s joined by 18 NVLinks (results/README.md): each GPU's nvlink_crc_data
# rose by about 2,900 in 343 s, and no replay or recovery counter rose.
TWO_H200 = gf.REPO / "results" / "aa" / "h200x2_gpu0_default_b211806" / "default_h200x2_gpu0_run1.json.gz"


def planted(counter: str, rise: int, elapsed: str | None = "10.0") -> dict:
    """The node's run with `counter` of CUDA's GPU 0 rising by `rise` over a run of `elapsed` seconds."""
    doc = with_counters(3, 3)
    ctx = doc["context"]
    ctx[f"gpu.0.errors.{counter}.end"] = str(3 + rise)
    if elapsed is None:
        del ctx["gpu_bench.elapsed_s"]
    else:
        ctx["gpu_bench.elapsed_s"] = elapsed
    return doc


def test_crc_errors_of_a_healthy_nvlink_node_are_noted_not_failed(capsys):
    code, lines, _ = gate(capsys, TWO_H200)
    assert code == 0 and lines[0] == "PASS: 11 figures within expectations on 2 x H200", lines[0]
    assert "  ok    error counters: none of 10 rose at a fault's rate during the run, on 2 GPUs" in lines, lines
    assert ("  note: GPU 0 (NVML index 0): nvlink_crc_data rose by 2934 during the run (490 to 3424), 8.56 a "
            "second; a fault from 100 a second") in lines, lines
    rep = cohorts.analyse(node_runs.read_files([str(TWO_H200)]))
    assert not [p for p in rep.problems if p.kind == "error counters"], rep.problems


def test_crc_errors_at_100_a_second_fail_the_node(tmp_path, capsys):
    code, lines, _ = gate(capsys, gf.write(tmp_path / "crc.json", planted("nvlink_crc_flit", 1000)))
    assert code == 1 and lines[0] == "DEGRADED: nvlink_crc_flit rose by 1000 during the run on GPU 0 H200", lines[0]
    assert ("  failed: GPU 0 (NVML index 1): nvlink_crc_flit rose by 1000 during the run (3 to 1003), 100 a second; "
            "a fault from 100 a second") in lines, lines
    code, lines, _ = gate(capsys, gf.write(tmp_path / "slower.json", planted("nvlink_crc_flit", 999)))
    assert code == 0 and any(x.startswith("  note: GPU 0 (NVML index 1): nvlink_crc_flit rose by 999") for x in lines)


def test_pcie_replays_fail_the_node_from_8_a_minute(tmp_path, capsys):
    code, lines, _ = gate(capsys, gf.write(tmp_path / "two.json", planted("pcie_replay", 2)))
    assert code == 1 and "12 a minute; a fault from 8 a minute" in lines[-3] + lines[-2], lines
    code, lines, _ = gate(capsys, gf.write(tmp_path / "one.json", planted("pcie_replay", 1)))
    assert code == 0 and any("6 a minute; a fault from 8 a minute" in x for x in lines), lines


def test_any_rise_fails_the_node_where_the_run_does_not_say_how_long_it_took(tmp_path, capsys):
    code, lines, _ = gate(capsys, gf.write(tmp_path / "undated.json", planted("nvlink_crc_data", 1, elapsed=None)))
    assert code == 1 and "  failed: GPU 0 (NVML index 1): nvlink_crc_data rose by 1 during the run (3 to 4)" in lines
