"""gpu-bench-export against the real programs (Debian 12's prometheus, prometheus-node-exporter and
prometheus-pushgateway): promtool on the textfile and on deploy/prometheus, node_exporter serving the
textfile, Prometheus scraping it and answering PromQL, pushes to a Pushgateway with and without basic
auth and TLS, and one that does not answer. Each program runs on 127.0.0.1 on a free port and is stopped
when its test ends; a test skips, naming the package, only where that package is not installed.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import gatefiles as gf
import pytest
import services as sv
from conftest import REPO, TOOLS, run_cli
from toolbin import slow_once

from gpu_bench_tools.cli.export import main as export_main

DEPLOY = REPO / "deploy" / "prometheus"
H100_H2D_GBPS = 54.863721547153366
USER = "gate"
PASSWORD = "gate-test-password"
# bcrypt of PASSWORD (cost 4, the least Pushgateway accepts), for its --web.config.file.
PASSWORD_BCRYPT = "$2b$04$fbo764DOcucr3BqFGU.dK.yHJULRlwapmjQVmUjXuZN32FpMddzPq"
CAMEL_CASE_LINT = "label names should be written in 'snake_case' not 'camelCase'"


def export(capsys, *argv):
    return run_cli(export_main, [str(a) for a in argv], capsys)


@pytest.fixture
def clean_env(monkeypatch):
    for k in list(os.environ):
        if k.startswith("GPU_BENCH_PUSHGATEWAY_") or k in sv.PROXY_VARS:
            monkeypatch.delenv(k)
    return monkeypatch


@pytest.fixture(scope="module")
def textfile_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("textfile")
    assert export_main(["--format", "prometheus", "--out", str(d), str(gf.GATE_H100)]) == 0
    return d


def test_promtool_check_metrics(textfile_dir):
    """promtool's lint finds nothing but dcgm-exporter's own camelCase label, modelName, kept on purpose."""
    promtool = sv.need("promtool")
    text = (textfile_dir / "gpu_bench_gate.prom").read_text()
    r = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True, timeout=60)
    problems = [line for line in (r.stdout + r.stderr).splitlines() if line.strip()]
    assert r.returncode in (0, 3), r
    assert problems and all(p.endswith(CAMEL_CASE_LINT) for p in problems), problems
    renamed = text.replace("modelName=", "model_name=")
    r = subprocess.run([promtool, "check", "metrics"], input=renamed, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout + r.stderr == "", r


def test_promtool_checks_the_deploy_recipes():
    promtool = sv.need("promtool")
    r = subprocess.run([promtool, "check", "config", "prometheus.yml"], cwd=DEPLOY, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0 and "SUCCESS: 4 rules found" in r.stdout + r.stderr, r
    r = subprocess.run([promtool, "test", "rules", "gpu_bench_rules_test.yml"], cwd=DEPLOY, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0 and "SUCCESS" in r.stdout + r.stderr, r


@pytest.fixture(scope="module")
def node_exporter(textfile_dir, tmp_path_factory):
    binary = sv.need("prometheus-node-exporter")
    port = sv.free_port()
    log = tmp_path_factory.mktemp("node_exporter") / "log"
    argv = [binary, f"--web.listen-address={sv.LOCAL}:{port}", "--collector.disable-defaults",
            "--collector.textfile", f"--collector.textfile.directory={textfile_dir}"]
    with sv.running(argv, port, log):
        yield f"http://{sv.LOCAL}:{port}"


def test_node_exporter_serves_the_textfile(node_exporter):
    from prometheus_client.parser import text_string_to_metric_families

    status, body = sv.get(f"{node_exporter}/metrics")
    assert status == 200
    found = {s.name: s for fam in text_string_to_metric_families(body) for s in fam.samples
             if s.name in ("node_textfile_scrape_error", "gpu_bench_gate_verdict")
             or (s.name == "gpu_bench_transfer_bytes_per_second" and s.labels.get("dir") == "h2d")}
    assert found["node_textfile_scrape_error"].value == 0
    assert found["gpu_bench_gate_verdict"].value == 0
    h2d = found["gpu_bench_transfer_bytes_per_second"]
    assert h2d.value == pytest.approx(H100_H2D_GBPS * 1e9, rel=1e-12)
    assert h2d.labels["UUID"] == "GPU-a92900b6-cc4d-53b4-c723-0d2f545527a6" and h2d.labels["cache"] == ""


@pytest.fixture(scope="module")
def prometheus(node_exporter, tmp_path_factory):
    binary = sv.need("prometheus")
    port = sv.free_port()
    d = tmp_path_factory.mktemp("prometheus")
    target = node_exporter.split("//", 1)[1]
    (d / "prometheus.yml").write_text(textwrap.dedent(f"""\
        global:
          scrape_interval: 1s
          evaluation_interval: 1s
        rule_files:
          - {DEPLOY / "gpu_bench_rules.yml"}
        scrape_configs:
          - job_name: node
            static_configs:
              - targets: ["{target}"]
        """))
    argv = [binary, f"--config.file={d / 'prometheus.yml'}", f"--storage.tsdb.path={d / 'data'}",
            f"--web.listen-address={sv.LOCAL}:{port}"]
    with sv.running(argv, port, d / "log"):
        yield f"http://{sv.LOCAL}:{port}"


def test_prometheus_scrapes_the_textfile_and_answers_promql(prometheus, textfile_dir):
    query = 'gpu_bench_transfer_bytes_per_second{dir="h2d",mem="pinned"} / 1e9'
    result = sv.promql(prometheus, query)
    print(f"\nPromQL: {query}\nanswer: {json.dumps(result)}")  # docs/fleet.md shows it (pytest -s)
    assert len(result) == 1
    labels, (_, value) = result[0]["metric"], result[0]["value"]
    assert float(value) == pytest.approx(H100_H2D_GBPS, rel=1e-12)
    assert {k: labels[k] for k in ("Hostname", "device", "modelName", "pci_bus_id", "family", "bytes", "job")} == {
        "Hostname": "vm", "device": "0", "modelName": "NVIDIA H100 80GB HBM3", "pci_bus_id": "00000000:00:06.0",
        "family": "Transfer", "bytes": "268435456", "job": "node"}
    assert "gpu" not in labels  # the run did not read NVML's index: no label rather than CUDA's in its place
    verdict = sv.promql(prometheus, "gpu_bench_gate_verdict")
    assert [float(r["value"][1]) for r in verdict] == [0.0]
    # A degraded run replaces the file; the next scrape carries its verdict and the alert fires.
    worse = gf.write(textfile_dir.parent / "worse.json",
                     gf.scaled(gf.read(gf.GATE_H100), "Transfer/dir:h2d/mem:pinned/", "gbps", 0.8))
    assert export_main(["--out", str(textfile_dir), worse]) == 0
    sv.promql(prometheus, "gpu_bench_gate_verdict == 1")
    alerts = sv.promql(prometheus, 'ALERTS{alertname="GpuBenchGateDegraded",alertstate="firing"}')
    assert alerts[0]["metric"]["Hostname"] == "vm"


@pytest.fixture
def pushgateway(tmp_path):
    """Start a Pushgateway: pushgateway(web_config_text or None) -> its base URL (http or https)."""
    binary = sv.need("prometheus-pushgateway")
    stack = []

    def start(web_config: str | None = None, scheme: str = "http") -> str:
        port = sv.free_port()
        d = tmp_path / f"pushgateway-{port}"
        d.mkdir()
        # Debian's default persistence file is /var/lib/prometheus/pushgateway.data: keep the test's own.
        argv = [binary, f"--web.listen-address={sv.LOCAL}:{port}", f"--persistence.file={d / 'persist'}"]
        if web_config:
            (d / "web.yml").write_text(web_config)
            argv.append(f"--web.config.file={d / 'web.yml'}")
        cm = sv.running(argv, port, d / "log")
        cm.__enter__()
        stack.append(cm)
        return f"{scheme}://{sv.LOCAL}:{port}"

    yield start
    for cm in reversed(stack):
        cm.__exit__(None, None, None)


def pushed(base: str, **get_kw) -> dict:
    """What a Pushgateway serves for scraping: name -> samples."""
    from prometheus_client.parser import text_string_to_metric_families

    status, body = sv.get(f"{base}/metrics", **get_kw)
    assert status == 200, body
    out: dict = {}
    for fam in text_string_to_metric_families(body):
        for s in fam.samples:
            out.setdefault(s.name, []).append(s)
    return out


def test_a_push_reads_back_from_a_real_pushgateway(pushgateway, clean_env, tmp_path, capsys):
    base = pushgateway()
    code, out, err = export(capsys, "--pushgateway", base, gf.GATE_H100)
    assert code == 0 and err == "", err
    assert out == f"pushed to {base}: job gpu_bench, instance vm, preset gate; gate PASS\n"
    m = pushed(base)
    h2d = [s for s in m["gpu_bench_transfer_bytes_per_second"] if s.labels.get("dir") == "h2d"]
    assert len(h2d) == 1 and h2d[0].value == pytest.approx(H100_H2D_GBPS * 1e9, rel=1e-12)
    assert {k: h2d[0].labels[k] for k in ("job", "instance", "preset", "modelName")} == {
        "job": "gpu_bench", "instance": "vm", "preset": "gate", "modelName": "NVIDIA H100 80GB HBM3"}
    assert [s.value for s in m["gpu_bench_gate_verdict"]] == [0.0]
    assert any(s.labels.get("job") == "gpu_bench" for s in m["push_time_seconds"])
    # A second push of the same group replaces the first (PUT): a degraded run.
    worse = gf.write(tmp_path / "worse.json", gf.scaled(gf.read(gf.GATE_H100), "SmallCopy/dir:d2h/", "p50_us", 1.2))
    assert export(capsys, "--pushgateway", base, worse)[0] == 0
    assert [s.value for s in pushed(base)["gpu_bench_gate_verdict"]] == [1.0]


BASIC_AUTH = f"basic_auth_users:\n  {USER}: {PASSWORD_BCRYPT}\n"


def test_basic_auth_from_the_environment_or_a_private_file(pushgateway, clean_env, tmp_path, capsys):
    base = pushgateway(BASIC_AUTH)
    code, out, err = export(capsys, "--pushgateway", base, gf.GATE_H100)
    assert code == 2 and out == "" and err.count("\n") == 1 and "HTTP 401 Unauthorized" in err, err
    clean_env.setenv("GPU_BENCH_PUSHGATEWAY_USER", USER)
    clean_env.setenv("GPU_BENCH_PUSHGATEWAY_PASSWORD", "not-the-password")
    code, out, err = export(capsys, "--pushgateway", base, gf.GATE_H100)
    assert code == 2 and "HTTP 401" in err and "not-the-password" not in out + err
    clean_env.setenv("GPU_BENCH_PUSHGATEWAY_PASSWORD", PASSWORD)
    code, out, err = export(capsys, "--pushgateway", base, gf.GATE_H100)
    assert code == 0 and PASSWORD not in out + err, err
    assert pushed(base, auth=(USER, PASSWORD))["gpu_bench_gate_verdict"][0].value == 0
    clean_env.delenv("GPU_BENCH_PUSHGATEWAY_USER")
    clean_env.delenv("GPU_BENCH_PUSHGATEWAY_PASSWORD")
    auth = tmp_path / "auth"
    auth.write_text(f"{USER}:{PASSWORD}\n")
    auth.chmod(0o600)
    clean_env.setenv("GPU_BENCH_PUSHGATEWAY_AUTH_FILE", str(auth))
    code, out, err = export(capsys, "--pushgateway", base, gf.GATE_H200)
    assert code == 0 and PASSWORD not in out + err, err
    assert pushed(base, auth=(USER, PASSWORD))["gpu_bench_info"][0].labels["instance"] == "vm"


def test_tls_with_a_private_ca_and_a_client_certificate(pushgateway, clean_env, tmp_path, capsys):
    import ssl

    tls = sv.make_tls(tmp_path)
    base = pushgateway(BASIC_AUTH + textwrap.dedent(f"""\
        tls_server_config:
          cert_file: {tls['server']}
          key_file: {tls['server_key']}
          client_auth_type: RequireAndVerifyClientCert
          client_ca_file: {tls['ca']}
        """), scheme="https")
    auth = tmp_path / "auth"
    auth.write_text(f"{USER}:{PASSWORD}\n")
    auth.chmod(0o600)
    clean_env.setenv("GPU_BENCH_PUSHGATEWAY_AUTH_FILE", str(auth))
    code, out, err = export(capsys, "--pushgateway", base, gf.GATE_H100)
    assert code == 2 and err.count("\n") == 1 and "TLS: unable to get local issuer certificate" in err, err
    assert "GPU_BENCH_PUSHGATEWAY_CA" in err
    clean_env.setenv("GPU_BENCH_PUSHGATEWAY_CA", str(tls["ca"]))
    code, out, err = export(capsys, "--pushgateway", base, gf.GATE_H100)
    assert code == 2 and err.count("\n") == 1 and err.startswith("gpu-bench-export: error: cannot push to "), err
    clean_env.setenv("GPU_BENCH_PUSHGATEWAY_CERT", str(tls["client"]))
    clean_env.setenv("GPU_BENCH_PUSHGATEWAY_KEY", str(tls["client_key"]))
    code, out, err = export(capsys, "--pushgateway", base, gf.GATE_H100)
    assert code == 0 and PASSWORD not in out + err, err
    ctx = ssl.create_default_context(cafile=str(tls["ca"]))
    ctx.load_cert_chain(str(tls["client"]), str(tls["client_key"]))
    m = pushed(base, context=ctx, auth=(USER, PASSWORD))
    assert [s.value for s in m["gpu_bench_gate_verdict"]] == [0.0]


def _silent_listener():
    """A socket that accepts connections and never answers."""
    s = socket.socket()
    s.bind((sv.LOCAL, 0))
    s.listen(8)
    return s


@pytest.mark.parametrize("how", ["refused", "silent"])
def test_a_pushgateway_that_does_not_answer(how, clean_env, tmp_path, capsys):
    out_dir = tmp_path / "textfile"
    out_dir.mkdir()
    (out_dir / "gpu_bench_gate.prom").write_text("# the last good run\n")
    listener = _silent_listener() if how == "silent" else None
    port = listener.getsockname()[1] if listener else sv.free_port()
    try:
        start = time.monotonic()
        code, out, err = export(capsys, "--pushgateway", f"http://{sv.LOCAL}:{port}", "--timeout", "1",
                                "--out", out_dir, gf.GATE_H100)
        took = time.monotonic() - start
    finally:
        if listener:
            listener.close()
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert ("connection refused" if how == "refused" else "no answer within 1 s") in err, err
    assert took < 10
    assert os.listdir(out_dir) == ["gpu_bench_gate.prom"]
    assert (out_dir / "gpu_bench_gate.prom").read_text() == "# the last good run\n"


def test_the_console_script_pushes_with_credentials_from_the_environment(pushgateway, tmp_path):
    """The command as a fleet runs it, in its own process: nothing on its command line is secret."""
    base = pushgateway(BASIC_AUTH)
    env = sv.no_proxy_env({"GPU_BENCH_PUSHGATEWAY_USER": USER, "GPU_BENCH_PUSHGATEWAY_PASSWORD": PASSWORD,
                           "PYTHONPATH": str(TOOLS)})
    argv = [sys.executable, "-m", "gpu_bench_tools.cli.export", "--pushgateway", base, "--out", str(tmp_path),
            str(gf.GATE_H100)]
    r = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0 and PASSWORD not in r.stdout + r.stderr + " ".join(argv), r
    assert r.stdout.splitlines() == [f"pushed to {base}: job gpu_bench, instance vm, preset gate; gate PASS",
                                     f"wrote {tmp_path / 'gpu_bench_gate.prom'}; gate PASS"]


def _stub_gpu_bench(folder: Path) -> Path:
    """A gpu_bench stand-in: copies $STUB_RESULTS to --benchmark_out, or, unset, fails as with no GPU."""
    stub = folder / "gpu_bench"
    stub.write_text(textwrap.dedent("""\
        #!/bin/sh
        for a in "$@"; do case "$a" in --benchmark_out=*) out=${a#--benchmark_out=};; esac; done
        if [ -z "$STUB_RESULTS" ]; then echo "gpu_bench: no CUDA-capable device is detected" >&2; exit 1; fi
        cp "$STUB_RESULTS" "$out"
        """))
    stub.chmod(0o755)
    for tool in ("gate", "export"):
        w = folder / f"gpu-bench-{tool}"
        w.write_text(f'#!/bin/sh\nPYTHONPATH="{TOOLS}" exec "{sys.executable}" -m gpu_bench_tools.cli.{tool} "$@"\n')
        w.chmod(0o755)
    return stub


@pytest.mark.parametrize("results,status,first", [
    (gf.GATE_H100, 0, "PASS: 8 figures within expectations on GPU 0 H100 80GB HBM3"),
    ("worse", 1, "DEGRADED: d2d "),
    (None, 4, "ERRORED: gpu_bench wrote no results (exit 1): gpu_bench: no CUDA-capable device"),
    ("no gate", 4, "ERRORED: "),
])
def test_the_node_check_script(results, status, first, tmp_path):
    """The check's own failure (no results; the gate not found) exits 4, not the gate's 2, and the textfile
    says so: gpu_bench_check_errored 1."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    stub = _stub_gpu_bench(bin_dir)
    textfile = tmp_path / "textfile"
    textfile.mkdir()
    if results == "worse":
        results = gf.write(tmp_path / "worse.json", gf.scaled(gf.read(gf.GATE_H200),
                                                              "Transfer/dir:d2d/", "gbps", 0.8))
    path = os.environ["PATH"]
    if results == "no gate":
        (bin_dir / "gpu-bench-gate").unlink()
        results, path = gf.GATE_H100, "/usr/bin:/bin"
    env = sv.no_proxy_env({"PATH": f"{bin_dir}:{path}", "GPU_BENCH": str(stub),
                           "GPU_BENCH_TEXTFILE_DIR": str(textfile), "TMPDIR": str(tmp_path)})
    env.pop("STUB_RESULTS", None)
    if results:
        env["STUB_RESULTS"] = str(results)
    r = subprocess.run(["bash", str(DEPLOY / "gpu-bench-node-check.sh")], capture_output=True, text=True, env=env,
                       timeout=120)
    lines = r.stdout.splitlines()
    assert r.returncode == status and lines[0].startswith(first) and len(lines[0]) <= 80, r
    written = sorted(os.listdir(textfile))
    assert written == ["gpu_bench_gate.prom"]
    text = (textfile / written[0]).read_text()
    host = socket.gethostname() if status == 4 else "vm"  # the run's host_name, or this machine's
    assert f'gpu_bench_gate_verdict{{Hostname="{host}",preset="gate"}} {min(status, 2)}.0' in text
    assert f'gpu_bench_check_errored{{Hostname="{host}",preset="gate"}} {1 if status == 4 else 0}.0' in text
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["bin", "textfile"] + (["worse.json"] if status == 1 else []))  # its temporary folder is gone


def test_the_node_check_measures_a_slow_figure_again(tmp_path):
    """A d2d copy slow on the first run and not on the gate's second: the node passes, and the textfile the
    export writes after the gate says so too."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _stub_gpu_bench(bin_dir)
    textfile = tmp_path / "textfile"
    textfile.mkdir()
    env = sv.no_proxy_env({"PATH": f"{bin_dir}:{os.environ['PATH']}", "GPU_BENCH": str(slow_once(tmp_path / "stub")),
                           "GPU_BENCH_TEXTFILE_DIR": str(textfile), "TMPDIR": str(tmp_path)})
    r = subprocess.run(["bash", str(DEPLOY / "gpu-bench-node-check.sh")], capture_output=True, text=True, env=env,
                       timeout=120)
    assert r.returncode == 0, r
    assert r.stdout.startswith("PASS: 8 figures within expectations, 1 on a second measurement on GPU 0 H200\n"), r
    assert "passed on a second measurement" in r.stdout and r.stderr == "", r
    text = (textfile / "gpu_bench_gate.prom").read_text()
    assert re.search(r'^gpu_bench_gate_verdict\{[^}]*\} 0.0$', text, re.M), text


def test_each_node_and_preset_is_a_group_of_its_own(pushgateway, clean_env, tmp_path):
    """Pushes from two nodes, and a nightly run beside a gate run, do not replace one another."""
    base = pushgateway()
    for host, preset in (("node-a", "gate"), ("node-b", "gate"), ("node-a", "nightly")):
        d = gf.read(gf.GATE_H200)
        d["context"].update(host_name=host)
        d["context"]["gpu_bench.preset"] = preset
        assert export_main(["--pushgateway", base, gf.write(tmp_path / f"{host}-{preset}.json", d)]) == 0
    groups = sorted((s.labels["instance"], s.labels["preset"]) for s in pushed(base)["gpu_bench_gate_verdict"])
    assert groups == [("node-a", "gate"), ("node-a", "nightly"), ("node-b", "gate")]
