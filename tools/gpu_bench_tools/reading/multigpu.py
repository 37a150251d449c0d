"""Facts of multi-GPU runs: each GPU (gpu.{i}.KEY) and each ordered pair's link (topology.{i}-{j}.KEY)."""

from __future__ import annotations

import math
import re

from .cases import Case
from .context_values import UNAVAILABLE
from .results import BenchmarkFile

GPU_FACTS = (("name", ""), ("pci_bus_id", " PCI bus"), ("numa_node", " NUMA node"),
             ("profile.host_link", " host link"), ("pcie", " PCIe link (now / max)"), ("local_cpus", " local CPUs"),
             ("nvlink", " NVLinks"))
# Written for every GPU by every run of several GPUs; any other per-GPU fact (link, peaks, clocks, health)
# only since gpu.N.* holds each GPU's own (docs/json.md), before which gpu.* and profile.* held one GPU's.
IDENTITY_FACTS = ("name", "uuid", "pci_bus_id", "numa_node")
TOPOLOGY_FACTS = ("link", "peer_access", "perf_rank", "native_atomics")
# How many NVLinks join a pair and their peak per direction, GB/s (`0` and `none` without): files since
# gpu_bench read NVLinks from NVML.
NVLINK_FACTS = ("nvlinks", "nvlink_gbps")
# A node's shape (node_shape): a host of one GPU, or a node of several.
ONE_GPU, SEVERAL_GPUS = "one GPU", "several GPUs"
NODE_SHAPES = (ONE_GPU, SEVERAL_GPUS)
MAX_GPUS = 64  # a larger index or count in a context is taken for a mistake, not a machine
_GPU_KEY = re.compile(r"^gpu\.(\d+)\.[a-z_]+$")
_TOPOLOGY_KEY = re.compile(r"^topology\.(\d+)-(\d+)\.([a-z_]+)$")
# The key every file with each GPU's own facts has for each GPU.
_PER_GPU_MARK = re.compile(r"^gpu\.\d+\.profile\.host_link$")


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


def described_gpu(f: BenchmarkFile) -> int:
    """The GPU whose facts the file writes without an index (gpu.*, profile.*): --device N, else GPU 0."""
    dev = f.fact("gpu_bench.device")
    return int(dev) if dev is not None and dev.isdigit() and int(dev) < MAX_GPUS else 0


def has_per_gpu_facts(f: BenchmarkFile) -> bool:
    """Whether the file writes each GPU's own link, peaks, clocks and health (gpu.N.*)."""
    cached = f.__dict__.get("_per_gpu_facts")
    if cached is None:
        cached = f.__dict__["_per_gpu_facts"] = any(_PER_GPU_MARK.match(str(k)) for k in f.context)
    return cached


def first_gpu_key(key: str) -> str:
    """Where a file keeps a per-GPU fact of the GPU it describes without an index: 'profile.host_link' stays,
    'numa_node' is host.gpu_numa_node, any other KEY is gpu.KEY."""
    if key.startswith("profile."):
        return key
    return "host.gpu_numa_node" if key == "numa_node" else f"gpu.{key}"


def gpu_fact(f: BenchmarkFile, index: int, key: str) -> str | None:
    """Fact KEY of GPU `index` ('name', 'pcie_gen_max', 'profile.host_link', ...): gpu.INDEX.KEY.

    A file without it falls back on the facts it writes without an index: for the GPU those describe
    (described_gpu), and, for a fact other than the GPU's identity, for every GPU of a file written before
    each GPU's own facts were (first_gpu_facts_only says when that matters).
    """
    if key == "pcie":
        return pcie_text(f, index)
    if key == "nvlink":
        return nvlink_text(f, index)
    indexed = f"gpu.{index}.{key}"
    if indexed in f.context:
        return f.fact(indexed)
    if index == described_gpu(f) or (key not in IDENTITY_FACTS and not has_per_gpu_facts(f)):
        return f.fact(first_gpu_key(key))
    return None


def pcie_text(f: BenchmarkFile, index: int | None = None) -> str | None:
    """'gen1 x16 / gen5 x16': the PCIe link as read and at its most, of GPU `index` (None: the described GPU)."""
    def get(k: str) -> str | None:
        return f.fact(f"gpu.{k}") if index is None else gpu_fact(f, index, k)

    gen, width, gmax, wmax = (get(k) for k in ("pcie_gen", "pcie_width", "pcie_gen_max", "pcie_width_max"))
    if not any((gen, width, gmax, wmax)):
        return None
    return f"gen{gen or '?'} x{width or '?'} / gen{gmax or '?'} x{wmax or '?'}"


def nvlink_text(f: BenchmarkFile, index: int) -> str | None:
    """'18 x 26.562 GB/s = 478.116 GB/s per direction', 'none', or None where the file has no NVLink facts."""
    links, rate, peak = (f.fact(f"gpu.{index}.{k}") for k in ("nvlinks", "nvlink_link_gbps", "profile.nvlink_gbps"))
    if links is None:
        return None
    if links == "0":
        return "none"
    return f"{links} x {rate or UNAVAILABLE} GB/s = {peak or UNAVAILABLE} GB/s per direction"


def _number(text: str | None) -> float | None:
    try:
        v = float(text) if text is not None else None
    except ValueError:
        return None
    return v if v is not None and math.isfinite(v) and v > 0 else None


def nvlink_peak(f: BenchmarkFile, src: int, dst: int) -> float | None:
    """The NVLink peak per direction of GPUs src -> dst, GB/s (topology.src-dst.nvlink_gbps); None where the
    pair has no NVLink or the file does not say."""
    return _number(f.fact(f"topology.{src}-{dst}.nvlink_gbps"))


def gpu_nvlink_peak(f: BenchmarkFile, index: int) -> float | None:
    """GPU `index`'s NVLink peak per direction over all its links, GB/s (gpu.N.profile.nvlink_gbps)."""
    return _number(f.fact(f"gpu.{index}.profile.nvlink_gbps"))


def peer_peak(f: BenchmarkFile, c: Case) -> float | None:
    """The NVLink peak a peer figure (its headline, gbps) is a share of, GB/s; None where there is none.

    Peer with peer access: its pair's peak, twice for bidir (both directions count). PeerPattern: per GPU
    whose figure the pattern reports (pattern_gpu_of in gpu_bench: every sender, or GPU 0 for one_to_all and
    all_to_one), the lesser of that GPU's own peak and its pairs' peaks summed; all of them added for
    all_pairs.
    """
    if c.family == "Peer":
        src, dst = c.axis("src"), c.axis("dst")
        if c.axis("peer_access") != "on" or not (src or "").isdigit() or not (dst or "").isdigit():
            return None
        peak = nvlink_peak(f, int(src), int(dst))
        return None if peak is None else peak * (2 if c.axis("dir") == "bidir" else 1)
    if c.family != "PeerPattern":
        return None
    n = gpu_count(f) or 0
    pattern = c.axis("pattern")
    if n < 2 or pattern not in ("one_to_all", "all_to_one", "all_pairs"):
        return None
    if pattern == "one_to_all":
        groups = {0: [(0, d) for d in range(1, n)]}
    elif pattern == "all_to_one":
        groups = {0: [(s, 0) for s in range(1, n)]}
    else:
        groups = {s: [(s, d) for d in range(n) if d != s] for s in range(n)}
    total = 0.0
    for g, pairs in groups.items():
        own, pair_peaks = gpu_nvlink_peak(f, g), [nvlink_peak(f, a, b) for a, b in pairs]
        if own is None or None in pair_peaks:
            return None
        total += min(own, sum(pair_peaks))
    return total


def peer_shares(f: BenchmarkFile) -> list[tuple[Case, float, float, float]]:
    """(case, figure, peak, share) of every peer figure with an NVLink peak, in the file's order."""
    out = []
    for c in f.cases.values():
        if not c.ok or c.family not in ("Peer", "PeerPattern") or not c.has_metric("gbps"):
            continue
        peak, value = peer_peak(f, c), c.center("gbps")
        if peak and value is not None and math.isfinite(value):
            out.append((c, value, peak, value / peak))
    return out


def first_gpu_facts_only(f: BenchmarkFile) -> bool:
    """A file of several GPUs written before each GPU's own facts were: every GPU reads the described one's."""
    return f.is_gpu_bench and not has_per_gpu_facts(f) and (gpu_count(f) or 1) > 1


def first_gpu_facts_note(files) -> str | None:
    """The one line that says which files' GPUs are all read with one GPU's link, peaks, clocks and NUMA node."""
    old = [f for f in files if first_gpu_facts_only(f)]
    if not old:
        return None
    gpus = sorted({described_gpu(f) for f in old})
    shown = ", ".join(str(f.path) for f in old[:3]) + (f" and {len(old) - 3} more" if len(old) > 3 else "")
    which = f"GPU {gpus[0]}'s" if len(gpus) == 1 else "the first measured GPU's"
    return (f"{shown}: written before gpu_bench wrote each GPU's own facts (gpu.N.*), so every GPU of "
            f"{'it' if len(old) == 1 else 'them'} is read with {which} link, peaks, clocks and NUMA node")


def gpu_summary(f: BenchmarkFile, whole_node: bool = False) -> str | None:
    """The GPUs the run measured: '4 x H100 80GB HBM3', '2 x H100, 2 x A100', or 'H200 (GPU 0 of 2)';
    with whole_node, every GPU of the node, whichever the run measured.

    None where no GPU name is known.
    """
    n = gpu_count(f) or 1
    used = list(range(n)) if whole_node else gpus_used(f)
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


def node_uuids(f: BenchmarkFile) -> tuple[str, ...]:
    """The UUIDs of every GPU of the node, whichever the run measured: what tells one node from another
    (those of the measured GPUs where the file names no other)."""
    out = [u for i in range(gpu_count(f) or 1) if (u := gpu_fact(f, i, "uuid"))]
    return tuple(dict.fromkeys(out)) or gpu_uuids(f)


def node_shape(f: BenchmarkFile) -> str:
    """The node's shape, ONE_GPU or SEVERAL_GPUS (gpu.count), whichever GPUs the run measured.

    The host's side of a copy depends on it: in the committed runs a pinned 4-byte copy takes nearly twice as
    long on a node of two or four GPUs as on a host of one, with the same GPU model, host CPU and link, on GPU 0
    alone as on every GPU (docs/fleet.md has the figures). Expectations and the fleet's cohorts are keyed on it.
    """
    return ONE_GPU if (gpu_count(f) or 1) == 1 else SEVERAL_GPUS


def topology(f: BenchmarkFile) -> dict[tuple[int, int], dict[str, str]]:
    """(src, dst) -> {link, peer_access, perf_rank, native_atomics, and where written nvlinks, nvlink_gbps}, as
    written ('unavailable' kept)."""
    out: dict[tuple[int, int], dict[str, str]] = {}
    for k in f.context:
        m = _TOPOLOGY_KEY.match(str(k))
        if not m or m.group(3) not in TOPOLOGY_FACTS + NVLINK_FACTS:
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
