"""deploy/kubernetes without a cluster: every manifest against the Kubernetes API's schemas (the package
kubernetes-validate, strict: an unknown field is an error), what the CronJob promises (one pod per GPU node, the
database from a Secret, a verdict not retried), the pod's command run here as the pod runs it, and Node Problem
Detector's custom-plugin config against the checks NPD makes when it loads one.
"""

from __future__ import annotations

import copy
import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import gatefiles as gf
import pytest
import services as sv
from conftest import REPO, TOOLS
from toolbin import degraded_copy, tool_bin

try:
    import kubernetes_validate as kv
    import yaml
except ImportError:
    pytest.skip("kubernetes-validate is missing: pip install kubernetes-validate (in tools[deploy])",
                allow_module_level=True)

K8S = REPO / "deploy" / "kubernetes"
NPD_CONFIG = K8S / "npd" / "gpu-bench-monitor.json"
# The oldest Kubernetes the manifests are written for (podFailurePolicy's FailIndex and backoffLimitPerIndex),
# and the newest whose schemas the installed kubernetes-validate has.
K8S_VERSIONS = sorted({"1.31.0", kv.latest_version()})
# Where the image and a node hold the repository's programs (docs/fleet.md, "Slurm" and "Kubernetes").
INSTALLED = {
    "/usr/local/bin/gpu-bench-nightly": REPO / "deploy" / "slurm" / "gpu-bench-nightly.sbatch",
    "/usr/local/sbin/gpu-bench-node-check": REPO / "deploy" / "prometheus" / "gpu-bench-node-check.sh",
}
GATE_DEGRADED, GATE_ERRORED = 1, 2
CHECK_ERRORED = 4  # the check could not judge the node: nothing drained, the verdict errored
GO_DURATION = re.compile(r"^(?:(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h))+$")
GO_UNIT_S = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def manifests() -> list[tuple[Path, dict]]:
    docs = []
    for path in sorted(K8S.rglob("*.yaml")):
        docs += [(path, d) for d in yaml.safe_load_all(path.read_text()) if d is not None]
    return docs


def one(kind: str) -> dict:
    found = [d for _, d in manifests() if d["kind"] == kind]
    assert len(found) == 1, kind
    return found[0]


def schema_errors(doc: dict, version: str) -> str | None:
    try:
        kv.validate(doc, version, strict=True)
    except kv.ValidationError as e:
        return f"{e.message} at {'/'.join(str(p) for p in e.absolute_path)}"
    return None


@pytest.mark.parametrize("version", K8S_VERSIONS)
def test_every_manifest_is_valid_kubernetes(version):
    docs = manifests()
    assert sorted(d["kind"] for _, d in docs) == ["CronJob", "Namespace", "PersistentVolumeClaim"]
    for path, doc in docs:
        assert schema_errors(doc, version) is None, (path.name, version, schema_errors(doc, version))


def test_a_mistake_in_a_manifest_is_caught():
    """The check above can fail: a misspelt field and a count that is not a number are refused."""
    cron = one("CronJob")
    typo = copy.deepcopy(cron)
    pod = typo["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    pod["tolerationz"] = pod.pop("tolerations")
    assert "'tolerationz' was unexpected" in schema_errors(typo, K8S_VERSIONS[0])
    count = copy.deepcopy(cron)
    count["spec"]["jobTemplate"]["spec"]["completions"] = "four"
    assert "is not of type" in schema_errors(count, K8S_VERSIONS[0])


def pod_spec(cron: dict) -> dict:
    return cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]


def test_the_nightly_job_puts_one_pod_on_each_gpu_node():
    cron = one("CronJob")
    job = cron["spec"]["jobTemplate"]["spec"]
    pod = pod_spec(cron)
    assert job["completionMode"] == "Indexed" and job["completions"] == job["parallelism"] >= 1
    labels = job["template"]["metadata"]["labels"]
    anti = pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert [(t["topologyKey"], t["labelSelector"]["matchLabels"]) for t in anti] == [("kubernetes.io/hostname", labels)]
    gpu_nodes = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    gpu_label = {"key": "nvidia.com/gpu.present", "operator": "In", "values": ["true"]}
    assert gpu_nodes == [{"matchExpressions": [gpu_label]}]
    (container,) = pod["containers"]
    assert int(container["resources"]["limits"]["nvidia.com/gpu"]) >= 1
    assert cron["spec"]["concurrencyPolicy"] == "Forbid" and pod["restartPolicy"] == "Never"
    # A degraded or errored node fails its own index, once: the verdict is not measured again, and the other
    # nodes' pods go on.
    (rule,) = job["podFailurePolicy"]["rules"]
    assert rule["action"] == "FailIndex" and rule["onExitCodes"]["values"] == [GATE_DEGRADED, GATE_ERRORED,
                                                                              CHECK_ERRORED]
    assert rule["onExitCodes"]["containerName"] == container["name"] and "backoffLimitPerIndex" in job
    # Every name the manifests refer to is one they make.
    assert {d["metadata"].get("namespace") for _, d in manifests() if d["kind"] != "Namespace"} == \
        {one("Namespace")["metadata"]["name"]}
    claims = [v["persistentVolumeClaim"]["claimName"] for v in pod["volumes"] if "persistentVolumeClaim" in v]
    assert claims == [one("PersistentVolumeClaim")["metadata"]["name"]]


def test_the_database_url_comes_from_a_secret_and_no_password_is_committed():
    (container,) = pod_spec(one("CronJob"))["containers"]
    env = {e["name"]: e for e in container["env"]}
    assert env["GPU_BENCH_DB"]["valueFrom"]["secretKeyRef"] == {"name": "gpu-bench-db", "key": "url", "optional": True}
    assert "Secret" not in {d["kind"] for _, d in manifests()}
    for path in K8S.rglob("*"):
        if path.is_file():
            assert not re.search(r"://[^/@\s:]+:[^/@\s]+@", path.read_text()), f"{path}: a URL with a password"


def pod_env(container: dict, node: str, out: Path, db: Path) -> dict:
    """The container's environment as the kubelet would make it on `node`, with the Secret's URL `db`."""
    env = {}
    for e in container["env"]:
        if "value" in e:
            env[e["name"]] = e["value"]
        elif "fieldRef" in e["valueFrom"]:
            assert e["valueFrom"]["fieldRef"]["fieldPath"] == "spec.nodeName"
            env[e["name"]] = node
        else:
            env[e["name"]] = str(db)
    mounts = {m["mountPath"] for m in container["volumeMounts"]}
    assert env["GPU_BENCH_OUT"] in mounts and env["HOME"] in mounts
    env.update(GPU_BENCH_OUT=str(out), HOME=str(out.parent))
    # The Pushgateway's push is tested against a real one in test_prometheus_live.py; here it would leave
    # this machine.
    env.pop("GPU_BENCH_PUSHGATEWAY")
    return env


@pytest.mark.parametrize("results,status,line", [
    (gf.GATE_H100, 0, "node-a: PASS: 8 figures within expectations on GPU 0 H100 80GB HBM3"),
    ("degraded", 1, "node-a: DEGRADED: d2d "),
    ("missing", CHECK_ERRORED, "node-a: ERRORED: no result to replay: "),
])
def test_the_pods_command_judges_keeps_and_drains_nothing(results, status, line, tmp_path):
    """The container's command with its environment from the manifest, a committed run replayed."""
    (container,) = pod_spec(one("CronJob"))["containers"]
    (command,) = container["command"]
    script = INSTALLED[command]
    if results == "degraded":
        results = degraded_copy(tmp_path)
    elif results == "missing":
        results = tmp_path / "missing.json"
    tool_bin(tmp_path / "bin", sys.executable, TOOLS)
    env = sv.no_proxy_env(pod_env(container, "node-a", tmp_path / "results", tmp_path / "history.sqlite"))
    env.update(PATH=f"{tmp_path / 'bin'}:{os.environ['PATH']}", GPU_BENCH_RESULT=str(results))
    r = subprocess.run([str(script)], capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)
    assert r.returncode == status and r.stdout.startswith(line), r
    assert ("node-a: not drained" in r.stdout) == (status != 0), r
    (verdict,) = (tmp_path / "results").glob("node-a-nightly-*.verdict")
    assert verdict.read_text().startswith(line.removeprefix("node-a: "))
    with sqlite3.connect(tmp_path / "history.sqlite") as conn:
        runs = conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
        errored = conn.execute("SELECT preset, reason FROM check_errors").fetchall()
    assert runs == (0 if status == CHECK_ERRORED else 1)
    # The night is in the history either way: a run, or the check that could not judge the node.
    assert errored == ([("nightly", f"no result to replay: {results} is missing or empty")]
                       if status == CHECK_ERRORED else [])


def go_seconds(text: str) -> float:
    m = GO_DURATION.match(text)
    if not m:
        raise ValueError(f"not a Go duration: {text!r}")
    return sum(float(n) * GO_UNIT_S[u] for n, u in re.findall(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)", text))


def npd_problems(config: dict) -> list[str]:
    """What NPD (pkg/custompluginmonitor/types/config.go) refuses when it loads a custom-plugin config, and
    what would make it useless for the gate; a rule's path is looked up where the node holds it."""
    problems = []
    if config.get("plugin") != "custom":
        problems.append(f"plugin is {config.get('plugin')!r}, not 'custom'")
    for key in ("source", "conditions", "rules"):
        if not config.get(key):
            problems.append(f"no {key}")
    glob = config.get("pluginConfig", {})
    try:
        timeout = go_seconds(glob.get("timeout", "5s"))
        go_seconds(glob.get("invoke_interval", "30s"))
    except ValueError as e:
        return problems + [str(e)]
    # A gate run takes seconds a GPU; NPD's default of 5 s would cut it off.
    if timeout < 60:
        problems.append(f"timeout {glob.get('timeout', '5s')} is shorter than a gate run")
    # NPD keeps this much of the output as the condition's message; the gate's first line is at most 80.
    if glob.get("max_output_length", 80) < 80:
        problems.append("max_output_length cuts the gate's first line")
    types = set()
    for cond in config.get("conditions", []):
        missing = {"type", "reason", "message"} - cond.keys()
        if missing:
            problems.append(f"condition without {sorted(missing)}")
        types.add(cond.get("type"))
    for rule in config.get("rules", []):
        if rule.get("type") not in ("temporary", "permanent"):
            problems.append(f"rule type {rule.get('type')!r}")
        if not rule.get("reason"):
            problems.append("rule without a reason")
        if rule.get("type") == "permanent" and rule.get("condition") not in types:
            problems.append(f"permanent rule's condition {rule.get('condition')!r} has no default condition")
        if "timeout" in rule and go_seconds(rule["timeout"]) > timeout:
            problems.append("rule timeout longer than the global timeout")
        target = INSTALLED.get(rule.get("path"))
        if target is None or not target.is_file() or not os.access(target, os.X_OK):
            problems.append(f"rule path {rule.get('path')!r} is no program of the repository")
    return problems


def test_the_npd_config_is_one_npd_loads_and_calls_the_node_check():
    config = json.loads(NPD_CONFIG.read_text())
    assert npd_problems(config) == []
    # Its program is the node check: the gate's exit status as NPD's (0 OK, 1 NonOK, 2 Unknown), the first
    # line at most 80 characters (test_prometheus_live.py runs it for each verdict).
    (rule,) = config["rules"]
    assert INSTALLED[rule["path"]].name == "gpu-bench-node-check.sh"


def test_a_broken_npd_config_is_caught():
    config = json.loads(NPD_CONFIG.read_text())
    broken = copy.deepcopy(config)
    broken["rules"][0].update(condition="GpuBenchSlow", path="/usr/local/sbin/gpu-bench-nothing", timeout="10m")
    broken["pluginConfig"]["timeout"] = "5s"
    problems = npd_problems(broken)
    assert any("has no default condition" in p for p in problems), problems
    assert any("no program of the repository" in p for p in problems), problems
    assert any("shorter than a gate run" in p for p in problems), problems
    assert any("longer than the global timeout" in p for p in problems), problems
    assert npd_problems({**config, "pluginConfig": {"timeout": "2 minutes"}}) == ["not a Go duration: '2 minutes'"]
