"""Machine facts from a file's context: the table of facts, what differs between files, labels, configurations."""

from __future__ import annotations

import math
import statistics
from typing import Iterable

from .context_values import UNAVAILABLE
from .multigpu import gpu_count, gpu_fact, gpu_summary, gpu_uuids, multi_gpu_rows, pcie_text, short_gpu_name
from .results import BenchmarkFile

# Facts worth showing when machines are put side by side, in reading order.
FACTS = (
    ("gpu.name", "GPU"),
    ("gpu.uuid", "GPU UUID"),
    ("gpu.cc", "compute capability"),
    ("gpu.sm_count", "SMs"),
    ("gpu.memory_bytes", "GPU memory"),
    ("gpu.l2_bytes", "L2 cache"),
    ("gpu.copy_engines", "copy engines"),
    ("pcie", "PCIe link (now / max)"),
    ("profile.host_link", "host link"),
    ("profile.host_link_gbps", "host link peak GB/s"),
    ("profile.memory_gbps", "memory peak GB/s"),
    ("profile.nvlink_gbps", "NVLink peak GB/s"),
    ("gpu.clock_sm_mhz", "SM clock MHz"),
    ("gpu.ecc", "ECC"),
    ("driver.version", "driver"),
    ("driver.cuda_version", "driver CUDA"),
    ("runtime.version", "CUDA runtime"),
    ("host_name", "host"),
    ("host.cpu", "host CPU"),
    ("num_cpus", "CPUs"),
    ("host.kernel", "kernel"),
    ("host.thp", "transparent huge pages"),
    ("host.gpu_numa_node", "GPU NUMA node"),
    ("host.numa_nodes", "host NUMA nodes"),
    ("host.numa_binding", "host memory bound to"),
    ("host.numa_thread", "thread bound to"),
    ("host.thread_cpu", "thread CPU policy"),
    ("gpu_bench.version", "gpu_bench version"),
    ("gpu_bench.git", "gpu_bench git"),
    ("gpu_bench.preset", "preset"),
    ("gpu_bench.gate", "gate"),
    ("gpu_bench.noise_target_pct", "noise target %"),
    ("benchmark.version", "Google Benchmark"),
    ("library_build_type", "library build"),
)
# Facts only schema 2 writes: older gpu_bench files read '-' for them instead of 'unavailable'.
SCHEMA_2_FACTS = ("profile.", "gpu_bench.preset", "gpu_bench.noise_target_pct")
# What a run's results depend on besides the machine and its software: a change of any is a new series. The
# thread's CPU policy moves the host-driven cases (on one H200's host an event record read 0.25 to 0.28 us
# held in the fast state, 0.25 to 0.41 us unheld). A copy under 1 MiB that rotates over placements reports a mix
# of them, not one draw (gpu_bench.placements).
SETTING_FACTS = ("gpu_bench.gate", "host.gpu_numa_node", "host.numa_nodes", "host.numa_binding", "host.numa_thread",
                 "host.thread_cpu", "gpu_bench.placements")


def host_link_peak(f: BenchmarkFile, gpu: int | None = None) -> tuple[float, str] | None:
    """The host link's peak per direction (GB/s) and its name, from the device profile of GPU `gpu` (None:
    the GPU the file describes as profile.*); None if unknown."""
    def fact(key: str) -> str | None:
        return f.fact(key) if gpu is None else gpu_fact(f, gpu, key)

    text = fact("profile.host_link_gbps")
    try:
        gbps = float(text) if text is not None else math.nan
    except ValueError:
        return None
    if not math.isfinite(gbps) or gbps <= 0:
        return None
    return gbps, fact("profile.host_link") or "host link"


def pcie_max_link(f: BenchmarkFile, gpu: int | None = None) -> str | None:
    """The PCIe link GPU `gpu` (None: the one the file describes as gpu.*) and its slot can train to,
    'PCIe genG xW', or None where it is not known."""
    if gpu is None:
        gen, width = f.fact("gpu.pcie_gen_max"), f.fact("gpu.pcie_width_max")
    else:
        gen, width = gpu_fact(f, gpu, "pcie_gen_max"), gpu_fact(f, gpu, "pcie_width_max")
    return f"PCIe gen{gen} x{width}" if gen and width else None


def host_cpu(f: BenchmarkFile) -> str:
    """The host's CPU as figures measured on the host depend on it: its model (host.cpu) and how many CPUs
    the run saw (Google Benchmark's num_cpus), 'AMD EPYC 9654 96-Core Processor, 192 CPUs'."""
    model = f.fact("host.cpu") or "host CPU unavailable"
    count = f.fact("num_cpus")
    return f"{model}, {count} CPUs" if count else model


def fact_number(f: BenchmarkFile, key: str) -> float:
    """A context fact as a number (gpu_bench.elapsed_s, host.uptime_s, ...); NaN where the file does not say."""
    try:
        return float(f.fact(key))
    except (TypeError, ValueError):
        return math.nan


def host_cpus_differ(a: BenchmarkFile, b: BenchmarkFile) -> bool:
    """Whether two runs' host CPUs differ in model or CPU count, where both files say."""
    pairs = ((a.fact("host.cpu"), b.fact("host.cpu")), (a.fact("num_cpus"), b.fact("num_cpus")))
    return any(x is not None and y is not None and x != y for x, y in pairs)


def gate(f: BenchmarkFile) -> str | None:
    """The gate's state; every gpu_bench run from before --gate=off had it on."""
    return f.fact("gpu_bench.gate") or ("on" if f.is_gpu_bench else None)


def gpu_label(f: BenchmarkFile) -> str | None:
    if (gpu_count(f) or 1) > 1:
        return gpu_summary(f) or (short_gpu_name(f.fact("gpu.name")) if f.fact("gpu.name") else None)
    return short_gpu_name(f.fact("gpu.name")) if f.fact("gpu.name") else None


def machine_label(f: BenchmarkFile, with_host: bool = False) -> str:
    """'H100 80GB HBM3, driver 580.159.04'; with_host adds the host's CPU, which host-side figures depend on."""
    gpu = gpu_label(f)
    driver = f.fact("driver.version")
    label = f"{gpu}, driver {driver}" if gpu and driver else gpu or f.stem
    return f"{label}, {host_cpu(f)}" if with_host else label


def file_labels(files: Iterable[BenchmarkFile], with_host: bool = False) -> list[str]:
    """One legend label per file: GPU and driver (and with_host, the host's CPU), with the file name added
    where two would clash."""
    files = list(files)
    base = [machine_label(f, with_host) for f in files]
    labels = [f"{lab} ({f.stem})" if base.count(lab) > 1 and lab != f.stem else lab for lab, f in zip(base, files)]
    # Same GPU, driver and file stem in different folders: fall back to position.
    for i, lab in enumerate(labels):
        if labels.count(lab) > 1:
            labels[i] = f"{lab} #{i + 1}"
    return labels


def configuration_key(f: BenchmarkFile) -> tuple:
    """A machine configuration: host name, the GPUs measured (UUIDs), driver and runtime."""
    uuids = gpu_uuids(f) or ((f.fact("gpu.name") or f.stem),)
    return (f.fact("host_name") or "?", uuids, f.fact("driver.version") or "?", f.fact("runtime.version") or "?")


def configuration_label(f: BenchmarkFile) -> str:
    """'H100 80GB HBM3 on node-a, driver 580.159.04, CUDA 13.0'."""
    parts = [gpu_label(f) or f.stem]
    if f.fact("host_name"):
        parts[0] += f" on {f.fact('host_name')}"
    if f.fact("driver.version"):
        parts.append(f"driver {f.fact('driver.version')}")
    if f.fact("runtime.version"):
        parts.append(f"CUDA runtime {f.fact('runtime.version')}")
    return ", ".join(parts)


def _show_bytes(v: str) -> str:
    try:
        n = int(v)
    except ValueError:
        return v
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def display_fact(f: BenchmarkFile, key: str) -> str | None:
    """A fact of FACTS as shown: 'pcie' the link as read and at its most, sizes in KiB, MiB or GiB."""
    v = pcie_text(f) if key == "pcie" else f.fact(key)
    if v is not None and key.endswith("_bytes"):
        return _show_bytes(v)
    return v


def _missing(f: BenchmarkFile, key: str) -> str:
    if not f.is_gpu_bench and "." in key:
        return "-"
    if key.startswith(SCHEMA_2_FACTS) and f.schema == "1":
        return "-"
    return UNAVAILABLE


def context_rows(files: list[BenchmarkFile], per_gpu: bool = True) -> list[tuple[str, list[str]]]:
    """Every known fact as (label, value per file); a missing fact reads 'unavailable'.

    Multi-GPU runs add, after the first GPU's name, the GPU count and (per_gpu) each GPU's name, PCI bus
    and NUMA node and each ordered pair's link.
    """
    rows = []
    for key, label in FACTS:
        vals = [display_fact(f, key) or _missing(f, key) for f in files]
        if key == "benchmark.version":
            vals = [f.fact(key) or f.fact("library_version") or "-" for f in files]
        if key == "gpu_bench.gate":
            vals = [gate(f) or "-" for f in files]
        rows.append((label, vals))
        if key == "gpu.name":
            rows += multi_gpu_rows(files, per_gpu)
    return rows


def context_differences(files: list[BenchmarkFile]) -> list[tuple[str, list[str]]]:
    """The facts whose value is not the same in every file."""
    if len(files) < 2:
        return []
    return [(label, vals) for label, vals in context_rows(files) if len(set(vals)) > 1]


# A run is on a busy host where other processes used at least this share of the host's CPU time in its median
# round (gpu_bench.round_host). A quiet H200 host read 0.7 to 1.0% a round; beside eight busy loops on its 16
# CPUs 49.3 to 50.1%, and its Events read about 4% slower, its median noise_pct twice as wide
# (results/aa/host_load_h200).
BUSY_HOST_PCT = 10.0


def round_host_shares(text: str | None) -> list[tuple[float, float]]:
    """(others_pct, steal_pct) of each round a gpu_bench.round_host value names ("label=others/steal/preemptions
    ..."), in its order: the share of the host's CPU time other processes used while the round ran, and the share
    the hypervisor took. A round whose shares are not known ("-") is left out; no value gives none."""
    rounds = []
    for part in str(text or "").split():
        shares = part.partition("=")[2].split("/")
        try:
            rounds.append((float(shares[0]), float(shares[1])))
        except (IndexError, ValueError):
            continue
    return rounds


def round_host(f: BenchmarkFile) -> list[tuple[float, float]]:
    """round_host_shares of a file's gpu_bench.round_host."""
    return round_host_shares(f.fact("gpu_bench.round_host"))


def others_share_pct(text: str | None) -> float | None:
    """The median round's share of the host's CPU time that other processes used, from a gpu_bench.round_host
    value; None where it names none."""
    rounds = round_host_shares(text)
    return statistics.median(o for o, _ in rounds) if rounds else None


def busy_host_pct(text: str | None) -> float | None:
    """others_share_pct where it is BUSY_HOST_PCT or more, else None."""
    others = others_share_pct(text)
    return others if others is not None and others >= BUSY_HOST_PCT else None
