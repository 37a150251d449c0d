"""Facts of multi-GPU runs: each GPU (gpu.{i}.KEY) and each ordered pair's link (topology.{i}-{j}.KEY)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .context_values import UNAVAILABLE

if TYPE_CHECKING:
    from .results import BenchmarkFile

GPU_FACTS = (("name", ""), ("pci_bus_id", " PCI bus"), ("numa_node", " NUMA node"))
TOPOLOGY_FACTS = ("link", "peer_access", "perf_rank", "native_atomics")
MAX_GPUS = 64  # a larger index or count in a context is taken for a mistake, not a machine
_GPU_KEY = re.compile(r"^gpu\.(\d+)\.[a-z_]+$")
_TOPOLOGY_KEY = re.compile(r"^topology\.(\d+)-(\d+)\.([a-z_]+)$")


def short_gpu_name(name: str) -> str:
    return re.sub(r"^NVIDIA\s+", "", name.strip())


def gpu_count(f: BenchmarkFile) -> int | None:
    """GPUs in the machine: gpu.count, else one more than the highest gpu.N index, else 1 where a name is known."""
    try:
        n = int(f.fact("gpu.count") or "")
    except ValueError:
        n = 0
    if 0 < n <= MAX_GPUS:
        return n
    idx = [int(m.group(1)) for k in f.context if (m := _GPU_KEY.match(str(k))) and int(m.group(1)) < MAX_GPUS]
    if idx:
        return max(idx) + 1
    return 1 if f.fact("gpu.name") else None


def gpus_used(f: BenchmarkFile) -> list[int]:
    """The GPUs the run measured: gpu_bench.device N, or every GPU for 'all' (and for files without the fact)."""
    n = gpu_count(f) or 1
    dev = f.fact("gpu_bench.device")
    if dev is not None and dev.isdigit() and int(dev) < MAX_GPUS:
        return [int(dev)]
    return list(range(n))


def gpu_fact(f: BenchmarkFile, index: int, key: str) -> str | None:
    """A fact of GPU `index`; GPU 0 falls back on the first device's gpu.KEY."""
    v = f.fact(f"gpu.{index}.{key}")
    if v is None and index == 0:
        v = f.fact(f"gpu.{key}")
    return v


def gpu_summary(f: BenchmarkFile) -> str | None:
    """The GPUs the run measured: '4 x H100 80GB HBM3', '2 x H100, 2 x A100', or 'H200 (GPU 0 of 2)'.

    None where no GPU name is known.
    """
    n = gpu_count(f) or 1
    used = gpus_used(f)
    if len(used) == 1 and n > 1:
        name = gpu_fact(f, used[0], "name") or (f.fact("gpu.name") if used[0] == 0 else None)
        return f"{short_gpu_name(name)} (GPU {used[0]} of {n})" if name else None
    names: dict[str, int] = {}
    unknown = 0
    for i in used:
        name = gpu_fact(f, i, "name")
        if name:
            names[short_gpu_name(name)] = names.get(short_gpu_name(name), 0) + 1
        else:
            unknown += 1
    if not names:
        return None
    text = ", ".join(f"{k} x {name}" for name, k in names.items())
    return text + (f" and {unknown} GPU(s) whose name is unavailable" if unknown else "")


def gpu_uuids(f: BenchmarkFile) -> tuple[str, ...]:
    """The UUIDs of the GPUs the run measured (what tells one machine's GPUs from another's)."""
    out = []
    for i in gpus_used(f):
        u = gpu_fact(f, i, "uuid") or (f.fact("gpu.uuid") if i == gpus_used(f)[0] else None)
        if u:
            out.append(u)
    return tuple(dict.fromkeys(out))


def topology(f: BenchmarkFile) -> dict[tuple[int, int], dict[str, str]]:
    """(src, dst) -> {link, peer_access, perf_rank, native_atomics}, as written ('unavailable' kept)."""
    out: dict[tuple[int, int], dict[str, str]] = {}
    for k in f.context:
        m = _TOPOLOGY_KEY.match(str(k))
        if not m or m.group(3) not in TOPOLOGY_FACTS:
            continue
        i, j = int(m.group(1)), int(m.group(2))
        if i < MAX_GPUS and j < MAX_GPUS:
            out.setdefault((i, j), {})[m.group(3)] = f.fact(k) or UNAVAILABLE
    return out


def link_text(facts: dict[str, str] | None) -> str:
    """One pair's facts in one short phrase: 'nvlink, p2p yes, rank 0, atomics yes'."""
    if not facts:
        return UNAVAILABLE
    link, p2p, rank, atomics = (facts.get(k, UNAVAILABLE) for k in TOPOLOGY_FACTS)
    return f"{link}, p2p {p2p}, rank {rank}, atomics {atomics}"


def multi_gpu_rows(files: list[BenchmarkFile], per_gpu: bool = True) -> list[tuple[str, list[str]]]:
    """The GPU count and (per_gpu) each GPU's facts and each ordered pair's link, where any file has 2+ GPUs."""
    counts = [gpu_count(f) for f in files]
    if not any(c and c > 1 for c in counts) and not any(f.fact("gpu.count") for f in files):
        return []
    rows = [("GPUs", [str(f.fact("gpu.count") or (UNAVAILABLE if f.is_gpu_bench else "-")) for f in files])]
    n = max((c or 0) for c in counts)
    if n < 2 or not per_gpu:
        return rows
    for i in range(n):
        for key, suffix in GPU_FACTS:
            rows.append((f"GPU {i}{suffix}", [(gpu_fact(f, i, key) or UNAVAILABLE) if i < (c or 0) else "-"
                                              for f, c in zip(files, counts)]))
    topo = [topology(f) for f in files]
    pairs = sorted({p for t in topo for p in t if p[0] != p[1] and max(p) < n})
    for i, j in pairs:
        rows.append((f"GPU {i} -> {j}", [link_text(t.get((i, j))) if max(i, j) < (c or 0) else "-"
                                         for t, c in zip(topo, counts)]))
    return rows
