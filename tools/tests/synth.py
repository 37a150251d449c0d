"""Synthetic gpu_bench JSON shaped like the real thing, with a simple physical model and seeded noise.

`slow` scales chosen cases so the tools have a real regression to find; the same seed and no `slow`
gives an identical run; another seed gives a run from the same machine on another night.
"""

from __future__ import annotations

import itertools
import json
import math
import random
import re
from pathlib import Path

GPUS = {
    "H100": dict(name="NVIDIA H100 80GB HBM3", uuid="GPU-6f1e2d3c-81aa-4000-8000-000000000100", pcie=(5, 16),
                 mem=85899345920, sm=132, cc="9.0", clock=1980, hbm_gbps=2600.0),
    "H200": dict(name="NVIDIA H200", uuid="GPU-a03b77e1-92cc-4000-8000-000000000200", pcie=(5, 16),
                 mem=150754820096, sm=132, cc="9.0", clock=1980, hbm_gbps=3900.0),
}
MEM_PEAK = {"pageable": 21.0, "pinned": 55.0, "write_combined": 52.0, "registered": 54.0, "mapped": 41.0,
            "managed_prefetch": 46.0, "managed_fault": 9.0}
DIR_FACTOR = {"h2d": 1.0, "d2h": 0.97, "bidir": 1.75}


def small_sizes():
    return [1 << k for k in range(10, 29, 3)]  # 1 KiB .. 256 MiB, 7 sizes


def full_sizes():
    return [1 << k for k in range(6, 31)]  # 64 B .. 1 GiB, 25 sizes


def context(gpu="H100", driver="580.159.04", cuda="13.0", gb_version="1.8.3", host="node-a", git="abc1234",
            date="2025-01-07T02:00:00+00:00", schema="1", unavailable=()):
    g = GPUS[gpu]
    ctx = {
        "date": date,
        "host_name": host,
        "executable": "./build/gpu_bench",
        "num_cpus": 16,
        "mhz_per_cpu": 3000,
        "cpu_scaling_enabled": False,
        "caches": [{"type": "Data", "level": 1, "size": 49152, "num_sharing": 2}],
        "load_avg": [0.5, 0.4, 0.3],
    }
    if gb_version.startswith("1.8"):
        ctx["library_version"] = "v" + gb_version
    ctx["library_build_type"] = "release"
    if gb_version.startswith("1.8"):
        ctx["json_schema_version"] = 1
    facts = {
        "gpu_bench.schema": schema, "gpu_bench.version": "0.1.0", "gpu_bench.git": git,
        "gpu.name": g["name"], "gpu.uuid": g["uuid"], "gpu.pci_bus_id": "0000:19:00.0", "gpu.cc": g["cc"],
        "gpu.sm_count": str(g["sm"]), "gpu.memory_bytes": str(g["mem"]), "gpu.l2_bytes": "52428800",
        "gpu.copy_engines": "3", "gpu.pcie_gen": str(g["pcie"][0]), "gpu.pcie_gen_max": str(g["pcie"][0]),
        "gpu.pcie_width": str(g["pcie"][1]), "gpu.pcie_width_max": str(g["pcie"][1]),
        "gpu.clock_sm_mhz": str(g["clock"]), "gpu.ecc": "on", "driver.version": driver,
        "driver.cuda_version": cuda, "runtime.version": cuda, "benchmark.version": gb_version,
        "host.cpu": "Intel(R) Xeon(R) Platinum 8480+", "host.kernel": "6.1.0-18-amd64", "host.thp": "madvise",
        "host.gpu_numa_node": "0",
    }
    for k in unavailable:
        facts[k] = "unavailable"
    if schema is None:
        facts = {}
    ctx.update(facts)
    return ctx


class _Writer:
    def __init__(self, reps, seed, noise, slow, aggregates, p_aggregates=False, samples=0, sample_times=False):
        """samples: timed samples per repetition as gpu_bench schema 2 writes them (0: a schema 1 repetition);
        with samples, each entry carries `samples` and `noise_pct` and, where samples > 0, `sample_times_s`."""
        self.reps, self.noise, self.slow, self.aggregates = reps, noise, slow or {}, aggregates
        self.samples, self.sample_times = samples, sample_times
        self.rng = random.Random(seed)
        self.entries = []
        self.family_index = -1
        self.instance = 0
        self.family = None
        self.p_aggregates = p_aggregates

    def factor(self, name):
        f = 1.0
        for pattern, v in self.slow.items():
            if re.search(pattern, name):
                f *= v
        return f

    def add(self, name, seconds, counters_fn, time_unit="us", error=None, p_aggregates=False):
        """seconds: true GPU seconds per iteration; counters_fn(seconds) -> counters of one repetition."""
        family = name.split("/")[0]
        if family != self.family:
            self.family, self.family_index, self.instance = family, self.family_index + 1, 0
        full = name + "/manual_time"
        scale = {"ns": 1e9, "us": 1e6, "ms": 1e3, "s": 1.0}[time_unit]
        base = dict(name=full, family_index=self.family_index, per_family_instance_index=self.instance,
                    run_name=full, run_type="iteration", repetitions=max(self.reps, 1), threads=1)
        self.instance += 1
        reps = []
        for r in range(max(self.reps, 1)):
            if error:
                e = dict(base, repetition_index=r, error_occurred=True, error_message=error, iterations=0,
                         real_time=0.0, cpu_time=0.0, time_unit=time_unit)
                self.entries.append(e)
                continue
            t = seconds / self.factor(name) * math.exp(self.rng.gauss(0.0, self.noise))
            iters = max(1, int(0.05 / t)) if t > 0 else 1
            times = None
            if self.samples:
                times = [t * math.exp(self.rng.gauss(0.0, self.noise)) for _ in range(self.samples)]
                t = _median(times)
                iters = 1
            e = dict(base, repetition_index=r, iterations=iters, real_time=t * scale,
                     cpu_time=t * scale * 1.2 + 2.0, time_unit=time_unit)
            e.update(counters_fn(t))
            if self.samples and self.sample_times:
                e["sample_times_s"] = times
            if self.samples:
                # The normal model's 95% half-width of a median (1.96 x 1.2533 sigma / sqrt(n)), as a stand-in.
                e.update(samples=self.samples, noise_pct=100 * 1.96 * 1.2533 * self.noise / math.sqrt(self.samples))
            reps.append(e)
            self.entries.append(e)
        if error or self.reps < 2 or not self.aggregates:
            return
        keys = [k for k in reps[0] if k not in base and k not in ("repetition_index", "iterations", "time_unit",
                                                                  "sample_times_s")]
        stats = [("mean", _mean), ("median", _median), ("stddev", _stdev), ("cv", _cv)]
        if p_aggregates or self.p_aggregates:
            stats += [("p50", lambda v: _pct(v, 50)), ("p99", lambda v: _pct(v, 99))]
        for agg, fn in stats:
            e = dict(base, name=full + "_" + agg, run_type="aggregate", aggregate_name=agg,
                     aggregate_unit="percentage" if agg == "cv" else "time", iterations=len(reps),
                     time_unit=time_unit)
            for k in keys:
                e[k] = fn([x[k] for x in reps])
            self.entries.append(e)


def _mean(v):
    return sum(v) / len(v)


def _median(v):
    s = sorted(v)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def _stdev(v):
    m = _mean(v)
    return math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1)) if len(v) > 1 else 0.0


def _cv(v):
    m = _mean(v)
    return _stdev(v) / m if m else 0.0


def _pct(v, p):
    s = sorted(v)
    k = (len(s) - 1) * p / 100.0
    lo = math.floor(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def make_run(gpu="H100", driver="580.159.04", cuda="13.0", reps=5, seed=1, noise=0.004, slow=None,
             families=("Transfer", "Overlap", "SyncPlacement", "SmallCopy", "HostBlocking"), sizes=None,
             full=False, gb_version="1.8.3", host="node-a", date="2025-01-07T02:00:00+00:00", schema="1",
             aggregates=True, errors=True, git="abc1234", unavailable=(), samples=None, sample_times=False,
             extra_context=None):
    """A whole gpu_bench JSON document as a dict.

    schema "2" adds the family descriptors, the device profile and each case's `samples` and `noise_pct`
    (`samples` timed samples per repetition, 11 unless given); sample_times adds every sample's time.
    """
    g = GPUS[gpu]
    sizes = sizes or (full_sizes() if full else small_sizes())
    if samples is None:
        samples = 11 if schema == "2" else 0
    w = _Writer(reps, seed, noise, slow, aggregates, samples=samples, sample_times=sample_times)
    if "Transfer" in families:
        dirs = ("h2d", "d2h", "bidir", "d2d")
        mems = tuple(MEM_PEAK) if full else ("pageable", "pinned", "managed_prefetch")
        for d in dirs:
            for mem in (("device",) if d == "d2d" else mems):
                for b in sizes:
                    peak = g["hbm_gbps"] / 2 if d == "d2d" else MEM_PEAK[mem] * DIR_FACTOR[d]
                    moved = b * (2 if d == "bidir" else 1)
                    t = 4e-6 + moved / (peak * 1e9)
                    name = f"Transfer/dir:{d}/mem:{mem}/bytes:{b}"
                    err = "cannot allocate 1073741824 bytes of registered memory: out of memory" if (
                        errors and mem == "registered" and b == sizes[-1]) else None
                    w.add(name, t, lambda t, moved=moved: {
                        "bytes_per_second": moved / t, "gbps": moved / t / 1e9, "host_blocked_us": 3.0 + 0.1 * t * 1e6
                    }, error=err)
    if "Overlap" in families:
        mems = ("pinned", "pageable") if full else ("pinned",)
        for schedule in ("serial", "depth_first", "breadth_first"):
            for mem in mems:
                for streams in ((1, 2, 4, 8, 16, 32) if full else (1, 2, 4, 8)):
                    for b in ((1 << 24, 1 << 26, 1 << 28) if full else (1 << 26,)):
                        for work in ((0, 10, 100) if full else (10,)):
                            for sync in (("end", "per_stream", "per_chunk", "event_join") if full else ("end", "per_stream")):
                                copy = 2 * b / (MEM_PEAK[mem] * 1e9)
                                kern = copy * work / 20.0
                                serial = copy + kern
                                ideal = max(copy, kern) + min(copy, kern) / streams
                                eff = {"serial": 0.98, "depth_first": 0.85, "breadth_first": 0.93}[schedule]
                                t = serial if (schedule == "serial" or streams == 1) else ideal / eff
                                t *= {"end": 1.0, "per_stream": 1.01, "per_chunk": 1.05, "event_join": 1.0}[sync]
                                name = (f"Overlap/schedule:{schedule}/mem:{mem}/streams:{streams}/bytes:{b}"
                                        f"/work:{work}/sync:{sync}")
                                w.add(name, t, lambda t, b=b, serial=serial, ideal=ideal: {
                                    "bytes_per_second": 2 * b / t, "gbps": 2 * b / t / 1e9, "speedup": serial / t,
                                    "ideal_ms": ideal * 1e3, "efficiency": ideal / t}, time_unit="ms")
    if "SyncPlacement" in families:
        for op in ("add", "copy"):
            for sync in ("both", "before", "after", "none", "events"):
                gpu_t = 40e-6 if op == "add" else 25e-6
                host_extra = {"both": 0.02, "before": 0.6, "after": 0.05, "none": 0.95, "events": 0.01}[sync]
                name = f"SyncPlacement/op:{op}/sync:{sync}"

                def sp(t, host_extra=host_extra, gpu_t=gpu_t):
                    host = t * (1 - host_extra) if host_extra > 0.5 else t * (1 + host_extra)
                    return {"host_measured_us": host * 1e6, "event_us": t * 1e6,
                            "error_pct": abs(host - t) / t * 100}
                w.add(name, gpu_t, sp)
    if "SmallCopy" in families:
        for d in ("h2d", "d2h"):
            for mem in ("pinned", "pageable"):
                for b in (4, 64, 1024, 4096, 65536):
                    lat = (1.8e-6 if mem == "pinned" else 4.5e-6) + b / 25e9
                    w.add(f"SmallCopy/dir:{d}/mem:{mem}/bytes:{b}", lat,
                          lambda t: {"host_blocked_us": t * 1e6 * 0.9}, p_aggregates=True)
    if "HostBlocking" in families:
        for mem in ("pinned", "pageable"):
            for b in (1 << 20, 1 << 24):
                for mode in ("sync_copy", "async_copy", "async_then_cpu_work"):
                    t = 3e-6 + b / (MEM_PEAK[mem] * 1e9)
                    blocked = t * 1e6 if (mode == "sync_copy" or mem == "pageable") else 4.0
                    w.add(f"HostBlocking/mem:{mem}/bytes:{b}/mode:{mode}", t,
                          lambda t, blocked=blocked: {"host_blocked_us": blocked})
    if "Probe" in families:
        for mode in ("quiet", "loud"):
            for depth in (1, 2, 4, 8):
                t = 2e-6 * depth * (1.5 if mode == "loud" else 1.0)
                w.add(f"Probe/mode:{mode}/depth:{depth}", t, lambda t: {"probe_score": 1e-3 / t})
    ctx = context(gpu, driver, cuda, gb_version, host, git, date, schema, unavailable)
    if schema == "2":
        ctx.update(schema2_context(g, families))
    ctx.update(extra_context or {})
    return {"context": ctx, "benchmarks": w.entries}


# What gpu_bench schema 2 writes about each family (docs/json.md, "Family descriptors"). Probe is a family
# the tools have no code for: it is drawn, compared and reported from its descriptor alone.
DESCRIPTORS = {
    "Transfer": dict(summary="host and device copies by direction, memory kind and size", axes="dir,mem,numa,bytes",
                     headline="gbps", unit="GB/s", better="higher", headline_kind="rate",
                     host_link="dir:h2d|dir:d2h|dir:bidir", plot="x=bytes;series=mem;panel=dir"),
    "Overlap": dict(summary="copies and kernels over several streams", axes="schedule,mem,streams,bytes,work,sync",
                    headline="speedup", unit="x", better="higher", headline_kind="other", host_link="yes",
                    plot="x=streams;series=schedule;panel=sync"),
    "SyncPlacement": dict(summary="where the host synchronises, and what its clock then says", axes="op,sync",
                          headline="error_pct", unit="%", better="lower", headline_kind="other", host_link="no",
                          plot="", host_side="sync:both|sync:before|sync:after|sync:none"),
    "SmallCopy": dict(summary="latency of small copies", axes="dir,mem,bytes", headline="real_time", unit="us",
                      better="lower", headline_kind="time", host_link="dir:h2d|dir:d2h",
                      plot="x=bytes;series=mem;panel=dir"),
    "HostBlocking": dict(summary="how long a copy holds the host thread", axes="mem,bytes,mode",
                         headline="host_blocked_us", unit="us", better="lower", headline_kind="other",
                         host_link="yes", plot="x=bytes;series=mode;panel=mem",
                         host_side="yes"),
    "Probe": dict(summary="a family the tools were never taught", axes="mode,depth", headline="probe_score",
                  unit="pt", better="higher", headline_kind="rate", host_link="no", plot="x=depth;panel=mode"),
}


def schema2_context(g, families, preset="default", gate="on", noise_target="1"):
    ctx = {"gpu_bench.preset": preset, "gpu_bench.gate": gate, "gpu_bench.device": "0",
           "gpu_bench.noise_target_pct": noise_target, "gpu_bench.max_time_per_case_s": "2",
           "gpu_bench.min_samples": "5", "gpu_bench.elapsed_s": "312.5", "gpu_bench.timed_s": "201.7",
           "profile.host_link": f"PCIe gen{g['pcie'][0]} x{g['pcie'][1]}", "profile.host_link_gbps": "63.015",
           "profile.memory_gbps": str(g["hbm_gbps"]), "profile.l2_bytes": "52428800", "profile.nvlink_gbps": "none"}
    for fam in DESCRIPTORS:  # every family compiled in, whether or not the run selected its cases
        slug = fam.lower()
        ctx[f"family.{slug}.name"] = fam
        ctx[f"family.{slug}.scope"] = "single_gpu"
        for k, v in DESCRIPTORS[fam].items():
            ctx[f"family.{slug}.{k}"] = v
    return ctx


def make_timeline(cases=2, streams=4, chunks=4):
    events = []
    for pid in range(cases):
        name = f"Overlap/schedule:breadth_first/mem:pinned/streams:{streams}/bytes:67108864/work:10/sync:end"
        events.append({"ph": "M", "name": "process_name", "pid": pid, "args": {"name": name}})
        for s in range(streams):
            t = 5.0 + s * 2.0
            for c in range(chunks):
                for kind, cat, dur in (("h2d", "copy", 120.0), ("kernel", "kernel", 80.0), ("d2h", "copy", 115.0)):
                    events.append({"name": f"{kind} chunk {c}", "cat": cat, "ph": "X", "ts": t, "dur": dur,
                                   "pid": pid, "tid": s, "args": {"bytes": 4194304}})
                    t += dur + 1.0 + (120.0 * (streams - 1) if kind == "h2d" else 0.0) / streams
    return {"traceEvents": events, "displayTimeUnit": "ns", "otherData": {"source": "gpu_bench --timeline"}}


def write(path, doc):
    path = Path(path)
    path.write_text(json.dumps(doc, indent=2))
    return str(path)


def doc_from_values(cases, gpu="H100", driver="580.159.04", counter="gbps", time_unit="us", **ctx):
    """A document whose repetitions carry exactly the given values of `counter` (and time = 1/value)."""
    entries = []
    for fi, (name, values) in enumerate(cases.items()):
        full = name + "/manual_time"
        for r, v in enumerate(values):
            entries.append(dict(name=full, family_index=fi, per_family_instance_index=0, run_name=full,
                                run_type="iteration", repetitions=len(values), repetition_index=r, threads=1,
                                iterations=100, real_time=1000.0 / v, cpu_time=1000.0 / v, time_unit=time_unit,
                                **{counter: float(v)}))
    return {"context": context(gpu, driver, **ctx), "benchmarks": entries}


# ---------------------------------------------------------------------------------------------
# multi-GPU runs: --device=all Transfer cases, Peer, PeerLatency and AllHost, topology in the context

# The model's one-way peer rates (GB/s) and 4-byte copy latencies (s) per link kind. Peer access off
# stages the copy through host memory, so its rate and latency do not depend on the link.
LINK_GBPS = {"nvlink": 370.0, "pcie_switch": 52.0, "pcie_host_bridge": 40.0, "system": 22.0}
LINK_LATENCY = {"nvlink": 2.2e-6, "pcie_switch": 4.0e-6, "pcie_host_bridge": 4.8e-6, "system": 6.0e-6}
LINK_RANK = {"nvlink": 0, "pcie_switch": 1, "pcie_host_bridge": 2, "system": 3}
STAGED_GBPS, STAGED_LATENCY = 19.0, 9.0e-6
HOST_LIMIT_GBPS = 150.0  # what the host side of every GPU copying at once can take, per direction
BUS_IDS = ("0000:19:00.0", "0000:3b:00.0", "0000:4c:00.0", "0000:5d:00.0", "0000:9b:00.0", "0000:bb:00.0",
           "0000:cb:00.0", "0000:db:00.0")


PCIE_LANE_GBPS = {3: 0.98462, 4: 1.96923, 5: 3.93846}  # one direction of one lane (128b/130b), as the profile


def add_per_gpu_facts(ctx, gpus, pcie=None):
    """Each GPU's own facts (gpu.N.*) as gpu_bench writes them: GPU 0's link, clocks and peaks for every GPU,
    but where `pcie` {N: (gen, width)} gives GPU N's slot its own."""
    base = (int(ctx["gpu.pcie_gen_max"]), int(ctx["gpu.pcie_width_max"]))
    for i in range(gpus):
        gen, width = (pcie or {}).get(i, base)
        for k in ("cc", "sm_count", "memory_bytes", "l2_bytes", "copy_engines", "clock_sm_mhz", "ecc"):
            ctx[f"gpu.{i}.{k}"] = ctx[f"gpu.{k}"]
        ctx.update({f"gpu.{i}.pcie_gen": str(gen), f"gpu.{i}.pcie_gen_max": str(gen),
                    f"gpu.{i}.pcie_width": str(width), f"gpu.{i}.pcie_width_max": str(width),
                    f"gpu.{i}.other_processes": "0", f"gpu.{i}.local_cpus": "0-7" if i < gpus / 2 else "8-15",
                    f"gpu.{i}.profile.host_link": f"PCIe gen{gen} x{width}",
                    f"gpu.{i}.profile.host_link_gbps": f"{PCIE_LANE_GBPS[gen] * width:.6g}",
                    f"gpu.{i}.profile.memory_gbps": ctx.get("profile.memory_gbps", "unavailable"),
                    f"gpu.{i}.profile.l2_bytes": ctx["gpu.l2_bytes"], f"gpu.{i}.profile.nvlink_gbps": "none"})
        ctx.setdefault(f"gpu.{i}.numa_node", "0")
    return ctx


def multi_links(gpus, link="nvlink", links=None):
    """Link kind per ordered pair: `link` everywhere, with `links` {(i, j): kind} set both ways."""
    out = {(i, j): link for i in range(gpus) for j in range(gpus) if i != j}
    for (i, j), kind in (links or {}).items():
        out[(i, j)] = out[(j, i)] = kind
    return out


def multi_context(gpu="H100", gpus=4, links=None, **kw):
    ctx = context(gpu, **kw)
    g = GPUS[gpu]
    ctx["gpu.count"] = str(gpus)
    for i in range(gpus):
        ctx[f"gpu.{i}.name"] = g["name"]
        ctx[f"gpu.{i}.uuid"] = g["uuid"][:-3] + f"{int(g['uuid'][-3:]) + i:03d}"
        ctx[f"gpu.{i}.pci_bus_id"] = BUS_IDS[i % len(BUS_IDS)]
        ctx[f"gpu.{i}.numa_node"] = str(i * 2 // gpus)
    for (i, j), kind in sorted((links or multi_links(gpus)).items()):
        p2p = kind != "system"
        ctx[f"topology.{i}-{j}.peer_access"] = "yes" if p2p else "no"
        ctx[f"topology.{i}-{j}.perf_rank"] = str(LINK_RANK[kind])
        ctx[f"topology.{i}-{j}.native_atomics"] = "yes" if kind == "nvlink" else "no"
        ctx[f"topology.{i}-{j}.link"] = kind
    return ctx


def make_multi_run(gpu="H100", gpus=4, link="nvlink", links=None, reps=5, seed=1, noise=0.004, slow=None,
                   families=("Transfer", "Peer", "PeerLatency", "AllHost"), sizes=None, peer_sizes=None,
                   driver="580.159.04", cuda="13.0", host="node-m", date="2025-01-07T02:00:00+00:00",
                   aggregates=True, variants=False):
    """A gpu_bench --device=all run on a machine with `gpus` GPUs joined by `link` (`links` overrides pairs).

    A pair without peer access (link 'system') has its peer_access:on cases fail with an error message.
    With `variants`, Peer's engine:sm and access:read copies (one way, peer access on; SMs at 0.94 of the copy
    engines' rate, reads at 0.97 of the writes') and AllHost/dir:bidir (both ways on every GPU at once, with
    gbps_h2d and gbps_d2h) too.
    """
    kinds = multi_links(gpus, link, links)
    w = _Writer(reps, seed, noise, slow, aggregates)
    if "Transfer" in families:
        for d in ("h2d", "d2h"):
            for mem in ("pinned", "pageable"):
                for b in sizes or (1 << 12, 1 << 18, 1 << 24, 1 << 28):
                    for dev in range(gpus):
                        t = 4e-6 + b / (MEM_PEAK[mem] * DIR_FACTOR[d] * 1e9)
                        w.add(f"Transfer/dir:{d}/mem:{mem}/bytes:{b}/device:{dev}", t, lambda t, b=b: {
                            "bytes_per_second": b / t, "gbps": b / t / 1e9, "host_blocked_us": 3.0 + 0.1 * t * 1e6})
    if "Peer" in families:
        for src, dst in itertools.permutations(range(gpus), 2):
            kind = kinds[(src, dst)]
            for access in ("on", "off"):
                for d in ("oneway", "bidir"):
                    for b in peer_sizes or (1 << 16, 1 << 22, 1 << 28):
                        rate = LINK_GBPS[kind] if access == "on" else STAGED_GBPS
                        moved = b * (2 if d == "bidir" else 1)
                        t = 6e-6 + moved / (rate * (1.8 if d == "bidir" else 1.0) * 1e9)
                        err = (f"peer access between GPU {src} and GPU {dst} is not supported"
                               if access == "on" and kind == "system" else None)
                        w.add(f"Peer/src:{src}/dst:{dst}/peer_access:{access}/dir:{d}/bytes:{b}", t,
                              lambda t, moved=moved: {"gbps": moved / t / 1e9, "host_blocked_us": 4.0},
                              error=err)
                        for name, factor in (("/engine:sm", 0.94), ("/access:read", 0.97),
                                             ("/access:read/engine:sm", 0.97 * 0.94)):
                            if variants and access == "on" and (d == "oneway" or "read" not in name):
                                w.add(f"Peer/src:{src}/dst:{dst}/peer_access:on/dir:{d}{name}/bytes:{b}",
                                      6e-6 + moved / (rate * factor * (1.8 if d == "bidir" else 1.0) * 1e9),
                                      lambda t, moved=moved: {"gbps": moved / t / 1e9, "host_blocked_us": 4.0},
                                      error=err)
    if "PeerLatency" in families:
        for src, dst in itertools.permutations(range(gpus), 2):
            kind = kinds[(src, dst)]
            for access in ("on", "off"):
                t = LINK_LATENCY[kind] if access == "on" else STAGED_LATENCY
                err = "peer access is not supported" if access == "on" and kind == "system" else None
                w.add(f"PeerLatency/src:{src}/dst:{dst}/peer_access:{access}/bytes:4", t,
                      lambda t: {"latency_us": t * 1e6}, error=err)
    if "AllHost" in families:
        share = random.Random(seed + 1000)
        for d in ("h2d", "d2h"):
            for b in sizes or (1 << 24, 1 << 28):
                one = MEM_PEAK["pinned"] * DIR_FACTOR[d]
                agg = min(gpus * one, HOST_LIMIT_GBPS)
                t = gpus * b / (agg * 1e9)

                def all_host(t, b=b):
                    total = gpus * b / t / 1e9
                    each = [total / gpus * math.exp(share.gauss(0.0, 0.02)) for _ in range(gpus)]
                    return {"gbps": total, "gpus": float(gpus), **{f"gbps_gpu{k}": v for k, v in enumerate(each)}}
                w.add(f"AllHost/dir:{d}/bytes:{b}", t, all_host)
        for b in (sizes or (1 << 24, 1 << 28)) if variants else ():
            h2d, d2h = (min(gpus * MEM_PEAK["pinned"] * DIR_FACTOR[d] * 0.9, HOST_LIMIT_GBPS) for d in ("h2d", "d2h"))
            t = gpus * b / (min(h2d, d2h) * 1e9)

            def all_host_bidir(t, b=b, h2d=h2d, d2h=d2h, t0=t):
                total = 2 * gpus * b / t / 1e9
                each = [total / gpus * math.exp(share.gauss(0.0, 0.02)) for _ in range(gpus)]
                return {"gbps": total, "gpus": float(gpus), "gbps_h2d": h2d * t0 / t, "gbps_d2h": d2h * t0 / t,
                        **{f"gbps_gpu{k}": v for k, v in enumerate(each)}}
            w.add(f"AllHost/dir:bidir/bytes:{b}", t, all_host_bidir)
    ctx = multi_context(gpu, gpus, kinds, driver=driver, cuda=cuda, host=host, date=date)
    return {"context": ctx, "benchmarks": w.entries}
