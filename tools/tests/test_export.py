"""gpu-bench-export without a network: the textfile's metrics, atomic writing, bad input, credentials.

The real node_exporter, Prometheus and Pushgateway are in test_prometheus_live.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import gatefiles as gf
import pytest
from conftest import TOOLS, run_cli

from gpu_bench_tools.cli.export import main

H100_H2D_GBPS = 54.863721547153366
PASSWORD = "s3cret-never-printed"


def export(capsys, *argv):
    code, out, err = run_cli(main, [str(a) for a in argv], capsys)
    return code, out, err


def samples(path: Path) -> dict[str, list]:
    from prometheus_client.parser import text_string_to_metric_families

    out: dict[str, list] = {}
    for fam in text_string_to_metric_families(path.read_text()):
        for s in fam.samples:
            out.setdefault(s.name, []).append(s)
    return out


def one(found: list, **labels):
    hits = [s for s in found if all(s.labels.get(k) == v for k, v in labels.items())]
    assert len(hits) == 1, (labels, [s.labels for s in found])
    return hits[0]


def test_the_textfile_holds_the_run_in_base_units(tmp_path, capsys):
    code, out, err = export(capsys, "--format", "prometheus", "--out", tmp_path, gf.GATE_H100)
    assert code == 0 and err == "" and out == f"wrote {tmp_path / 'gpu_bench_gate.prom'}; gate PASS\n"
    assert os.listdir(tmp_path) == ["gpu_bench_gate.prom"]
    m = samples(tmp_path / "gpu_bench_gate.prom")
    h2d = one(m["gpu_bench_transfer_bytes_per_second"], dir="h2d")
    assert h2d.value == pytest.approx(H100_H2D_GBPS * 1e9, rel=1e-12)
    assert h2d.timestamp is None
    # A run from before gpu_bench read NVML's index has no `gpu` (empty: no label); CUDA's is `device`.
    assert h2d.labels == {
        "Hostname": "vm", "gpu": "", "device": "0", "UUID": "GPU-a92900b6-cc4d-53b4-c723-0d2f545527a6",
        "modelName": "NVIDIA H100 80GB HBM3", "pci_bus_id": "00000000:00:06.0", "preset": "gate",
        "family": "Transfer", "dir": "h2d", "mem": "pinned", "cache": "", "bytes": "268435456"}
    assert one(m["gpu_bench_transfer_bytes_per_second"], dir="d2d", cache="cold").value == pytest.approx(1.4771276e12)
    assert one(m["gpu_bench_transfer_part_bytes_per_second"], dir="bidir", part="h2d").value == \
        pytest.approx(46.35460683651351e9)
    assert one(m["gpu_bench_latency_seconds"], family="SmallCopy", dir="h2d").value == pytest.approx(3.36e-6)
    assert one(m["gpu_bench_noise_ratio"], family="Transfer", dir="h2d").value == pytest.approx(0.0044735450514)
    assert one(m["gpu_bench_samples"], family="Transfer", dir="h2d").value == 91
    assert one(m["gpu_bench_gate_verdict"]).value == 0
    # The run began at 2026-11-23T14:14:45+00:00 and took 1.86339 s.
    assert one(m["gpu_bench_last_success_timestamp_seconds"]).value == pytest.approx(1795443285 + 1.86339)
    assert one(m["gpu_bench_info"]).labels["driver_version"] == "580.159.04"
    assert len(m["gpu_bench_transfer_bytes_per_second"]) == 4 and len(m["gpu_bench_latency_seconds"]) == 2


def test_every_cases_sample_quantiles_are_exported_in_seconds(tmp_path, capsys):
    """sample_p50_us, _p90_us and _p99_us (docs/json.md) as gpu_bench_sample_seconds by quantile; a case of an
    older file without them has none."""
    doc = gf.read(gf.GATE_H100)
    gf.entry(doc, "Transfer/dir:h2d/mem:pinned/").update(sample_p50_us=4890.5, sample_p90_us=4901.25,
                                                          sample_p99_us=4950.0)
    planted = gf.write(tmp_path / "planted.json", doc)
    out_dir = tmp_path / "out"
    assert export(capsys, "--out", out_dir, planted)[0] == 0
    m = samples(out_dir / "gpu_bench_gate.prom")
    found = m["gpu_bench_sample_seconds"]
    assert {s.labels["quantile"]: s.value for s in found} == pytest.approx(
        {"0.5": 4890.5e-6, "0.9": 4901.25e-6, "0.99": 4950.0e-6}, rel=1e-12)
    assert {(s.labels["family"], s.labels["dir"]) for s in found} == {("Transfer", "h2d")}


def test_what_a_cases_gpus_read_at_its_start_and_end_is_exported_in_base_units(tmp_path, capsys):
    """power_w_*, temp_c_*, sm_clock_mhz_* and mem_clock_mhz_* by `at`, and link_errors_rose where it rose
    (docs/json.md); a case of an older file without them has none."""
    doc = gf.read(gf.GATE_H100)
    gf.entry(doc, "Transfer/dir:h2d/mem:pinned/").update(
        power_w_start=121.5, power_w_end=480.25, temp_c_start=35.0, temp_c_end=52.0, sm_clock_mhz_start=1980.0,
        sm_clock_mhz_end=1755.0, mem_clock_mhz_start=2619.0, mem_clock_mhz_end=2619.0, link_errors_rose=3.0)
    planted = gf.write(tmp_path / "planted.json", doc)
    out_dir = tmp_path / "out"
    assert export(capsys, "--out", out_dir, planted)[0] == 0
    m = samples(out_dir / "gpu_bench_gate.prom")
    want = {"gpu_bench_case_power_watts": (121.5, 480.25), "gpu_bench_case_temperature_celsius": (35.0, 52.0),
            "gpu_bench_case_sm_clock_hertz": (1980e6, 1755e6), "gpu_bench_case_memory_clock_hertz": (2619e6, 2619e6)}
    for metric, (start, end) in want.items():
        assert {s.labels["at"]: s.value for s in m[metric]} == pytest.approx({"start": start, "end": end}), metric
        assert {s.labels["dir"] for s in m[metric]} == {"h2d"}
    assert one(m["gpu_bench_case_link_errors_rose"], dir="h2d").value == 3.0
    assert len(m["gpu_bench_case_link_errors_rose"]) == 1


def test_a_degraded_run_exports_its_verdict(tmp_path, capsys):
    worse = gf.write(tmp_path / "worse.json", gf.scaled(gf.read(gf.GATE_H200), "Transfer/dir:d2h/mem:pinned/", "gbps", 0.8))
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    code, out, _ = export(capsys, "--out", out_dir, worse)
    assert code == 0 and out.endswith("gate DEGRADED\n")
    m = samples(out_dir / "gpu_bench_gate.prom")
    assert one(m["gpu_bench_gate_verdict"]).value == 1
    assert "gpu_bench_last_success_timestamp_seconds" in m  # every case was measured


def test_an_errored_run_keeps_the_last_success(tmp_path, capsys):
    assert export(capsys, "--out", tmp_path, gf.GATE_H100)[0] == 0
    before = one(samples(tmp_path / "gpu_bench_gate.prom")["gpu_bench_last_success_timestamp_seconds"]).value
    doc = gf.failed(gf.read(gf.GATE_H100), "Transfer/dir:h2d/", "gate timeout")
    doc["context"]["date"] = "2026-11-24T14:00:00+00:00"
    code, out, _ = export(capsys, "--out", tmp_path, gf.write(tmp_path / "failed.json", doc))
    assert code == 0 and out.endswith("gate ERRORED\n")
    m = samples(tmp_path / "gpu_bench_gate.prom")
    assert one(m["gpu_bench_gate_verdict"]).value == 2
    assert one(m["gpu_bench_last_success_timestamp_seconds"]).value == before
    assert not any(s.labels.get("dir") == "h2d" for s in m["gpu_bench_transfer_bytes_per_second"])
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    assert export(capsys, "--out", fresh, tmp_path / "failed.json")[0] == 0
    assert "gpu_bench_last_success_timestamp_seconds" not in samples(fresh / "gpu_bench_gate.prom")


def test_a_filtered_run_exports_the_verdict_on_what_it_holds(tmp_path, capsys):
    """`gpu_bench --benchmark_filter=Overlap` holds none of the gate's cases; its export must not read errored."""
    doc = gf.read(gf.DEFAULT_H200)
    doc["benchmarks"] = [b for b in doc["benchmarks"] if b["name"].startswith("Overlap/")]
    doc["context"]["gpu_bench.filter"] = "Overlap"
    code, out, _ = export(capsys, "--out", tmp_path, gf.write(tmp_path / "overlap.json", doc))
    assert code == 0 and out.endswith("gate PASS\n"), out
    m = samples(tmp_path / "gpu_bench_default-filtered-38b163f9.prom")
    assert one(m["gpu_bench_gate_verdict"]).value == 0
    del doc["context"]["gpu_bench.filter"]  # as files before the key: every case was meant to run
    code, out, _ = export(capsys, "--out", tmp_path, gf.write(tmp_path / "overlap_old.json", doc))
    assert code == 0 and out.endswith("gate ERRORED\n"), out


def test_a_filtered_run_leaves_its_presets_textfile_as_it_was(tmp_path, capsys):
    """A nightly default run, then `gpu_bench --benchmark_filter=Overlap` on the same node: the filtered run goes
    to a file and preset label of its own, and the default's figures and last success stay published."""
    assert export(capsys, "--out", tmp_path, gf.DEFAULT_H200)[0] == 0
    nightly = (tmp_path / "gpu_bench_default.prom").read_text()
    doc = gf.read(gf.DEFAULT_H200)
    doc["benchmarks"] = [b for b in doc["benchmarks"] if b["name"].startswith("Overlap/")]
    doc["context"]["gpu_bench.filter"] = "Overlap"
    code, out, _ = export(capsys, "--out", tmp_path, gf.write(tmp_path / "overlap.json", doc))
    assert code == 0, out
    assert (tmp_path / "gpu_bench_default.prom").read_text() == nightly
    own = sorted(n for n in os.listdir(tmp_path) if n.endswith(".prom") and n != "gpu_bench_default.prom")
    assert own == ["gpu_bench_default-filtered-38b163f9.prom"], own
    m = samples(tmp_path / own[0])
    preset = "default-filtered-38b163f9"
    assert one(m["gpu_bench_info"], preset=preset).labels["filter"] == "Overlap"
    assert {s.labels.get("preset") for found in m.values() for s in found} == {preset}
    assert one(m["gpu_bench_last_success_timestamp_seconds"], preset=preset)


def test_a_check_that_could_not_judge_the_node(tmp_path, capsys):
    """--check-errored: no figures, the verdict errored, gpu_bench_check_errored 1, the last success kept;
    a run's own export says 0."""
    assert export(capsys, "--out", tmp_path, gf.GATE_H100)[0] == 0
    m = samples(tmp_path / "gpu_bench_gate.prom")
    assert one(m["gpu_bench_check_errored"], Hostname="vm", preset="gate").value == 0
    before = one(m["gpu_bench_last_success_timestamp_seconds"]).value
    code, out, err = export(capsys, "--out", tmp_path, "--host", "vm", "--preset", "gate",
                            "--check-errored", "stopped by SIGTERM after 1800 s")
    assert (code, err) == (0, "") and out.endswith("gate ERRORED (the check could not judge the node)\n")
    m = samples(tmp_path / "gpu_bench_gate.prom")
    assert sorted(m) == ["gpu_bench_check_errored", "gpu_bench_gate_verdict",
                         "gpu_bench_last_success_timestamp_seconds"]
    assert one(m["gpu_bench_check_errored"], Hostname="vm", preset="gate").value == 1
    assert one(m["gpu_bench_gate_verdict"], Hostname="vm", preset="gate").value == 2
    assert one(m["gpu_bench_last_success_timestamp_seconds"]).value == before


@pytest.mark.parametrize("argv,says", [
    (["--check-errored", "x"], "--check-errored needs --preset"),
    (["--check-errored", "x", "--preset", "gate", str(gf.GATE_H100)], "give no RESULTS.json and no --expect"),
    (["--preset", "gate", str(gf.GATE_H100)], "--preset and --host go with --check-errored"),
    ([], "give RESULTS.json, or --check-errored WHY"),
])
def test_check_errored_arguments_are_one_line(argv, says, tmp_path, capsys):
    code, out, err = export(capsys, "--out", tmp_path, *argv)
    assert code == 2 and says in err and os.listdir(tmp_path) == []


def test_presets_get_files_of_their_own(tmp_path, capsys):
    assert export(capsys, "--out", tmp_path, gf.GATE_H100)[0] == 0
    assert export(capsys, "--out", tmp_path, gf.DEFAULT_H100)[0] == 0
    assert sorted(os.listdir(tmp_path)) == ["gpu_bench_default.prom", "gpu_bench_gate.prom"]
    m = samples(tmp_path / "gpu_bench_default.prom")
    assert {s.labels["family"] for s in m["gpu_bench_latency_seconds"]} >= {"SmallCopy", "Alloc", "Launch", "Events"}
    assert all(s.labels["preset"] == "default" for s in m["gpu_bench_transfer_bytes_per_second"])


def test_several_gpus_carry_their_own_labels(tmp_path, capsys):
    doc = gf.multi_gpu(gf.read(gf.GATE_H200), gpus=2)
    assert export(capsys, "--out", tmp_path, gf.write(tmp_path / "two.json", doc))[0] == 0
    m = samples(tmp_path / "gpu_bench_gate.prom")
    d1 = one(m["gpu_bench_transfer_bytes_per_second"], dir="h2d", device="1")
    assert d1.labels["pci_bus_id"] == "00000000:00:07.0" and d1.labels["UUID"].endswith("0001")
    peer = one(m["gpu_bench_transfer_bytes_per_second"], family="Peer")
    assert (peer.labels["src"], peer.labels["dst"], peer.labels["device"]) == ("0", "1", "0")
    assert peer.value == pytest.approx(767e9)


def test_gpu_is_nvmls_index_where_cuda_numbers_the_gpus_otherwise(tmp_path, capsys):
    """The committed gate run on two H200s with CUDA_VISIBLE_DEVICES=1,0: CUDA's GPU 0 is NVML's GPU 1, and
    dcgm-exporter's `gpu` is NVML's. Each series carries NVML's index and the UUID, so a join on `gpu` (or
    `UUID`) pairs the same GPU; `device` keeps CUDA's."""
    assert export(capsys, "--out", tmp_path, gf.REPO / "results/gate/gate_h200x2_cuda_order_1_0.json")[0] == 0
    m = samples(tmp_path / "gpu_bench_gate.prom")
    nvidia_smi = {"0": ("GPU-700c7116-6377-adc1-4adc-909100cf4b55", "00000000:00:06.0"),
                  "1": ("GPU-e0b10040-e31e-cd66-91a7-c73515244cc6", "00000000:00:07.0")}
    for name in ("gpu_bench_transfer_bytes_per_second", "gpu_bench_latency_seconds", "gpu_bench_gpu_info"):
        for s in m[name]:
            if s.labels.get("family") == "Peer":
                continue
            assert s.labels["gpu"] == {"0": "1", "1": "0"}[s.labels["device"]], s.labels
            assert (s.labels["UUID"], s.labels["pci_bus_id"]) == nvidia_smi[s.labels["gpu"]], s.labels
    h2d = one(m["gpu_bench_transfer_bytes_per_second"], dir="h2d", device="0")
    assert (h2d.labels["gpu"], h2d.labels["UUID"]) == ("1", "GPU-e0b10040-e31e-cd66-91a7-c73515244cc6")


def test_the_old_file_is_replaced_whole(tmp_path, capsys):
    target = tmp_path / "gpu_bench_gate.prom"
    target.write_text("# an older run\n")
    assert export(capsys, "--out", tmp_path, gf.GATE_H200)[0] == 0
    assert os.listdir(tmp_path) == ["gpu_bench_gate.prom"] and "NVIDIA H200" in target.read_text()


def test_a_write_that_fails_leaves_nothing_behind(tmp_path, capsys):
    (tmp_path / "gpu_bench_gate.prom").mkdir()  # the rename onto it fails after the temporary file is written
    code, out, err = export(capsys, "--out", tmp_path, gf.GATE_H100)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "cannot write gpu_bench_gate.prom" in err and "the old file is left as it was" in err
    assert os.listdir(tmp_path) == ["gpu_bench_gate.prom"]


def _as_nobody(argv: list[str]) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env["PYTHONPATH"] = str(TOOLS)

    def drop():
        os.setgroups([])
        os.setgid(65534)
        os.setuid(65534)

    return subprocess.run(argv, capture_output=True, text=True, env=env, preexec_fn=drop, timeout=120, cwd="/")


def test_an_unwritable_folder_is_one_line_and_the_old_file_stays(capsys):
    """Root writes into any folder whatever its mode: as root the folder is made immutable (chattr +i), or,
    where that is not allowed, the command runs as user nobody."""
    folder = Path(tempfile.mkdtemp(prefix="gpu-bench-export-"))
    old = folder / "gpu_bench_gate.prom"
    old.write_text("# the last good run\n")
    results = folder / "gate_h100.json"
    results.write_bytes(gf.GATE_H100.read_bytes())
    for p in (folder, old, results):
        p.chmod(0o755 if p.is_dir() else 0o644)
    argv = ["--out", str(folder), str(results)]
    immutable = False
    try:
        if os.geteuid() != 0:
            folder.chmod(0o555)
            code, out, err = export(capsys, *argv)
        elif subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode == 0:
            immutable = True
            code, out, err = export(capsys, *argv)
        else:
            probe = _as_nobody([sys.executable, "-c", "import gpu_bench_tools.cli.export"])
            if probe.returncode != 0:
                pytest.skip("as root, chattr +i is not allowed here and user nobody cannot run "
                            f"{sys.executable} with the tools: no folder root cannot write to")
            folder.chmod(0o555)
            r = _as_nobody([sys.executable, "-m", "gpu_bench_tools.cli.export", *argv])
            code, out, err = r.returncode, r.stdout, r.stderr
        assert code == 2 and out == "", (code, out, err)
        assert err == f"gpu-bench-export: error: --out {folder}: cannot write there (permission denied); " \
                      "the old file is left as it was\n"
        assert old.read_text() == "# the last good run\n"
        assert sorted(os.listdir(folder)) == ["gate_h100.json", "gpu_bench_gate.prom"]
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(folder)], check=True)
        folder.chmod(0o755)
        for p in folder.iterdir():
            p.unlink()
        folder.rmdir()


@pytest.mark.parametrize("what,argv,says", [
    ("no output", [], "give --out DIR, --pushgateway URL, or both"),
    ("a file as folder", ["--out", "{results}"], "not a folder"),
    ("zero timeout", ["--out", "{tmp}", "--timeout", "0"], "--timeout must be more than 0"),
    ("URL with credentials", ["--pushgateway", f"http://gate:{PASSWORD}@127.0.0.1:9"], "credentials in the URL"),
    ("credentials and no host", ["--pushgateway", f"http://gate:{PASSWORD}@/"], "credentials in the URL"),
    ("not http", ["--pushgateway", "ftp://127.0.0.1:9"], "give http://HOST:PORT"),
])
def test_bad_arguments_are_one_line(what, argv, says, tmp_path, capsys):
    argv = [a.format(tmp=tmp_path, results=gf.GATE_H100) for a in argv]
    code, out, err = export(capsys, *argv, gf.GATE_H100)
    assert code == 2 and out == "" and err.count("\n") == 1 and says in err, err
    assert PASSWORD not in err
    assert list(tmp_path.iterdir()) == []


def test_a_missing_folder_is_made_as_plot_makes_its_own(tmp_path, capsys):
    code, out, err = export(capsys, "--out", tmp_path / "a" / "b", gf.GATE_H100)
    assert code == 0 and err == "" and out == f"wrote {tmp_path / 'a' / 'b' / 'gpu_bench_gate.prom'}; gate PASS\n"
    blocker = tmp_path / "file"
    blocker.write_text("")
    code, out, err = export(capsys, "--out", blocker / "sub", gf.GATE_H100)
    assert code == 2 and out == "" and err == f"gpu-bench-export: error: --out {blocker / 'sub'}: cannot create it " \
        "(Not a directory)\n"


def test_the_noise_ratio_says_what_noise_pct_is(tmp_path, capsys):
    """noise_pct is the interval the next run falls in (docs/methodology.md), not its median's interval."""
    assert export(capsys, "--out", tmp_path, gf.GATE_H100)[0] == 0
    text = (tmp_path / "gpu_bench_gate.prom").read_text()
    help_line = next(ln for ln in text.splitlines() if ln.startswith("# HELP gpu_bench_noise_ratio "))
    assert "the 95% interval the case's next run falls in, from its rounds (noise_pct / 100)" in help_line
    assert help_line in (TOOLS.parent / "docs" / "fleet.md").read_text()


def test_an_expect_file_without_the_model_writes_nothing(tmp_path, capsys):
    own = tmp_path / "own.toml"
    own.write_text('format = 1\n[[gpu]]\nname = "NVIDIA H200"\nlink = "PCIe gen5 x16"\n[[gpu.figure]]\n'
                   'case = "Transfer/dir:h2d/mem:pinned/bytes:268435456"\nmetric = "gbps"\nmin = 48.0\nsource = "s"\n')
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    code, out, err = export(capsys, "--out", out_dir, "--expect", own, gf.GATE_H100)
    assert code == 2 and out == "" and "no expectation for NVIDIA H100 80GB HBM3" in err and err.count("\n") == 1
    assert list(out_dir.iterdir()) == []


@pytest.fixture
def creds_env(monkeypatch):
    for k in list(os.environ):
        if k.startswith("GPU_BENCH_PUSHGATEWAY_") or k.lower().endswith("_proxy"):
            monkeypatch.delenv(k)
    return monkeypatch


def auth_file(tmp_path: Path, mode: int, text: str = f"gate:{PASSWORD}\n") -> Path:
    p = tmp_path / "pushgateway.auth"
    p.write_text(text)
    p.chmod(mode)
    return p


@pytest.mark.parametrize("env,says", [
    ({"GPU_BENCH_PUSHGATEWAY_USER": "gate"}, "GPU_BENCH_PUSHGATEWAY_USER is set but GPU_BENCH_PUSHGATEWAY_PASSWORD"),
    ({"GPU_BENCH_PUSHGATEWAY_PASSWORD": PASSWORD}, "GPU_BENCH_PUSHGATEWAY_PASSWORD is set but"),
    ({"GPU_BENCH_PUSHGATEWAY_AUTH_FILE": "{auth644}"}, "which others can read or write (mode 0644): chmod 600"),
    ({"GPU_BENCH_PUSHGATEWAY_AUTH_FILE": "{auth600}", "GPU_BENCH_PUSHGATEWAY_USER": "gate"}, "not both"),
    ({"GPU_BENCH_PUSHGATEWAY_AUTH_FILE": "{nocolon}"}, "whose first line is not USER:PASSWORD"),
    ({"GPU_BENCH_PUSHGATEWAY_AUTH_FILE": "{tmp}/none"}, "which cannot be read (No such file or directory)"),
    ({"GPU_BENCH_PUSHGATEWAY_CERT": "{auth600}"}, "needs both GPU_BENCH_PUSHGATEWAY_CERT and"),
    ({"GPU_BENCH_PUSHGATEWAY_CERT": "{auth600}", "GPU_BENCH_PUSHGATEWAY_KEY": "{auth644}"}, "(mode 0644)"),
])
def test_credentials_that_are_refused(env, says, tmp_path, creds_env, capsys):
    files = {}
    for name, mode, text in (("auth644", 0o644, None), ("auth600", 0o600, None), ("nocolon", 0o600, PASSWORD + "\n")):
        (tmp_path / name).mkdir()
        files[name] = auth_file(tmp_path / name, mode, *([text] if text else []))
    for k, v in env.items():
        creds_env.setenv(k, v.format(tmp=tmp_path, **files))
    code, out, err = export(capsys, "--pushgateway", "http://127.0.0.1:9", gf.GATE_H100)
    assert code == 2 and out == "" and err.count("\n") == 1 and says in err, err
    assert PASSWORD not in err


def test_basic_auth_goes_over_plain_http_to_this_machine_only(tmp_path, creds_env, capsys):
    """Refused before any connection is tried: the host name is never even looked up."""
    creds_env.setenv("GPU_BENCH_PUSHGATEWAY_AUTH_FILE", str(auth_file(tmp_path, 0o600)))
    code, out, err = export(capsys, "--pushgateway", "http://pushgateway.invalid:9091", gf.GATE_H100)
    assert code == 2 and "basic auth over plain http would send the password in clear; use https://" in err
    assert PASSWORD not in out + err


def test_docs_fleet_shows_the_textfile_this_command_writes(tmp_path, capsys):
    """docs/fleet.md quotes the textfile of the committed H100 gate run; it must be what export writes."""
    assert export(capsys, "--format", "prometheus", "--out", tmp_path, gf.GATE_H100)[0] == 0
    written = (tmp_path / "gpu_bench_gate.prom").read_text()
    doc = (gf.REPO / "docs" / "fleet.md").read_text()
    start = doc.index("```\n# HELP gpu_bench_transfer_bytes_per_second") + len("```\n")
    assert doc[start:doc.index("```", start)] == written
    assert doc.count("# HELP gpu_bench_transfer_bytes_per_second") == 1, "the sample is pasted once"


def test_docs_fleet_renders_its_code_as_code():
    """Every fence closes, and every inline code span closes in its paragraph or table row, before a line
    that would start a block of its own (a textfile pasted into one made its lines headings)."""
    doc = (gf.REPO / "docs" / "fleet.md").read_text().splitlines()
    fenced, open_at = False, None
    for i, line in enumerate(doc, 1):
        if line.startswith("```"):
            assert open_at is None, f"docs/fleet.md:{open_at}: an inline code span runs into a fence at {i}"
            fenced = not fenced
            continue
        if fenced:
            continue
        starts_block = not line.strip() or line.lstrip().startswith(("#", "|", "- ", "1. "))
        assert not (open_at and starts_block), f"docs/fleet.md:{open_at}: an inline code span left open"
        if line.startswith("|"):
            assert line.count("`") % 2 == 0, f"docs/fleet.md:{i}: an inline code span left open in a table row"
            continue
        if line.count("`") % 2:
            open_at = None if open_at else i
    assert not fenced and open_at is None
