"""deploy/slurm on a real single-node Slurm (Debian 12's slurmctld, slurmd, slurm-client and munge): the nightly
job with gpu_bench on a machine without a GPU, with committed results replayed, with a degraded copy and with
a malformed or missing result; the drain through sudo and what it refuses; slurmd's HealthCheckProgram; NHC's
check.

The cluster is this machine alone: munged with a key and socket of its own, slurmctld and slurmd bound to
127.0.0.1 on free ports, state, spool and logs in a temporary folder, all stopped and removed when the module
ends, however it ends. Run as root (as CI runs), the job runs as an unprivileged user the test makes (and
removes) and drains through deploy/slurm's sudoers line; run as anyone else, the job runs as that user, who is
then SlurmUser and may drain without sudo. A test whose package is missing skips and names it.
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import gatefiles as gf
import pytest
import services as sv
from conftest import REPO, TOOLS
import test_prometheus_live as prom
from toolbin import degraded_copy, slow_once, tool_bin, write_exe

SLURM = REPO / "deploy" / "slurm"
NODE_CHECK = REPO / "deploy" / "prometheus" / "gpu-bench-node-check.sh"
# slurmd finds its node by the short host name.
NODE = socket.gethostname().split(".")[0]
JOB_USER = "gpubench-test"
JOB_TIMEOUT_S = 60.0
AS_ROOT = os.geteuid() == 0
# util-linux's, in /usr/sbin: root runs the job's commands as the job's user with it.
RUNUSER = shutil.which("runuser") or "/usr/sbin/runuser"
FINISHED = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED", "BOOT_FAIL")
# Run by this test's Python: the three tools the job runs, on a committed run; then where each module they
# loaded from outside the standard library and the tools lives (a package's folder, or a module's file), one a
# line, for a copy the job's user can read.
LOADED_BY_THE_JOB = r"""
import os, shutil, sys, tempfile
at_start = set(sys.modules)  # what site's .pth files load, not the tools
from gpu_bench_tools.cli import export as cli_export, gate as cli_gate, history as cli_history
run, scratch, shown = sys.argv[1], tempfile.mkdtemp(), sys.stdout
sys.stdout = open(os.devnull, "w")
codes = (cli_gate.main(["--quiet", run]), cli_export.main(["--out", scratch, run]),
         cli_history.main(["--db", os.path.join(scratch, "h.sqlite"), "ingest", run]))
sys.stdout = shown
shutil.rmtree(scratch)
assert codes == (0, 0, 0), codes
installed = (f"{os.sep}site-packages{os.sep}", f"{os.sep}dist-packages{os.sep}")
for name, module in sorted(sys.modules.items()):
    where = getattr(module, "__file__", None)
    if "." in name or name in at_start or name == "gpu_bench_tools" or not where:
        continue
    if not any(d in where for d in installed):
        continue
    print(os.path.dirname(where) if hasattr(module, "__path__") else where)
    if os.path.isdir(os.path.join(os.path.dirname(where), "..", name + ".libs")):  # numpy.libs and the like
        print(os.path.join(os.path.dirname(os.path.dirname(where)), name + ".libs"))
"""


def gpu_bench_binary() -> Path | None:
    """The gpu_bench CI built: $GPU_BENCH, else $BUILD_DIR/gpu_bench, else build/gpu_bench (scripts/setup.sh's)."""
    for p in (os.environ.get("GPU_BENCH"), os.environ.get("BUILD_DIR") and Path(os.environ["BUILD_DIR"]) / "gpu_bench",
              REPO / "build" / "gpu_bench"):
        if p and Path(p).is_file() and os.access(p, os.X_OK):
            return Path(p)
    return None


# test_prometheus_live's Pushgateway, started on 127.0.0.1 for a test and stopped after it.
pushgateway = prom.pushgateway


class Cluster:
    def __init__(self, work: Path, user: str, slurm_conf: Path):
        self.work, self.user, self.conf = work, user, slurm_conf
        self.procs: dict[str, subprocess.Popen] = {}
        self.drain_env: dict[str, str] = {}
        self.env = sv.no_proxy_env({"SLURM_CONF": str(slurm_conf)})
        for k in [k for k in self.env if k.startswith(("GPU_BENCH", "SLURM_")) and k != "SLURM_CONF"]:
            del self.env[k]

    # --- daemons ---------------------------------------------------------------------------------------------
    def start(self, name: str, argv: list[str]) -> None:
        log = open(self.work / "log" / f"{name}.out", "wb")
        with log:
            self.procs[name] = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                                env=self.env, start_new_session=True)

    def stop(self, name: str) -> None:
        proc = self.procs.pop(name, None)
        if proc is not None:
            sv.stop(proc, timeout=15)

    def check_running(self) -> None:
        for name, proc in self.procs.items():
            if proc.poll() is not None:
                pytest.fail(f"{name} exited with {proc.returncode}: {self.log_tail(name)}")

    def log_tail(self, name: str, lines: int = 5) -> str:
        for p in (self.work / "log" / f"{name}.log", self.work / "log" / f"{name}.out"):
            if p.exists():
                return " | ".join(p.read_text(errors="replace").strip().splitlines()[-lines:])
        return "(no log)"

    # --- clients ---------------------------------------------------------------------------------------------
    def slurm(self, *argv: str, as_user: bool = False, env: dict | None = None, cwd: Path | None = None):
        prefix = [RUNUSER, "-u", self.user, "--"] if as_user and AS_ROOT else []
        return subprocess.run(prefix + list(argv), capture_output=True, text=True, timeout=30,
                              env={**self.env, **(env or {})}, cwd=cwd or self.work)

    def node(self) -> tuple[str, str]:
        """(State, Reason) of the node, as scontrol shows them (the reason without its [user@time])."""
        r = self.slurm("scontrol", "-o", "show", "node", NODE)
        assert r.returncode == 0, r
        state = re.search(r"\bState=(\S+)", r.stdout).group(1)
        reason = re.search(r"\bReason=(.*?)(?: \[[^\]]*\])?(?= \w+=|$)", r.stdout.strip())
        return state, (reason.group(1) if reason else "")

    def wait_node(self, want, what: str, timeout: float = 30.0) -> tuple[str, str]:
        deadline = time.monotonic() + timeout
        while True:
            self.check_running()
            state, reason = self.node()
            if want(state):
                return state, reason
            if time.monotonic() > deadline:
                pytest.fail(f"node {NODE} not {what} in {timeout:g} s: State={state} Reason={reason}; "
                            f"slurmd: {self.log_tail('slurmd')}")
            time.sleep(0.1)

    def resume(self) -> None:
        """The node back to idle, as an operator resumes it once the GPU is mended."""
        state, _ = self.node()
        if "DRAIN" in state:
            r = self.slurm("scontrol", "update", f"nodename={NODE}", "state=resume")
            assert r.returncode == 0, r
        self.wait_node(lambda s: s == "IDLE", "idle")

    def submit(self, case: Path, extra_env: dict[str, str]) -> dict:
        """Submit the nightly job as the job's user, wait for it to end; its state, exit code and output."""
        job_env = {"PATH": f"{self.work / 'bin'}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "HOME": str(case),
                   "GPU_BENCH_OUT": str(case / "out"), "GPU_BENCH_TEXTFILE_DIR": str(case / "textfile"),
                   "GPU_BENCH_DB": str(case / "history.sqlite"), **self.drain_env, **extra_env}
        r = self.slurm("sbatch", "--parsable", f"--output={case}/slurm-%j.out", str(self.work / "job.sbatch"),
                       as_user=True, env=job_env, cwd=case)
        assert r.returncode == 0, r
        job = r.stdout.strip().split(";")[0]
        deadline = time.monotonic() + JOB_TIMEOUT_S
        while True:
            self.check_running()
            shown = self.slurm("scontrol", "-o", "show", "job", job).stdout
            state = re.search(r"\bJobState=(\S+)", shown)
            if state and state.group(1) in FINISHED:
                break
            if time.monotonic() > deadline:
                pytest.fail(f"job {job} did not end in {JOB_TIMEOUT_S:g} s: {shown.strip()}")
            time.sleep(0.1)
        out = case / f"slurm-{job}.out"
        return {"id": job, "state": state.group(1), "exit": re.search(r"\bExitCode=(\S+)", shown).group(1),
                "user": re.search(r"\bUserId=([^(]+)", shown).group(1),
                "output": out.read_text() if out.exists() else ""}


@pytest.fixture(scope="module")
def cluster():
    for program in ("slurmctld", "slurmd", "sbatch", "scontrol", "munged", "mungekey"):
        sv.need(program)
    if AS_ROOT:
        sv.need("sudo")
        sv.need("visudo")
    # Not pytest's tmp_path: its folders are private to the user running pytest, and the job's user must read
    # (and in its own folders write) what the job uses.
    work = Path(tempfile.mkdtemp(prefix="gpu-bench-slurm-"))
    work.chmod(0o755)
    made_user = False
    sudoers = Path(f"/etc/sudoers.d/gpu-bench-test-{os.getpid()}")  # no dot: sudo skips such names
    c = None
    try:
        if AS_ROOT:
            try:
                pwd.getpwnam(JOB_USER)
            except KeyError:
                subprocess.run(["useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent",
                                "--shell", "/usr/sbin/nologin", JOB_USER], check=True, capture_output=True)
                made_user = True
            user = JOB_USER
        else:
            user = pwd.getpwuid(os.getuid()).pw_name
        c = _start_cluster(work, user)
        if AS_ROOT:
            line = (SLURM / "sudoers.gpu-bench").read_text().splitlines()[-1]
            line = line.replace("gpubench", user)
            line = line.replace("/usr/local/sbin/gpu-bench-drain", str(work / "sbin" / "gpu-bench-drain"))
            staged = work / "sudoers"
            staged.write_text(line + "\n")
            staged.chmod(0o440)
            r = subprocess.run([sv.need("visudo"), "-cf", str(staged)], capture_output=True, text=True)
            assert r.returncode == 0, r
            shutil.copy2(staged, sudoers)
            c.drain_env = {"GPU_BENCH_DRAIN": str(work / "sbin" / "gpu-bench-drain")}
        else:
            c.drain_env = {"GPU_BENCH_DRAIN": str(work / "sbin" / "gpu-bench-drain"), "GPU_BENCH_DRAIN_SUDO": "no"}
        yield c
    finally:
        if c is not None:
            for name in ("slurmd", "slurmctld", "munged"):
                c.stop(name)
        sudoers.unlink(missing_ok=True)
        if made_user:
            subprocess.run(["userdel", JOB_USER], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


def _start_cluster(work: Path, user: str) -> Cluster:
    for d in ("munge", "run", "state", "spool", "log", "sbin", "lib", "jobs"):
        (work / d).mkdir()
    (work / "munge").chmod(0o700)
    (work / "run").chmod(0o755)  # munged requires a socket folder everyone may enter
    uid = pwd.getpwnam(user).pw_uid
    os.chown(work / "jobs", uid, -1)

    # The tools as the job's user can run them: a copy of the package and of every package it loads, and an
    # interpreter that user may execute (this one may live in a folder only its owner can enter).
    lib = work / "lib"
    shutil.copytree(TOOLS / "gpu_bench_tools", lib / "gpu_bench_tools", ignore=shutil.ignore_patterns("__pycache__"))
    r = subprocess.run([sys.executable, "-c", LOADED_BY_THE_JOB, str(gf.GATE_H100)], capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(TOOLS)}, cwd=work, timeout=120)
    assert r.returncode == 0, r
    tops = []
    for where in map(Path, r.stdout.split("\n")[:-1]):
        if where.is_dir():
            shutil.copytree(where, lib / where.name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(where, lib / where.name)
        tops.append(where.name.split(".")[0])
    imports = "import gpu_bench_tools.cli.gate, gpu_bench_tools.cli.export, gpu_bench_tools.cli.history"
    imports += "".join(f", {t}" for t in tops if t.isidentifier())
    python = next((py for py in (sys.executable, "/usr/bin/python3") if subprocess.run(
        ([RUNUSER, "-u", user, "--"] if AS_ROOT else []) + [py, "-c", imports], capture_output=True,
        env={"PYTHONPATH": str(lib), "PATH": "/usr/bin:/bin"}, cwd="/").returncode == 0), None)
    if python is None:
        pytest.skip(f"no Python that user {user} may run imports the tools "
                    f"({sys.executable} and /usr/bin/python3 tried)")
    tool_bin(work / "bin", python, work / "lib")
    binary = gpu_bench_binary()
    if binary:
        shutil.copy2(binary, work / "bin" / "gpu_bench")
    shutil.copy2(SLURM / "gpu-bench-nightly.sbatch", work / "job.sbatch")

    key = work / "munge" / "munge.key"
    subprocess.run([sv.need("mungekey"), "--create", f"--keyfile={key}"], check=True, capture_output=True)
    key.chmod(0o600)
    socket_path = work / "run" / "munge.socket"
    ctld_port, slurmd_port, ghost_port = sv.free_port(), sv.free_port(), sv.free_port()
    conf = work / "slurm.conf"
    # The root-run programs, each fixed to this cluster: sudo and slurmd hand them no environment.
    write_exe(work / "sbin" / "gpu-bench-drain",
              f'#!/bin/sh\nSLURM_CONF="{conf}" exec "{SLURM / "gpu-bench-drain"}" "$@"\n')
    write_exe(work / "sbin" / "gpu-bench-healthcheck",
              f'#!/bin/sh\nexport SLURM_CONF="{conf}" GPU_BENCH_CONFIG="{work / "healthcheck.env"}"\n'
              f'exec "{SLURM / "gpu-bench-healthcheck"}" "$@"\n')
    (work / "hc-textfile").mkdir()
    write_healthcheck_config(work, gf.GATE_H100)
    conf.write_text(f"""\
ClusterName=gpubenchtest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser={"root" if AS_ROOT else user}
SlurmdUser={"root" if AS_ROOT else user}
AuthType=auth/munge
AuthInfo=socket={socket_path}
CredType=cred/munge
CommunicationParameters=NoCtldInAddrAny,NoInAddrAny
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SelectType=select/cons_tres
ReturnToService=2
StateSaveLocation={work / "state"}
SlurmdSpoolDir={work / "spool"}
SlurmctldPidFile={work / "run" / "slurmctld.pid"}
SlurmdPidFile={work / "run" / "slurmd.pid"}
SlurmctldLogFile={work / "log" / "slurmctld.log"}
SlurmdLogFile={work / "log" / "slurmd.log"}
HealthCheckProgram={work / "sbin" / "gpu-bench-healthcheck"}
HealthCheckInterval=3600
NodeName={NODE} NodeAddr=127.0.0.1 CPUs={os.cpu_count() or 1} State=UNKNOWN
# A node of another host, for the drain's refusal: FUTURE, so that slurmctld never pings it (nothing listens there).
NodeName=ghost NodeHostname=ghost-host NodeAddr=127.0.0.1 Port={ghost_port} CPUs=1 State=FUTURE
PartitionName=gpu Nodes={NODE} Default=YES MaxTime=INFINITE State=UP
""")
    # Slurm 22.05 has no cgroup.conf setting that turns cgroups off; with proctrack/linuxproc and task/none
    # nothing uses them.
    (work / "cgroup.conf").write_text("CgroupPlugin=autodetect\n")
    c = Cluster(work, user, conf)
    c.start("munged", [sv.need("munged"), "--foreground", "--force", f"--socket={socket_path}", f"--key-file={key}",
                       f"--log-file={work / 'log' / 'munged.log'}", f"--pid-file={work / 'run' / 'munged.pid'}",
                       f"--seed-file={work / 'munge' / 'seed'}"])
    deadline = time.monotonic() + sv.START_TIMEOUT_S
    while not socket_path.exists():
        c.check_running()
        if time.monotonic() > deadline:
            pytest.fail(f"munged made no socket in {sv.START_TIMEOUT_S:g} s: {c.log_tail('munged')}")
        time.sleep(0.05)
    c.start("slurmctld", [sv.need("slurmctld"), "-D", "-i"])
    c.start("slurmd", [sv.need("slurmd"), "-D"])
    c.wait_node(lambda s: s == "IDLE", "idle after start")
    return c


def write_healthcheck_config(work: Path, stub_results) -> None:
    """What gpu-bench-healthcheck reads (slurmd runs it with no environment): the gate check with the
    gpu_bench stand-in writing `stub_results` (None: no results, as without a GPU)."""
    (work / "healthcheck.env").write_text(
        f"PATH={work / 'bin'}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n"
        f"GPU_BENCH={work / 'bin' / 'gpu_bench-stub'}\n"
        f"STUB_RESULTS={stub_results or ''}\n"
        f"GPU_BENCH_TEXTFILE_DIR={work / 'hc-textfile'}\n"
        f"GPU_BENCH_NODE_CHECK={NODE_CHECK}\n"
        f"GPU_BENCH_DRAIN={work / 'sbin' / 'gpu-bench-drain'}\n")


def new_case(c: Cluster, name: str, results: str | Path | None = None) -> tuple[Path, dict]:
    """The job's folder for one case (owned by the job's user), and GPU_BENCH_RESULT pointing at a copy of
    `results` there (the job's user could not read the original where it lies)."""
    case = c.work / "jobs" / name
    case.mkdir()
    for d in ("out", "textfile"):
        (case / d).mkdir()
    env = {}
    if results is not None:
        src = Path(results)
        dst = case / src.name
        if src.exists():
            shutil.copy2(src, dst)
        env["GPU_BENCH_RESULT"] = str(dst)
    uid = pwd.getpwnam(c.user).pw_uid
    for p in [case, *case.rglob("*")]:
        os.chown(p, uid, -1)
    return case, env


def history_runs(db: Path) -> tuple[int, int]:
    if not db.exists():
        return 0, 0
    with sqlite3.connect(db) as conn:
        return tuple(conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("runs", "results"))


def history_check_errors(db: Path) -> list[tuple]:
    """(preset, reason) of every check the history keeps as one that could not judge its node."""
    if not db.exists():
        return []
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT preset, reason FROM check_errors ORDER BY id").fetchall()


def textfile_value(case: Path, metric: str, preset: str = "gate") -> str | None:
    f = case / "textfile" / f"gpu_bench_{preset}.prom"
    if not f.exists():
        return None
    m = re.search(rf"^{metric}\{{[^}}]*\}} (\S+)$", f.read_text(), re.M)
    return m.group(1) if m else None


def textfile_verdict(case: Path, preset: str = "gate") -> str | None:
    return textfile_value(case, "gpu_bench_gate_verdict", preset)


def check_errored(case: Path, preset: str = "gate") -> str | None:
    return textfile_value(case, "gpu_bench_check_errored", preset)


def only_json(case: Path) -> list[str]:
    return sorted(p.name for p in (case / "out").glob("*.json"))


def test_nightly_without_a_gpu_is_errored_and_drains_nothing(cluster):
    """The real gpu_bench on this machine (no GPU) writes no results: the check could not judge the node,
    which is errored (exit 4) and stays in service."""
    if not (cluster.work / "bin" / "gpu_bench").exists():
        pytest.skip("no gpu_bench binary: build it (scripts/setup.sh) or set GPU_BENCH to its path")
    if Path("/dev/nvidiactl").exists():
        pytest.skip("this machine has an NVIDIA GPU: the no-GPU verdict cannot be seen here")
    cluster.resume()
    case, env = new_case(cluster, "nogpu")
    job = cluster.submit(case, {"GPU_BENCH": str(cluster.work / "bin" / "gpu_bench"), **env})
    assert (job["state"], job["exit"]) == ("FAILED", "4:0"), job
    assert job["user"] == cluster.user, job
    verdict = (case / "out" / f"{NODE}-nightly-{job['id']}.verdict").read_text()
    assert verdict.startswith("ERRORED: gpu_bench wrote no results (exit 1): gpu_bench: no CUDA GPU"), verdict
    assert f"{NODE}: not drained: the check could not judge the node" in job["output"], job
    assert cluster.node() == ("IDLE", "")
    # gpu_bench's own words are kept beside the verdict; the textfile and the history say errored.
    assert "no CUDA GPU is visible" in (case / "out" / f"{NODE}-nightly-{job['id']}.log").read_text()
    assert only_json(case) == [] and history_runs(case / "history.sqlite") == (0, 0)
    assert textfile_verdict(case, "nightly") == "2.0" and check_errored(case, "nightly") == "1.0"
    assert [r[0] for r in history_check_errors(case / "history.sqlite")] == ["nightly"]


def test_a_committed_good_run_passes_and_lands_everywhere(cluster):
    cluster.resume()
    case, env = new_case(cluster, "good", gf.GATE_H100)
    job = cluster.submit(case, env)
    assert (job["state"], job["exit"]) == ("COMPLETED", "0:0"), job
    assert f"{NODE}: PASS: 8 figures within expectations on GPU 0 H100 80GB HBM3" in job["output"], job
    assert cluster.node() == ("IDLE", ""), "a passing node is left as it was"
    assert only_json(case) == [f"{NODE}-nightly-{job['id']}.json"]
    assert textfile_verdict(case) == "0.0"
    assert "gpu_bench_transfer_bytes_per_second{" in (case / "textfile" / "gpu_bench_gate.prom").read_text()
    assert history_runs(case / "history.sqlite") == (1, 6)  # one row a case


def test_a_degraded_copy_drains_the_node_and_is_still_kept(cluster):
    cluster.resume()
    case, env = new_case(cluster, "degraded", degraded_copy(cluster.work))
    job = cluster.submit(case, env)
    assert (job["state"], job["exit"]) == ("FAILED", "1:0"), job
    state, reason = cluster.node()
    assert "DRAIN" in state and reason.startswith("gpu_bench: degraded: d2d ") and "< " in reason, (state, reason)
    assert textfile_verdict(case) == "1.0"  # the figures are published, and the run kept, as for any run
    runs, rows = history_runs(case / "history.sqlite")
    assert runs == 1 and rows > 0


def test_the_job_pushes_to_a_pushgateway_when_one_is_named(cluster, pushgateway):
    """GPU_BENCH_PUSHGATEWAY set and no textfile folder: the run lands in a real Pushgateway on 127.0.0.1."""
    base = pushgateway()
    cluster.resume()
    case, env = new_case(cluster, "push", gf.GATE_H100)
    job = cluster.submit(case, {**env, "GPU_BENCH_PUSHGATEWAY": base, "GPU_BENCH_TEXTFILE_DIR": ""})
    assert (job["state"], job["exit"]) == ("COMPLETED", "0:0"), job
    assert f"pushed to {base}: job gpu_bench, instance vm, preset gate; gate PASS" in job["output"], job
    verdicts = prom.pushed(base)["gpu_bench_gate_verdict"]
    assert [(v.labels["instance"], v.value) for v in verdicts] == [("vm", 0.0)]
    assert textfile_verdict(case) is None


@pytest.mark.parametrize("name,content,reason", [
    ("truncated.json", '{"context": {"date": "2026-01-01"}, "benchmarks": [',
     r"gpu_bench: errored: \S+\.json: truncated JSON"),
    ("garbage.json", "gpu_bench: out of memory\n", r"gpu_bench: errored: \S+\.json: not JSON"),
    ("not_gbench.json", '{"results": []}', r"gpu_bench: errored: \S+\.json: not Google Benchmark output"),
    ("missing.json", None, r"gpu_bench: errored: no result to replay: \S+/missing\.json is missing or empty"),
])
def test_a_bad_result_is_reported_and_drains_nothing(cluster, name, content, reason):
    """A result the gate cannot read is the check's failure, not the GPU's: errored (exit 4), published and
    kept as such, the node left in service."""
    cluster.resume()
    src = cluster.work / name
    if content is not None:
        src.write_text(content)
    case, env = new_case(cluster, name.split(".")[0], src)
    job = cluster.submit(case, env)
    assert (job["state"], job["exit"]) == ("FAILED", "4:0"), job
    assert f"{NODE}: not drained: the check could not judge the node" in job["output"], job
    assert cluster.node() == ("IDLE", "")
    # A replayed file names no preset the job can trust; the job's own (nightly) is the textfile's.
    assert textfile_verdict(case, "nightly") == "2.0" and check_errored(case, "nightly") == "1.0"
    assert history_runs(case / "history.sqlite") == (0, 0)
    ((preset, why),) = history_check_errors(case / "history.sqlite")
    assert preset == "nightly" and re.match(reason.split(": ", 2)[2], why), why


def test_the_drain_needs_the_sudo_line_and_does_nothing_else(cluster):
    if not AS_ROOT:
        pytest.skip("run as root: the job's user is then not a Slurm administrator and drains through sudo")
    cluster.resume()
    drain = str(cluster.work / "sbin" / "gpu-bench-drain")
    # Without sudo the job's user cannot drain at all.
    r = cluster.slurm("scontrol", "update", f"nodename={NODE}", "state=drain", "reason=x", as_user=True)
    assert r.returncode != 0 and "Invalid user id" in r.stderr, r
    # sudo allows the drain program and nothing else.
    r = cluster.slurm("sudo", "-n", "scontrol", "update", f"nodename={NODE}", "state=resume", as_user=True)
    assert r.returncode != 0 and "password is required" in r.stderr, r
    for args, why in (([NODE, "resume", "x"], "the verdict is degraded, not 'resume'"),
                      ([NODE, "errored", "x"], "only a measured degradation drains a node"),
                      ([f"{NODE} state=resume", "degraded", "x"], "not a node name"),
                      (["ghost", "degraded", "x"], "node ghost is on host 'ghost-host', not on this one")):
        r = cluster.slurm("sudo", "-n", drain, *args, as_user=True)
        assert r.returncode == 2 and why in r.stderr, r
    assert cluster.node() == ("IDLE", "")
    r = cluster.slurm("sudo", "-n", drain, NODE, "degraded", "a test\nwith a second line", as_user=True)
    assert r.returncode == 0, r
    assert cluster.node() == ("IDLE+DRAIN", "gpu_bench: degraded: a test with a second line")


def test_the_health_check_slurmd_runs_drains_a_degraded_node(cluster):
    # It ran when slurmd started, on the committed good run: the node came up idle, the textfile written.
    assert re.search(r"^gpu_bench_gate_verdict\{[^}]*\} 0.0$",
                     (cluster.work / "hc-textfile" / "gpu_bench_gate.prom").read_text(), re.M)
    cluster.resume()
    write_healthcheck_config(cluster.work, degraded_copy(cluster.work))
    try:
        cluster.stop("slurmd")
        cluster.start("slurmd", [sv.need("slurmd"), "-D"])
        state, reason = cluster.wait_node(lambda s: "DRAIN" in s, "drained by the health check")
        assert reason.startswith("gpu_bench: degraded: d2d "), reason
    finally:
        write_healthcheck_config(cluster.work, gf.GATE_H100)
    cluster.resume()


@pytest.mark.parametrize("results,rc,message", [
    (gf.GATE_H100, 0, ""),
    ("degraded", 1, "die 1: gpu_bench: degraded: d2d "),
    (None, 0, "log: gpu_bench: errored: gpu_bench wrote no results (exit 1): gpu_bench: no CUDA GPU"),
])
def test_the_nhc_check_reads_the_gate(results, rc, message, tmp_path):
    """NHC's check_gpu_bench, sourced as NHC sources it (its die stood in for): the gate's verdict as NHC's."""
    tool_bin(tmp_path / "bin", sys.executable, TOOLS)
    if results == "degraded":
        results = degraded_copy(tmp_path)
    write_healthcheck_config(tmp_path, results)
    (tmp_path / "hc-textfile").mkdir()
    env = sv.no_proxy_env({"GPU_BENCH_CONFIG": str(tmp_path / "healthcheck.env")})
    script = (f'die() {{ echo "die $1: $2"; }}; log() {{ echo "log: $*"; }}; . "{SLURM / "gpu_bench.nhc"}"; '
              f'check_gpu_bench "{SLURM / "gpu-bench-healthcheck"}"')
    r = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == rc and r.stdout.startswith(message) and (message or r.stdout == ""), r
    assert ("not a measured degradation: the node stays" in r.stdout) == (results is None), r


# --- the job's own failures, under a stand-in srun and scontrol (no Slurm needed) ---------------------------
# srun runs the step here as one node; scontrol answers for that node and writes down every call, so that a
# drain would show.
STUB_SRUN = """#!/bin/sh
while [ $# -gt 0 ]; do case $1 in --*) shift ;; *) break ;; esac; done
GPU_BENCH_NIGHTLY_STEP=1 SLURMD_NODENAME=node1 exec "$@"
"""
STUB_SCONTROL = """#!/bin/sh
echo "$*" >>"$SCONTROL_CALLS"
case "$*" in *show*) echo "NodeName=node1 NodeHostName=$(hostname) State=IDLE" ;; esac
"""


def stub_job(tmp_path: Path, **extra: str) -> tuple[Path, dict]:
    """cron's environment (PATH=/usr/bin:/bin after the stand-ins) for the batch script in a job of its own."""
    for d in ("stubs", "out", "textfile"):
        (tmp_path / d).mkdir()
    write_exe(tmp_path / "stubs" / "srun", STUB_SRUN)
    write_exe(tmp_path / "stubs" / "scontrol", STUB_SCONTROL)
    tool_bin(tmp_path / "tools", sys.executable, TOOLS)
    env = {"PATH": f"{tmp_path / 'stubs'}:/usr/bin:/bin", "HOME": str(tmp_path), "SLURM_JOB_ID": "77",
           "SLURM_SUBMIT_DIR": str(tmp_path), "GPU_BENCH_OUT": str(tmp_path / "out"),
           "GPU_BENCH_TEXTFILE_DIR": str(tmp_path / "textfile"), "GPU_BENCH_DB": str(tmp_path / "history.sqlite"),
           "GPU_BENCH_DRAIN": str(SLURM / "gpu-bench-drain"), "GPU_BENCH_DRAIN_SUDO": "no",
           "SCONTROL_CALLS": str(tmp_path / "scontrol.calls"), **extra}
    return tmp_path, env


def drains(case: Path) -> list[str]:
    calls = case / "scontrol.calls"
    return [c for c in calls.read_text().splitlines() if c.startswith("update")] if calls.exists() else []


def test_crons_path_drains_nothing_and_says_errored(tmp_path):
    """cron's PATH=/usr/bin:/bin: gpu_bench is not found (GPU_BENCH unset). The node stays in service; the
    verdict is errored in the job's output, the verdict file, the textfile and the history; exit 4."""
    case, env = stub_job(tmp_path, GPU_BENCH_TOOLS=str(tmp_path / "tools"))
    r = subprocess.run(["bash", str(SLURM / "gpu-bench-nightly.sbatch")], env=env, capture_output=True, text=True,
                       timeout=120, cwd=case)
    assert r.returncode == 4, r
    assert "node1: ERRORED: gpu_bench not found" in r.stdout and "node1: not drained" in r.stdout, r
    assert drains(case) == []
    assert (case / "out" / "node1-nightly-77.verdict").read_text().startswith("ERRORED: gpu_bench not found")
    assert (case / "out" / "node1-nightly-77.status").read_text() == "4\n"
    assert textfile_verdict(case, "nightly") == "2.0" and check_errored(case, "nightly") == "1.0"
    ((preset, why),) = history_check_errors(case / "history.sqlite")
    assert preset == "nightly" and why.startswith("gpu_bench not found (see GPU_BENCH, GPU_BENCH_TOOLS; PATH=")


def test_no_tool_found_drains_nothing(tmp_path):
    """Nothing of gpu_bench's on cron's PATH and no GPU_BENCH_TOOLS: errored, exit 4, no drain, and the job says
    what it could not publish."""
    case, env = stub_job(tmp_path)
    r = subprocess.run(["bash", str(SLURM / "gpu-bench-nightly.sbatch")], env=env, capture_output=True, text=True,
                       timeout=60, cwd=case)
    assert r.returncode == 4 and drains(case) == [], r
    assert "node1: ERRORED: gpu_bench gpu-bench-gate gpu-bench-export gpu-bench-history not found" in r.stdout, r
    assert "the errored check was not exported: gpu-bench-export is not found" in r.stderr, r


def test_a_timeout_leaves_an_errored_verdict_and_drains_nothing(tmp_path):
    """`timeout` stops the job while gpu_bench runs (as Slurm's time limit does, with SIGTERM to every
    process): the trap turns it into an errored verdict, exported and kept; nothing is drained."""
    case, env = stub_job(tmp_path, GPU_BENCH_TOOLS=str(tmp_path / "tools"))
    env["GPU_BENCH"] = str(write_exe(case / "gpu_bench", "#!/bin/sh\nexec sleep 60\n"))
    start = time.monotonic()
    r = subprocess.run(["timeout", "2", "bash", str(SLURM / "gpu-bench-nightly.sbatch")], env=env,
                       capture_output=True, text=True, timeout=60, cwd=case)
    assert r.returncode == 124 and time.monotonic() - start < 30, r
    # The job counts whole seconds from its own start, a moment after timeout's: 2 s later it reads 1 or 2.
    stopped = re.search(r"node1: ERRORED: stopped by SIGTERM after ([12]) s", r.stdout)
    assert stopped and drains(case) == [], r
    assert (case / "out" / "node1-nightly-77.status").read_text() == "4\n"
    assert textfile_verdict(case, "nightly") == "2.0" and check_errored(case, "nightly") == "1.0"
    ((_, why),) = history_check_errors(case / "history.sqlite")
    assert why == f"stopped by SIGTERM after {stopped.group(1)} s (the job's time limit, scancel or timeout)"
    assert not list((case / "out").glob("*.json"))


def test_a_degraded_run_still_drains_under_the_stand_ins(tmp_path):
    case, env = stub_job(tmp_path, GPU_BENCH_TOOLS=str(tmp_path / "tools"), GPU_BENCH_RESULT=degraded_copy(tmp_path))
    r = subprocess.run(["bash", str(SLURM / "gpu-bench-nightly.sbatch")], env=env, capture_output=True, text=True,
                       timeout=120, cwd=case)
    assert r.returncode == 1, r
    (drain,) = drains(case)
    assert drain.startswith("update nodename=node1 state=drain reason=gpu_bench: degraded: d2d "), drain
    assert textfile_verdict(case, "gate") == "1.0" and check_errored(case, "gate") == "0.0"


def test_a_figure_slow_once_is_measured_again_and_drains_nothing(tmp_path):
    """The gate measures the slow d2d copy again with the job's own gpu_bench: the second measurement is
    within its expectation, so the node passes; that measurement is kept beside the run."""
    case, env = stub_job(tmp_path, GPU_BENCH_TOOLS=str(tmp_path / "tools"),
                         GPU_BENCH=str(slow_once(tmp_path / "stub")))
    r = subprocess.run(["bash", str(SLURM / "gpu-bench-nightly.sbatch")], env=env, capture_output=True, text=True,
                       timeout=120, cwd=case)
    assert r.returncode == 0 and drains(case) == [], r
    assert "node1: PASS: 8 figures within expectations, 1 on a second measurement" in r.stdout, r
    assert (case / "out" / "node1-nightly-77.retry1.json").is_file()
    assert textfile_verdict(case, "gate") == "0.0"


@pytest.mark.parametrize("srun,says", [
    (None, "not in a Slurm job: submit it with gpu-bench-nightly-submit"),
    ("#!/bin/sh\necho 'srun: fatal: Could not establish a configuration source' >&2\nexit 1\n",
     "srun exited with 1 and no node of the job gave that status"),
])
def test_sruns_own_failure_is_not_degraded(srun, says, tmp_path):
    """srun's own failure exits 1, the code of degraded: the job says errored (4) instead."""
    case, env = stub_job(tmp_path, GPU_BENCH_TOOLS=str(tmp_path / "tools"))
    if srun is None:
        del env["SLURM_JOB_ID"]
    else:
        write_exe(case / "stubs" / "srun", srun)
    r = subprocess.run(["bash", str(SLURM / "gpu-bench-nightly.sbatch")], env=env, capture_output=True, text=True,
                       timeout=60, cwd=case)
    assert r.returncode == 4 and says in r.stderr and drains(case) == [], r


@pytest.mark.parametrize("gpus,cases,minutes", [(1, 564, 17), (4, 2305, 38), (8, 4655, 66)])
def test_the_submit_program_takes_the_time_limit_from_the_model(gpus, cases, minutes, tmp_path):
    """--time from the node's GPU count: gpu_bench's case count for that many GPUs (the real binary's, as
    --list_gpus gives it), 0.48 s a case as measured, 1.5 times that and 600 s."""
    write_exe(tmp_path / "gpu_bench", f"#!/bin/sh\nseq {cases} | sed 's|^|Case/|'\n")
    write_exe(tmp_path / "sbatch", '#!/bin/sh\necho "sbatch $*"\n')
    env = {"PATH": f"{tmp_path}:/usr/bin:/bin", "HOME": str(tmp_path)}
    r = subprocess.run([str(SLURM / "gpu-bench-nightly-submit"), f"--gpus-per-node={gpus}", "--nodes=2"], env=env,
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r
    assert r.stdout == f"sbatch --time={minutes} --nodes=2 {SLURM / 'gpu-bench-nightly.sbatch'}\n", r
    assert f"{cases} cases (nightly, --device=all): about {round(cases * 0.48)} s by the model" in r.stderr, r
    # 1,109 s measured at four GPUs fits its limit with room for the job's other steps.
    assert minutes * 60 - 600 > {1: 271, 4: 1109.2, 8: 2234}[gpus]
