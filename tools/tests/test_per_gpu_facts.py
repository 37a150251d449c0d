"""Each GPU read with its own facts (gpu.N.*), and figures of the host keyed on the host's CPU as well."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import gatefiles as gf
import synth
from conftest import run_cli

from gpu_bench_tools.cli import compare as cli_compare, export as cli_export, gate as cli_gate, history as cli_history
from gpu_bench_tools.fleet import node_runs
from gpu_bench_tools.fleet.cohorts import analyse

GEN4_X8 = {5: (4, 8)}  # GPU 5 of an 8-GPU node sits in a PCIe gen4 x8 slot; the others gen5 x16
CPU_A, CPU_B = "Intel(R) Xeon(R) Platinum 8480+", "AMD EPYC 9654 96-Core Processor"
H2D = "Transfer/dir:h2d/mem:pinned/bytes:268435456"


def eight_gpu_gate_run(tmp_path: Path, name: str = "gate8.json") -> str:
    """The committed H100 gate run as a --device=all run of 8 GPUs with each GPU's own facts, GPU 5's link
    a quarter of the others' and its host copies a quarter as fast."""
    doc = gf.multi_gpu(gf.read(gf.GATE_H100), gpus=8)
    synth.add_per_gpu_facts(doc["context"], 8, GEN4_X8)
    for e in doc["benchmarks"]:
        if re.match(r"Transfer/dir:(h2d|d2h|bidir)/.*/device:5/", e["name"]):
            for k in ("gbps", "gbps_h2d", "gbps_d2h"):
                if k in e:
                    e[k] *= 0.25
    return gf.write(tmp_path / name, doc)


def expectations_of_two_links(tmp_path: Path) -> str:
    path = tmp_path / "expect.toml"
    path.write_text(f"""format = 1

[[gpu]]
name = "NVIDIA H100 80GB HBM3"
link = "PCIe gen5 x16"
about = "H100 on a full link"
  [[gpu.figure]]
  case = "{H2D}"
  metric = "gbps"
  name = "h2d"
  min = 49.37
  max = 63.02
  source = "min: 90% of 54.86; max: PCIe 5.0 x16"

[[gpu]]
name = "NVIDIA H100 80GB HBM3"
link = "PCIe gen4 x8"
about = "H100 in a gen4 x8 slot"
  [[gpu.figure]]
  case = "{H2D}"
  metric = "gbps"
  name = "h2d"
  min = 12.3
  max = 15.76
  source = "min: 90% of 13.7; max: PCIe 4.0 x8"
""")
    return str(path)


def test_the_gate_judges_gpu_5_against_its_own_link(tmp_path, capsys):
    run = eight_gpu_gate_run(tmp_path)
    code, out, _ = run_cli(cli_gate.main, [run, "--expect", expectations_of_two_links(tmp_path)], capsys)
    lines = out.splitlines()
    assert code == 0, lines
    assert lines[0] == "PASS: 8 figures within expectations on 8 x H100 80GB HBM3"
    assert "GPU 5: NVIDIA H100 80GB HBM3, PCIe gen4 x8" in lines
    assert "GPU 4: NVIDIA H100 80GB HBM3, PCIe gen5 x16" in lines
    gpu5 = [ln for ln in lines if ln.startswith("  ok    GPU 5  h2d")]
    assert len(gpu5) == 1 and "(min 12.3 max 15.76)" in gpu5[0]


def test_the_fleet_judges_gpu_5_among_gpus_of_its_own_link(tmp_path):
    """Every node's GPU 5 sits in a gen4 x8 slot: those ten form a cohort of their own, judged among
    themselves, so the one of them that is slow beyond its link is flagged and none is flagged for its link."""
    paths = []
    for i in range(10):
        slow = {r"^Transfer/.*/device:5$": 0.25 * (0.85 if i == 3 else 1.0)}
        doc = synth.make_multi_run(gpus=8, seed=3000 + i, host=f"m{i:02d}", slow=slow, reps=1,
                                   families=("Transfer",), date=f"2025-02-01T03:{i:02d}:00+00:00")
        ctx = doc["context"]
        ctx.update(synth.schema2_context(synth.GPUS["H100"], ("Transfer",)))
        ctx["gpu_bench.device"] = "all"
        synth.add_per_gpu_facts(ctx, 8, GEN4_X8)
        for g in range(8):
            ctx[f"gpu.{g}.uuid"] = f"GPU-m{i:02d}-{g}"
        paths.append(synth.write(tmp_path / f"m{i:02d}.json", doc))
    rep = analyse(node_runs.read_files(paths))
    cohorts = {c.label: c.gpus for c in rep.cohorts}
    assert cohorts == {"H100 80GB HBM3, PCIe gen5 x16, node of several GPUs, preset default, gate on": 70,
                       "H100 80GB HBM3, PCIe gen4 x8, node of several GPUs, preset default, gate on": 10}
    assert {(g.host, g.index, g.link) for g, _ in rep.ranked()} == {("m03", "5", "PCIe gen4 x8")}
    assert not rep.crowds and not rep.problems and not rep.notes


def test_the_export_labels_each_gpu_with_its_own_link(tmp_path, capsys):
    # CUDA's index is the device label; gpu is NVML's, which this synthetic run does not carry.
    run = eight_gpu_gate_run(tmp_path)
    code, _, err = run_cli(cli_export.main, ["--out", str(tmp_path), run], capsys)
    assert code == 0 and "note" not in err
    text = (tmp_path / "gpu_bench_gate.prom").read_text()
    info = {m.group(1): m.group(2) for m in
            re.finditer(r'^gpu_bench_gpu_info\{.*device="(\d)".*host_link="([^"]*)".*\} 1\.0$', text, re.M)}
    assert info == {str(g): "PCIe gen4 x8" if g == 5 else "PCIe gen5 x16" for g in range(8)}
    peak = re.search(r'^gpu_bench_host_link_peak_bytes_per_second\{.*device="5".*\} (\S+)$', text, re.M)
    assert abs(float(peak.group(1)) - 15.75e9) < 0.01e9


def test_files_without_per_gpu_facts_still_read_with_one_line_saying_so(tmp_path, capsys):
    old = gf.write(tmp_path / "old4.json", gf.multi_gpu(gf.read(gf.GATE_H100), gpus=4))
    code, out, _ = run_cli(cli_gate.main, [old], capsys)
    notes = [ln for ln in out.splitlines() if "each GPU's own facts" in ln]
    assert code == 0 and len(notes) == 1
    assert "every GPU of it is read with GPU 0's link, peaks, clocks and NUMA node" in notes[0]
    code, _, err = run_cli(cli_export.main, ["--out", str(tmp_path), old], capsys)
    assert code == 0 and len([ln for ln in err.splitlines() if "each GPU's own facts" in ln]) == 1
    a = synth.write(tmp_path / "a.json", synth.make_multi_run(gpus=4, seed=1, families=("Transfer",)))
    b = synth.write(tmp_path / "b.json", synth.make_multi_run(gpus=4, seed=2, families=("Transfer",)))
    code, out, _ = run_cli(cli_compare.main, ["--one-round", a, b], capsys)
    assert code == 0 and out.count("each GPU's own facts") == 1
    # A file with each GPU's facts, or of one GPU, says nothing.
    new = eight_gpu_gate_run(tmp_path)
    code, out, _ = run_cli(cli_gate.main, [new], capsys)
    assert "each GPU's own facts" not in out
    code, out, _ = run_cli(cli_gate.main, [str(gf.GATE_H100)], capsys)
    assert "each GPU's own facts" not in out


def hold_longer(doc: dict, factor: float) -> dict:
    """HostBlocking's copies hold the host thread `factor` times as long (a slower host, not a slower GPU)."""
    for e in doc["benchmarks"]:
        if e["name"].startswith("HostBlocking/") and "host_blocked_us" in e:
            e["host_blocked_us"] *= factor
    return doc


def two_hosts(tmp_path: Path, cpu: str, name: str, **kw) -> str:
    doc = synth.make_run(schema="2", reps=3, families=("Transfer", "HostBlocking", "SyncPlacement"), **kw)
    doc["context"]["host.cpu"] = cpu
    return synth.write(tmp_path / name, doc)


def test_compare_says_in_one_line_that_two_files_differ_in_host_cpu(tmp_path, capsys):
    a = two_hosts(tmp_path, CPU_A, "a.json")
    b = two_hosts(tmp_path, CPU_B, "b.json")
    code, out, _ = run_cli(cli_compare.main, ["--one-round", a, b], capsys)
    assert code == 0
    said = [ln for ln in out.splitlines() if "host CPU differs" in ln]
    assert said == [f"warning: the host CPU differs: [1] {CPU_A}, 16 CPUs; [2] {CPU_B}, 16 CPUs: 20 host-side "
                    "figure(s) (HostBlocking, SyncPlacement) measure the host as much as the GPU"]
    # The columns of a comparison with host-side figures name the host's CPU as well as the GPU.
    assert f"[1] H100 80GB HBM3, driver 580.159.04, {CPU_A}, 16 CPUs  ({a})" in out
    assert f"[2] H100 80GB HBM3, driver 580.159.04, {CPU_B}, 16 CPUs  ({b})" in out
    rows = json.loads(run_cli(cli_compare.main, ["--one-round", a, b, "--format", "json"], capsys)[1])["rows"]
    assert {r["case"].split("/")[0] for r in rows if r["host_side"]} == {"HostBlocking", "SyncPlacement"}
    assert not any(r["host_side"] for r in rows if r["case"].startswith("SyncPlacement/op:add/sync:events"))
    same = run_cli(cli_compare.main, ["--one-round", a, two_hosts(tmp_path, CPU_A, "c.json", seed=2)], capsys)[1]
    assert "host CPU differs" not in same


def test_a_host_cpu_that_differs_is_no_warning_where_no_host_side_figure_is_compared(tmp_path, capsys):
    a = two_hosts(tmp_path, CPU_A, "a.json")
    b = two_hosts(tmp_path, CPU_B, "b.json")
    code, out, _ = run_cli(cli_compare.main, ["--one-round", a, b, "--filter", "^Transfer/"], capsys)
    assert code == 0
    assert "host CPU differs" not in out and "host-side figure" not in out
    assert CPU_A in out and CPU_B in out  # the header still lists the difference


def fleet_node(tmp_path: Path, i: int, cpu: str, hold: float = 1.0) -> str:
    doc = synth.make_run(schema="2", reps=1, families=("Transfer", "HostBlocking"), seed=4000 + i, host=f"h{i:02d}",
                         date=f"2025-02-01T04:{i:02d}:00+00:00")
    hold_longer(doc, hold * (1.0 + 0.002 * i))  # hosts of one kind differ a little
    doc["context"]["host.cpu"] = cpu
    doc["context"]["gpu.uuid"] = doc["context"]["gpu.0.uuid"] = f"GPU-h{i:02d}"
    return synth.write(tmp_path / f"h{i:02d}.json", doc)


def test_the_fleet_puts_host_side_figures_of_other_host_cpus_in_other_cohorts(tmp_path):
    """Ten nodes of one host CPU and ten of another whose copies hold the host thread 30% longer: the GPUs'
    own figures are one cohort, the host-side ones two, and only the node slow among its own CPU's stands out."""
    paths = [fleet_node(tmp_path, i, CPU_A, 1.3 if i == 3 else 1.0) for i in range(10)]
    paths += [fleet_node(tmp_path, 10 + i, CPU_B, 1.3) for i in range(10)]
    rep = analyse(node_runs.read_files(paths))
    base = "H100 80GB HBM3, PCIe gen5 x16, node of one GPU, preset default, gate on"
    assert {c.label: c.gpus for c in rep.cohorts} == {
        base: 20, f"{base}, host CPU {CPU_A}, 16 CPUs": 10, f"{base}, host CPU {CPU_B}, 16 CPUs": 10}
    assert {g.host for g, _ in rep.ranked()} == {"h03"}
    assert {f.case.split("/")[0] for f in rep.flags} == {"HostBlocking"}
    assert all(f.cohort == f"{base}, host CPU {CPU_A}, 16 CPUs" for f in rep.flags)
    assert not rep.crowds


def test_history_judges_host_side_figures_against_runs_on_the_same_host_cpu(tmp_path, capsys, monkeypatch):
    """The newest run of a machine comes from another host CPU (the same host name and GPU): its host-side
    figures are not held against the other CPU's, its GPU's figures are."""
    monkeypatch.delenv("GPU_BENCH_DB", raising=False)
    db = str(tmp_path / "h.sqlite")
    paths = []
    for night in range(5):
        last = night == 4
        doc = synth.make_run(schema="2", reps=3, families=("Transfer", "HostBlocking"), seed=night + 1,
                             date=f"2025-03-{night + 1:02d}T02:00:00+00:00",
                             slow={r"^Transfer/dir:h2d/": 0.8} if last else None)
        hold_longer(doc, (1.3 if last else 1.0) * (1.0 + 0.002 * night))
        doc["context"]["host.cpu"] = CPU_B if last else CPU_A
        paths.append(synth.write(tmp_path / f"night{night}.json", doc))
    assert run_cli(cli_history.main, ["ingest", "--db", db, *paths], capsys)[0] == 0
    code, out, _ = run_cli(cli_history.main, ["check", "--db", db], capsys)
    regressed = {ln.split()[1].split("/")[0] for ln in out.splitlines() if ln.strip().startswith("REGRESSION")}
    assert code == 1 and regressed == {"Transfer"}, out
    assert "12 case(s) not checked: every earlier run of theirs was on another host CPU" in out


def test_a_gpu_whose_per_gpu_facts_are_new_keeps_its_history(tmp_path, capsys, monkeypatch):
    """A machine's older runs without each GPU's facts and its newer ones with them are one history: the
    facts they share agree."""
    monkeypatch.delenv("GPU_BENCH_DB", raising=False)
    db = str(tmp_path / "h.sqlite")
    paths = []
    for night in range(5):
        doc = synth.make_multi_run(gpus=4, seed=night + 1, reps=3, families=("Transfer",),
                                   date=f"2025-03-{night + 1:02d}T02:00:00+00:00",
                                   slow={r"^Transfer/dir:h2d/.*/device:2$": 0.8} if night == 4 else None)
        if night >= 3:
            synth.add_per_gpu_facts(doc["context"], 4)
        paths.append(synth.write(tmp_path / f"night{night}.json", copy.deepcopy(doc)))
    code, _, err = run_cli(cli_history.main, ["ingest", "--db", db, *paths], capsys)
    assert code == 0 and err.count("each GPU's own facts") == 1
    code, out, _ = run_cli(cli_history.main, ["check", "--db", db], capsys)
    regressed = [ln for ln in out.splitlines() if ln.strip().startswith("REGRESSION")]
    assert code == 1 and regressed and all("/device:2" in ln for ln in regressed), out
    assert "not checked" not in out
