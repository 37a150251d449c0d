"""Real programs for the tests (Prometheus, Slurm), started on 127.0.0.1 on free ports and always stopped.

Nothing here talks to any address but 127.0.0.1, and no proxy from the environment is used.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

LOCAL = "127.0.0.1"
START_TIMEOUT_S = 20.0
# Debian 12 package of each program the tests start.
PACKAGES = {
    "prometheus": "prometheus",
    "promtool": "prometheus",
    "prometheus-node-exporter": "prometheus-node-exporter",
    "prometheus-pushgateway": "prometheus-pushgateway",
    "openssl": "openssl",
    "slurmctld": "slurmctld",
    "slurmd": "slurmd",
    "sbatch": "slurm-client",
    "scontrol": "slurm-client",
    "munged": "munge",
    "mungekey": "munge",
    "sudo": "sudo",
    "visudo": "sudo",
}
PROXY_VARS = ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy",
              "NO_PROXY")


def need(program: str) -> str:
    """The program's path, or a skip naming the package that has it (scripts/test.sh's set-up installs them)."""
    # Daemons live in /usr/sbin, which an ordinary user's PATH may leave out.
    path = shutil.which(program) or next((f"{d}/{program}" for d in ("/usr/bin", "/usr/sbin")
                                          if os.access(f"{d}/{program}", os.X_OK)), None)
    if path is None:
        package = PACKAGES[program]
        pytest.skip(f"{program} is missing: Debian package {package} is not installed (apt-get install -y {package})")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind((LOCAL, 0))
        return s.getsockname()[1]


def no_proxy_env(extra: dict | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in PROXY_VARS}
    env.update(extra or {})
    return env


@contextlib.contextmanager
def running(argv: list[str], port: int, log: Path):
    """Start a program that listens on 127.0.0.1:port; stop it (and wait for it) however the test ends."""
    with open(log, "wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, env=no_proxy_env())
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                pytest.fail(f"{Path(argv[0]).name} exited with {proc.returncode}: {_tail(log)}")
            with socket.socket() as s:
                s.settimeout(0.2)
                if s.connect_ex((LOCAL, port)) == 0:
                    break
            if time.monotonic() > deadline:
                pytest.fail(f"{Path(argv[0]).name} did not listen on {LOCAL}:{port} in {START_TIMEOUT_S:g} s: "
                            f"{_tail(log)}")
            time.sleep(0.05)
        yield proc
    finally:
        stop(proc)


def stop(proc: subprocess.Popen, timeout: float = 10.0) -> None:
    """SIGTERM, then SIGKILL if it has not gone within `timeout` seconds; always reaped."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _tail(log: Path) -> str:
    try:
        return " | ".join(log.read_text(errors="replace").strip().splitlines()[-3:])
    except OSError:
        return "(no log)"


def get(url: str, timeout: float = 5.0, context: ssl.SSLContext | None = None,
        auth: tuple[str, str] | None = None) -> tuple[int, str]:
    """(status, body) of a GET to 127.0.0.1, never through a proxy."""
    assert urllib.parse.urlsplit(url).hostname == LOCAL, url
    handlers = [urllib.request.ProxyHandler({})]
    if context is not None:
        handlers.append(urllib.request.HTTPSHandler(context=context))
    req = urllib.request.Request(url)
    if auth:
        import base64

        req.add_header("Authorization", "Basic " + base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode())
    try:
        with urllib.request.build_opener(*handlers).open(req, timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        with e:
            return e.code, e.read().decode(errors="replace")


def promql(base: str, query: str, until=lambda result: bool(result), timeout: float = 30.0) -> list:
    """A PromQL instant query's result, polled until `until(result)` (the first scrape takes a moment)."""
    deadline = time.monotonic() + timeout
    while True:
        status, body = get(f"{base}/api/v1/query?" + urllib.parse.urlencode({"query": query}))
        result = json.loads(body)["data"]["result"] if status == 200 else None
        if result is not None and until(result):
            return result
        if time.monotonic() > deadline:
            pytest.fail(f"PromQL {query!r} gave no result in {timeout:g} s (last: HTTP {status} {body[:200]})")
        time.sleep(0.2)


def make_tls(folder: Path) -> dict[str, Path]:
    """A private CA, a server certificate for 127.0.0.1 and a client certificate, made with openssl."""
    openssl = need("openssl")
    f = {k: folder / f"{k}.pem" for k in ("ca", "ca_key", "server", "server_key", "client", "client_key")}

    def run(*args: str) -> None:
        subprocess.run([openssl, *args], check=True, capture_output=True, timeout=60)

    run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
        "-subj", "/CN=gpu_bench test CA", "-keyout", str(f["ca_key"]), "-out", str(f["ca"]))
    for who, subject, ext in (("server", "/CN=127.0.0.1", "subjectAltName=IP:127.0.0.1"),
                              ("client", "/CN=gpu-node-01", "extendedKeyUsage=clientAuth")):
        csr = folder / f"{who}.csr"
        extfile = folder / f"{who}.ext"
        extfile.write_text(ext + "\n")
        run("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj", subject,
            "-keyout", str(f[f"{who}_key"]), "-out", str(csr))
        run("x509", "-req", "-in", str(csr), "-CA", str(f["ca"]), "-CAkey", str(f["ca_key"]), "-CAcreateserial",
            "-days", "2", "-extfile", str(extfile), "-out", str(f[who]))
    for k in ("ca_key", "server_key", "client_key"):
        f[k].chmod(0o600)
    return f
