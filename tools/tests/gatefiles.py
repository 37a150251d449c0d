"""Gate runs for the tests: the committed ones, and changed copies of them (a figure made worse, a case
failed, several GPUs with peer pairs)."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

from gpu_bench_tools.reading.files import read_text

REPO = Path(__file__).resolve().parents[2]
GATE_H100 = REPO / "results" / "gate" / "gate_h100.json"
GATE_H200 = REPO / "results" / "gate" / "gate_h200.json"
DEFAULT_H100 = REPO / "results" / "sampled" / "default_h100.json.gz"
DEFAULT_H200 = REPO / "results" / "sampled" / "default_h200.json.gz"
PEER_H200X4 = REPO / "results" / "multi" / "peer_h200x4.json"
# Committed runs of nodes of several GPUs: every GPU of a node of four H200s (gate), GPU 0 of a node of two H200s
# and of another of four (default), every GPU of a node of four H100s (default).
GATE_H200X4 = REPO / "results" / "multi" / "h200x4_fc0a364" / "gate_all_h200x4.json"
NODE_RUNS = (GATE_H200X4, REPO / "results" / "multi" / "h200x4_8dc4102" / "gate_all_1.json",
             REPO / "results" / "aa" / "h200x2_default_14dbca2" / "default_h200x2_run1.json.gz",
             REPO / "results" / "aa" / "h200x4_default_64ce113" / "default_h200x4_run1.json.gz",
             REPO / "results" / "multi" / "h100x4_b03a548" / "default_all_h100x4.json.gz")
PEER_CASE = "Peer/src:{s}/dst:{d}/peer_access:on/dir:bidir/bytes:268435456/manual_time"


def read(path) -> dict:
    return json.loads(read_text(path))


def write(path, doc) -> str:
    Path(path).write_text(json.dumps(doc, indent=1))
    return str(path)


def entry(doc: dict, prefix: str) -> dict:
    """The one benchmark entry whose name starts with prefix."""
    found = [b for b in doc["benchmarks"] if b["name"].startswith(prefix)]
    assert len(found) == 1, (prefix, [b["name"] for b in found])
    return found[0]


def scaled(doc: dict, prefix: str, metric: str, factor: float) -> dict:
    out = copy.deepcopy(doc)
    entry(out, prefix)[metric] *= factor
    return out


def failed(doc: dict, prefix: str, message: str) -> dict:
    out = copy.deepcopy(doc)
    e = entry(out, prefix)
    for k in [k for k, v in e.items() if isinstance(v, (int, float)) and k not in ("iterations", "repetitions",
                                                                                  "repetition_index", "threads",
                                                                                  "family_index",
                                                                                  "per_family_instance_index")]:
        del e[k]
    e.update(error_occurred=True, error_message=message)
    return out


def multi_gpu(doc: dict, gpus: int = 2, peer_gbps: dict | None = None, links: dict | None = None,
              nvlink_gbps: float | None = None) -> dict:
    """A --device=all gate run of `gpus` GPUs made from a one-GPU run: each single-GPU case once per GPU
    (names ending in /device:N), a Peer bidir case per pair i < j (peer_gbps[(i, j)], default 767) and
    each pair's link (links[(i, j)], default nvlink), with its NVLink peak per direction where given."""
    out = copy.deepcopy(doc)
    ctx = out["context"]
    ctx["gpu_bench.device"] = "all"
    ctx["gpu.count"] = str(gpus)
    for i in range(gpus):
        ctx[f"gpu.{i}.name"] = ctx["gpu.name"]
        ctx[f"gpu.{i}.uuid"] = re.sub(r"[0-9a-f]{4}$", f"{i:04x}", ctx["gpu.uuid"])
        ctx[f"gpu.{i}.pci_bus_id"] = f"0000:00:{6 + i:02x}.0"
        for j in range(gpus):
            if i != j:
                a, b = min(i, j), max(i, j)
                ctx[f"topology.{i}-{j}.link"] = (links or {}).get((a, b), "nvlink")
                ctx[f"topology.{i}-{j}.peer_access"] = "yes"
                if nvlink_gbps is not None:
                    ctx[f"topology.{i}-{j}.nvlink_gbps"] = f"{nvlink_gbps:g}"
    singles = out["benchmarks"]
    out["benchmarks"] = []
    for i in range(gpus):
        for b in singles:
            c = copy.deepcopy(b)
            for k in ("name", "run_name"):
                if k in c:
                    c[k] = c[k].replace("/manual_time", f"/device:{i}/manual_time")
            out["benchmarks"].append(c)
    for i in range(gpus):
        for j in range(i + 1, gpus):
            gbps = (peer_gbps or {}).get((i, j), 767.0)
            name = PEER_CASE.format(s=i, d=j)
            out["benchmarks"].append({
                "name": name, "run_name": name, "run_type": "iteration", "repetitions": 1, "repetition_index": 0,
                "threads": 1, "iterations": 1, "real_time": 2 * 268435456 / gbps / 1e3, "cpu_time": 1.0,
                "time_unit": "us", "gbps": gbps, "noise_pct": 0.05, "samples": 30.0})
    return out
