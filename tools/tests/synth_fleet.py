"""Synthetic fleets built from the committed default runs, with faults planted in a few GPUs.

Each node is one of the committed default runs (results/sampled/default_h100.json.gz, default_h200.json.gz: every
case with its timed samples, `sample_times_s`) measured again as a node of its own would measure it:
- each case's figure is the median of a bootstrap resample of that case's own samples (the spread of a
  median of that many samples of that case, the within-run noise gpu_bench's noise_pct describes),
- times a run-to-run shift of the same size again (a normal draw with sigma = noise_pct / 1.96), since a
  rerun on another day or node moves more than one run's samples show,
- times a GPU-to-GPU factor shared by all cases of that GPU (sigma 0.5%), for parts that are not alike.
With noise="repetitions", a case that the committed runs of five repetitions have (the Transfer matrix and
the families of an H100 and of an H200, measured before adaptive sampling) takes instead the spread of those
repetitions: each node draws one of them (relative to their median), a much rougher model of a rerun.
Faults: a planted GPU copies 20-30% slower over its host link one way (`h2d` or `d2h`: Transfer copies of
1 MiB or more in that direction) or out of its own memory (`d2d`: device copies of 16 MiB or more).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from gpu_bench_tools.reading.files import read_text

REPO = Path(__file__).resolve().parents[2]
SOURCES = {"H100": REPO / "results/sampled/default_h100.json.gz", "H200": REPO / "results/sampled/default_h200.json.gz"}
REPETITIONS = {m: (REPO / f"results/transfer_{m.lower()}_reps5.json",
                   REPO / f"results/families/families_reps5_{m.lower()}.json") for m in SOURCES}
FAULTS = ("h2d", "d2h", "d2d")
GPU_SIGMA = 0.005


def faulty(name: str, kind: str) -> bool:
    """Whether a planted fault of this kind slows this case."""
    parts = dict(p.split(":", 1) for p in name.split("/")[1:] if ":" in p)
    if not name.startswith("Transfer/") or "bytes" not in parts:
        return False
    b = int(parts["bytes"])
    if kind == "d2d":
        return parts.get("dir") == "d2d" and b >= 16 << 20
    return parts.get("dir") == kind and b >= 1 << 20


def _template(path: Path):
    doc = json.loads(read_text(path))
    ctx = doc["context"]
    out = []
    for e in doc["benchmarks"]:
        fam = e["name"].split("/")[0].lower()
        head = ctx.get(f"family.{fam}.headline", "real_time")
        kind = ctx.get(f"family.{fam}.headline_kind", "time")
        out.append((e, head, kind))
    return ctx, out


def _repetition_ratios(model: str) -> dict[str, list[float]]:
    """case key -> each repetition's time over the median repetition's, from the committed runs of 5."""
    import statistics

    from gpu_bench_tools.reading.load import load_file

    out = {}
    for path in REPETITIONS[model]:
        f = load_file(path)
        for c in f.cases.values():
            d = f.descriptor(c.family)
            vals = c.values(d.headline)
            if len(vals) >= 3 and statistics.median(vals) > 0:
                mid = statistics.median(vals)
                out[c.key] = [mid / v if d.higher_is_better else v / mid for v in vals if v > 0]
    return out


def build(out_dir: str | Path, nodes: int, faults: dict[int, tuple[str, float]] | None = None,
          seed: int = 1, noise: str = "samples") -> tuple[list[str], dict[str, tuple[str, float]]]:
    """Write `nodes` node files (half H100, half H200) into out_dir; return (paths, {host: (fault, factor)}).

    `faults` maps a node number to (kind, factor of its speed), e.g. {17: ("h2d", 0.75)}.
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    faults = faults or {}
    models = {m: _template(p) for m, p in SOURCES.items()}
    which = ["H100" if i % 2 == 0 else "H200" for i in range(nodes)]
    # ratio[model][case index][k-th node of that model]: node time over the committed run's time
    ratios = {}
    for m, (ctx, entries) in models.items():
        n = which.count(m)
        gpu = np.exp(rng.normal(0.0, GPU_SIGMA, n))
        reps = _repetition_ratios(m) if noise == "repetitions" else {}
        rows = []
        for e, _head, _kind in entries:
            key = e["name"].removesuffix("/manual_time")
            if key in reps:
                rows.append(np.asarray(reps[key])[rng.integers(0, len(reps[key]), n)] * gpu)
                continue
            t = np.asarray(e.get("sample_times_s") or [e["real_time"]], dtype=float)
            boot = np.median(t[rng.integers(0, len(t), size=(n, len(t)))], axis=1) / np.median(t)
            run = np.exp(rng.normal(0.0, float(e.get("noise_pct", 0.0)) / 100.0 / 1.96, n))
            rows.append(boot * run * gpu)
        ratios[m] = rows
    paths, planted = [], {}
    seen = {m: 0 for m in models}
    for i in range(nodes):
        m = which[i]
        ctx, entries = models[m]
        k = seen[m]
        seen[m] += 1
        host = f"node-{i:04d}"
        uuid = f"GPU-{i:08x}-{'aaaa' if m == 'H100' else 'bbbb'}-4000-8000-{i:012x}"
        c = dict(ctx, host_name=host, date=f"2026-11-23T02:{(i // 60) % 60:02d}:{i % 60:02d}+00:00")
        c["gpu.uuid"] = c["gpu.0.uuid"] = uuid
        fault = faults.get(i)
        if fault:
            planted[host] = fault
        bench = []
        for j, (e, head, kind) in enumerate(entries):
            r = float(ratios[m][j][k])
            if fault and faulty(e["name"], fault[0]):
                r /= fault[1]
            new = {key: v for key, v in e.items() if key != "sample_times_s"}
            new["real_time"] = e["real_time"] * r
            for key in ("gbps", "bytes_per_second"):
                if key in e and isinstance(e[key], float):
                    new[key] = e[key] / r
            if head not in ("real_time", "gbps", "bytes_per_second") and isinstance(e.get(head), float):
                new[head] = e[head] / r if kind == "rate" else e[head] * r
            if not math.isfinite(new["real_time"]):
                raise ValueError(f"{e['name']}: no finite figure for node {i}")
            bench.append(new)
        p = out_dir / f"{host}.json"
        p.write_text(json.dumps({"context": c, "benchmarks": bench}, separators=(",", ":")))
        paths.append(str(p))
    return paths, planted


def spread_faults(nodes: int, count: int, seed: int = 7) -> dict[int, tuple[str, float]]:
    """`count` faults over the nodes (both models, every kind), each slowing its GPU by 20-30%."""
    import random

    rnd = random.Random(seed)
    picks = rnd.sample(range(nodes), count)
    return {i: (FAULTS[k % len(FAULTS)], round(rnd.uniform(0.70, 0.80), 3)) for k, i in enumerate(picks)}
