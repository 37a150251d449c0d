#!/usr/bin/env python3
"""GPU test (two GPUs or more): Peer, PeerLatency and AllHost between GPUs 0 and 1 under --device=all,
with a single-GPU Transfer case, against a bare cudaMemcpyPeerAsync loop run in the same test:
  - every case ran and verified its data;
  - Peer with peer access on, 256 MiB, oneway and bidir, reach at least 99% of the bare loop's rate;
  - with peer access off the rate is far lower: under half of on where the pair shares an NVLink, lower
    where the copy could only ever cross PCIe;
  - single-GPU case names end in /device:N, once for every visible GPU; the multi-GPU ones carry no device;
  - the context has gpu.count, every GPU's identity and every ordered pair's topology;
  - AllHost reports every GPU's own rate, and its aggregate is no more than their sum, both taken from the
    samples of one round (all_host_ratio);
  - the context has every GPU's NVLinks and every pair's (nvlinks, nvlink_gbps), and no peer copy with peer
    access exceeds its pair's NVLink peak (per direction) where the pair has one;
  - where nvidia-smi is on the machine, each GPU's links up and their rate are those `nvidia-smi nvlink -s`
    prints, and each pair's link count the NV# of `nvidia-smi topo -m` (GPUs matched by UUID);
  - a single-GPU case spends under EDGE_S of its wall outside its samples, the median of its repetitions: it
    reads no NVLink counters, which took about 35 ms a reading on an H200 with 18 NVLinks. The first
    repetition on a GPU also makes its buffers (144 ms on the second of two H200s).
Skips (77) with fewer than two GPUs, or where GPUs 0 and 1 cannot access each other's memory. Writes the figures to OUT.json.

usage: peer_check.py GPU_BENCH BARE_PEER OUT.json
       peer_check.py --facts RUN.json TOPO.txt NVLINK_S.txt   the NVLink facts alone, from files saved on the node
"""
import json
import re
import shutil
import subprocess
import sys

from gpu_common import SKIP, Checker, iteration_runs, median_interval, run_gpu_bench, tools_module

BIG = 256 << 20
EDGE_S = 0.015
FILTER = ("^(Transfer/dir:h2d/mem:pinned/bytes:1048576/|Peer/src:0/dst:1/|PeerLatency/src:0/dst:1/"
          "|AllHost/dir:h2d/)")


def bare(exe):
    r = subprocess.run([exe, "0", "1", str(BIG), "20"], capture_output=True, text=True, timeout=300)
    if r.returncode == SKIP:
        print("fewer than two CUDA GPUs are visible: skipping")
        sys.exit(SKIP)
    if r.returncode == 3:
        print(f"{r.stderr.strip()}: nothing to compare peer access with; skipping")
        sys.exit(SKIP)
    if r.returncode != 0:
        raise SystemExit(f"bare_peer failed ({r.returncode}): {r.stderr}")
    return json.loads(r.stdout)


def all_host_ratio(run):
    """An AllHost run's aggregate over the sum of its GPUs' own rates, both of the samples of the round whose
    process wrote the file: gbps_gpu{i} are that round's medians of each GPU's own span, and the aggregate
    over that round's median sample (round_times_s' last, where there were several rounds; gbps itself rests
    on every round's). A sample's time is its longest GPU's span, so per sample, and so for the medians too,
    the aggregate is at most the sum: a ratio above 1 is the harness's error. None where a figure is missing."""
    gpus = int(run.get("gpus") or 0)
    per_gpu = [run.get(f"gbps_gpu{i}") for i in range(gpus)]
    if gpus < 1 or None in per_gpu or not sum(per_gpu):
        return None
    rounds = run.get("round_times_s")
    if rounds:
        moved = int(run["name"].split("/bytes:")[1].split("/")[0]) * gpus
        aggregate = moved / rounds[-1] / 1e9
    else:
        aggregate = run.get("gbps")
    return None if aggregate is None else aggregate / sum(per_gpu)


def judge_all_host(c, name, runs):
    """AllHost's aggregate against the sum of its GPUs' rates over the repetitions: their median ratio with its
    95% interval, at most 1 (all_host_ratio)."""
    ratios = [r for r in (all_host_ratio(b) for b in runs if not b.get("error_occurred")) if r is not None]
    c.check(len(ratios) == len([b for b in runs if not b.get("error_occurred")]),
            f"{name}: per-GPU rates or gpus missing")
    if ratios:
        m, interval = median_interval(ratios)
        c.judge(f"{name}: aggregate / sum of the GPUs' own rates, one round's samples", m, interval, high=1.0 + 1e-9)


def main(gpu_bench, bare_exe, out):
    ref = bare(bare_exe)
    rc, doc = run_gpu_bench(gpu_bench, out + ".gpu_bench.json", "--device=all", f"--benchmark_filter={FILTER}",
                            "--sizes=1M,256M", "--benchmark_repetitions=3")
    c = Checker()
    c.check(rc == 0, f"gpu_bench exited {rc}")
    ctx = doc["context"]
    count = int(ctx.get("gpu.count", "0"))
    c.check(count >= 2, f"gpu.count is {ctx.get('gpu.count')}")
    c.check(ctx.get("gpu_bench.device") == "all", "gpu_bench.device is not 'all'")
    for i in range(count):
        for field in ("name", "uuid", "pci_bus_id", "numa_node"):
            c.check(ctx.get(f"gpu.{i}.{field}"), f"context lacks gpu.{i}.{field}")
        for j in range(count):
            if i != j:
                for field in ("peer_access", "perf_rank", "native_atomics", "link"):
                    c.check(ctx.get(f"topology.{i}-{j}.{field}"), f"context lacks topology.{i}-{j}.{field}")

    runs = {}
    for b in iteration_runs(doc):
        runs.setdefault(b["name"].replace("/manual_time", ""), []).append(b)
    for name, bs in runs.items():
        for b in bs:
            c.check(not b.get("error_occurred"), f"{name} failed: {b.get('error_message')}")
    transfer = sorted(n for n in runs if n.startswith("Transfer/"))
    c.check(transfer == sorted(f"Transfer/dir:h2d/mem:pinned/bytes:1048576/device:{d}" for d in range(count)),
            f"single-GPU names under --device=all: {transfer}")
    c.check(all("/device:" not in n for n in runs if not n.startswith("Transfer/")),
            "a multi-GPU case carries a device key")

    def median(name, counter):
        vals = sorted(b[counter] for b in runs.get(name, []) if not b.get("error_occurred") and counter in b)
        c.check(bool(vals), f"{name}: no {counter}")
        return vals[len(vals) // 2] if vals else None

    report = {"bare": ref, "context": {k: v for k, v in ctx.items() if k.startswith(("gpu", "topology"))}, "cases": {}}
    nvlink = ctx.get("topology.0-1.link") == "nvlink"
    for d in ("oneway", "bidir"):
        on = median(f"Peer/src:0/dst:1/peer_access:on/dir:{d}/bytes:{BIG}", "gbps")
        off = median(f"Peer/src:0/dst:1/peer_access:off/dir:{d}/bytes:{BIG}", "gbps")
        # gpu_bench times one copy (each way) between its events, so the reference is the bare loop's
        # per-copy figure. Its batched figure (20 copies between two events) hides each copy's start and
        # finish: on two H200s it was 1.5% above the per-copy one for bidir, 0.6% for oneway.
        bare_rate = ref[f"{d}_per_copy_gbps"]
        report["cases"][d] = {"on_gbps": on, "off_gbps": off, "bare_per_copy_gbps": bare_rate,
                              "bare_batched_gbps": ref[f"{d}_batched_gbps"]}
        print(json.dumps({d: report["cases"][d]}))
        if on is not None:
            c.check(on >= 0.99 * bare_rate, f"{d}: peer_access:on {on:.2f} GB/s is under 99% of the bare loop's "
                                       f"per-copy {bare_rate:.2f}")
        if on is not None and off is not None:
            limit = 0.5 * on if nvlink else on
            c.check(off < limit, f"{d}: peer_access:off {off:.2f} GB/s is not far below on ({on:.2f} GB/s, "
                                 f"link {ctx.get('topology.0-1.link')})")
    for access in ("on", "off"):
        lat = median(f"PeerLatency/src:0/dst:1/peer_access:{access}/bytes:4", "latency_us")
        if lat is not None:
            c.check(0 < lat < 1000, f"PeerLatency peer_access:{access}: {lat:.2f} us")
    for name, bs in runs.items():
        if not name.startswith("AllHost/"):
            continue
        c.check(all(b.get("gpus") == count for b in bs if not b.get("error_occurred")), f"{name}: gpus is not {count}")
        judge_all_host(c, name, bs)
        report["cases"][name] = {k: v for k, v in bs[0].items() if k.startswith("gbps")}
    check_nvlink_facts(c, ctx, count)
    check_against_nvidia_smi(c, ctx, count)
    for name in transfer:
        outside = sorted(b.get("wall_s", 0) - b.get("sampling_wall_s", 0) - b.get("calibration_wall_s", 0)
                         for b in runs[name])
        typical = outside[len(outside) // 2]
        c.check(typical < EDGE_S, f"{name}: {typical * 1e3:.1f} ms of its wall outside its samples (the median "
                                  f"of {len(outside)}), {EDGE_S * 1e3:.0f} ms at most")
        print(f"{name}: {', '.join(f'{x * 1e3:.2f}' for x in outside)} ms of its wall outside its samples")
    for name, bs in runs.items():
        if name.startswith("Peer/") and "/peer_access:on/" in name:
            peak = nvlink_peak(ctx, name)
            for b in bs:
                for counter in ("gbps_src_to_dst", "gbps_dst_to_src") if "/dir:bidir/" in name else ("gbps",):
                    if peak and counter in b:
                        c.check(b[counter] <= 1.02 * peak, f"{name}: {counter} {b[counter]:.1f} GB/s exceeds the pair's "
                                                           f"NVLink peak of {peak:.1f} GB/s per direction")
    with open(out, "w") as f:
        json.dump(report, f, indent=1)
    return c.finish("Peer, PeerLatency and AllHost verified; peer copies match the bare loop; names and context "
                    "cover every GPU")


def nvlink_peak(ctx, name):
    """The NVLink peak per direction of a Peer case's pair from the context, GB/s; None without one."""
    src, dst = (name.split(f"/{k}:")[1].split("/")[0] for k in ("src", "dst"))
    try:
        return float(ctx.get(f"topology.{src}-{dst}.nvlink_gbps", ""))
    except ValueError:
        return None


def check_nvlink_facts(c, ctx, count):
    """Every GPU's NVLinks and every pair's, written as docs/json.md says: a number, none/0, or unavailable."""
    for i in range(count):
        for field in ("nvlinks", "nvlink_link_gbps", "profile.nvlink_gbps"):
            c.check(ctx.get(f"gpu.{i}.{field}"), f"context lacks gpu.{i}.{field}")
        for j in range(count):
            if i == j:
                continue
            links, gbps, link = (ctx.get(f"topology.{i}-{j}.{k}") for k in ("nvlinks", "nvlink_gbps", "link"))
            c.check(links is not None and gbps is not None, f"context lacks topology.{i}-{j}.nvlinks or nvlink_gbps")
            if links not in (None, "unavailable", "0"):
                c.check(link == "nvlink", f"topology.{i}-{j}: {links} NVLinks, yet link {link}")
            print(f"GPU {i} -> {j}: link {link}, {links} NVLinks, {gbps} GB/s per direction; GPU {i}: "
                  f"{ctx.get(f'gpu.{i}.nvlinks')} links up of {ctx.get(f'gpu.{i}.nvlink_link_gbps')} GB/s")


def parse_topo(text):
    """`nvidia-smi topo -m`: {(row GPU, column GPU): NVLinks}, 0 for a path without NVLink (SYS, PIX, ...)."""
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in text.splitlines()]
    head = next((line.split("\t") for line in lines if re.search(r"\tGPU\d+\t", "\t" + line)), None)
    if head is None:
        return {}
    columns = [(k, int(h[3:])) for k, h in enumerate(head) if re.fullmatch(r"GPU\d+", h.strip())]
    out = {}
    for line in lines:
        cells = line.split("\t")
        if not re.fullmatch(r"GPU\d+", cells[0].strip()):
            continue
        row = int(cells[0].strip()[3:])
        for k, col in columns:
            if col != row and k < len(cells):
                m = re.fullmatch(r"NV(\d+)", cells[k].strip())
                out[(row, col)] = int(m.group(1)) if m else 0
    return out


def parse_nvlink_status(text):
    """`nvidia-smi nvlink -s` of one GPU: {link: GB/s} of its links up (an inactive link prints no rate)."""
    return {int(m.group(1)): float(m.group(2)) for m in re.finditer(r"Link (\d+): ([\d.]+) GB/s", text)}


def nvlink_status_by_gpu(text):
    """`nvidia-smi nvlink -s` of every GPU: {nvidia-smi's index: (UUID, {link: GB/s})}, each GPU's section
    starting at its line `GPU k: NAME (UUID: ...)`."""
    heads = list(re.finditer(r"^GPU (\d+): .*\(UUID: ([^)]+)\)", text, re.MULTILINE))
    return {int(h.group(1)): (h.group(2).strip(), parse_nvlink_status(text[h.end():nxt.start() if nxt else len(text)]))
            for h, nxt in zip(heads, heads[1:] + [None])}


def compare_with_nvidia_smi(c, ctx, count, topo_text, status_text):
    """Each GPU's and pair's NVLink facts in gpu_bench's context against nvidia-smi's `topo -m` and `nvlink -s`
    of the same machine, GPUs matched by UUID (nvidia-smi numbers them its own way)."""
    cuda = {ctx.get(f"gpu.{i}.uuid"): i for i in range(count)}
    status = nvlink_status_by_gpu(status_text)
    smi_to_cuda = {k: cuda[uuid] for k, (uuid, _) in status.items() if uuid in cuda}
    c.check(len(smi_to_cuda) == count, f"nvidia-smi nvlink -s names {len(smi_to_cuda)} of gpu_bench's {count} GPUs")
    topo = parse_topo(topo_text)
    for k, i in sorted(smi_to_cuda.items()):
        links = status[k][1]
        c.check(ctx.get(f"gpu.{i}.nvlinks") == str(len(links)),
                f"GPU {i}: gpu_bench reads {ctx.get(f'gpu.{i}.nvlinks')} NVLinks up, nvidia-smi {len(links)}")
        if links:
            rate = ctx.get(f"gpu.{i}.nvlink_link_gbps", "")
            ok = re.fullmatch(r"[\d.]+", rate) and all(abs(float(rate) - v) < 0.0015 for v in links.values())
            c.check(bool(ok), f"GPU {i}: gpu_bench's link rate {rate} GB/s, nvidia-smi's {sorted(set(links.values()))}")
            if ok:
                print(f"ok: GPU {i}: {len(links)} NVLinks up at {rate} GB/s each, as nvidia-smi nvlink -s says")
        for m, j in sorted(smi_to_cuda.items()):
            if (k, m) in topo:
                want = topo[(k, m)]
                have = ctx.get(f"topology.{i}-{j}.nvlinks")
                c.check(have == str(want), f"GPUs {i} -> {j}: gpu_bench reads {have} NVLinks, nvidia-smi topo -m NV{want}")
                if have == str(want):
                    print(f"ok: GPUs {i} -> {j}: {have} NVLinks, as nvidia-smi topo -m says")


def check_against_nvidia_smi(c, ctx, count):
    """compare_with_nvidia_smi with what nvidia-smi prints now, where it is on the machine."""
    if not shutil.which("nvidia-smi"):
        print("nvidia-smi is not on this machine: NVLink facts not compared with it")
        return
    def smi(*args):
        return subprocess.run(["nvidia-smi", *args], capture_output=True, text=True, timeout=60).stdout
    topo, status = smi("topo", "-m"), smi("nvlink", "-s")
    print(f"nvidia-smi topo -m:\n{topo}\nnvidia-smi nvlink -s:\n{status}")
    compare_with_nvidia_smi(c, ctx, count, topo, status)


def facts_only(run_json, topo_file, status_file):
    """The NVLink facts of a gpu_bench JSON (any run with every GPU's context: --device=all, or a node's
    default) against `nvidia-smi topo -m` and `nvidia-smi nvlink -s` saved on the same machine."""
    ctx = tools_module("gpu_bench_tools.reading.files").read_json(run_json)["context"]  # gzip-compressed or not
    with open(topo_file) as f:
        topo = f.read()
    with open(status_file) as f:
        status = f.read()
    c = Checker()
    count = int(ctx.get("gpu.count", "0"))
    c.check(count >= 2, f"gpu.count is {ctx.get('gpu.count')}: the facts check needs two GPUs or more")
    check_nvlink_facts(c, ctx, count)
    compare_with_nvidia_smi(c, ctx, count, topo, status)
    return c.finish(f"the NVLink facts of {count} GPUs agree with nvidia-smi topo -m and nvlink -s")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--facts"]:
        if len(sys.argv) != 5:
            sys.exit("usage: peer_check.py --facts RUN.json TOPO.txt NVLINK_S.txt")
        sys.exit(facts_only(*sys.argv[2:5]))
    sys.exit(main(*sys.argv[1:4]))
