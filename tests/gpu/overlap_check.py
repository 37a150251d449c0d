#!/usr/bin/env python3
"""GPU test: a few Overlap and HostBlocking cases run, verify their data and show the effects they exist
to show; the --timeline file of the same run holds every copy and kernel, and pipelined ones overlap.

usage: overlap_check.py GPU_BENCH OUT.json TIMELINE.json
"""
import json
import sys

from gpu_common import checked_twice, run_gpu_bench

FILTER = ("^(Overlap/.*/bytes:16777216/"
          "|Overlap/schedule:(serial|depth_first)/mem:pinned/streams:(1|8)/bytes:536870912/work:1/sync:(end|per_chunk)/"
          "|HostBlocking/mem:(pinned|pageable)/bytes:16777216/)")


def axes(name):
    parts = name.replace("/manual_time", "").split("/")
    return parts[0], dict(p.split(":", 1) for p in parts[1:])


def evaluate(c, exe, out, trace_path):
    # One round: every figure checked against another (wall against GPU time, host held against GPU time)
    # then comes from the same samples, not from rounds that a shared link may have treated differently.
    rc, doc = run_gpu_bench(exe, out, f"--benchmark_filter={FILTER}", f"--timeline={trace_path}", "--rounds=1")
    c.set_machine(doc)
    c.check(rc == 0, f"gpu_bench exited {rc}")
    runs, ok = c.runs_by_name(doc)
    c.check(len(runs) == 13, f"expected 13 cases, got {len(runs)}")
    for name, b in ok.items():
        fam, ax = axes(name)
        if fam != "Overlap":
            continue
        # The efficiency and its interval (the lowest and highest of the turns it pairs with its stages).
        eff = (b["efficiency"], (b["efficiency_lo"], b["efficiency_hi"]))
        c.judge(f"{name}: efficiency (above 1.02: the bound is wrong)", *eff, high=1.02)
        c.check(b["max_error"] <= 1e-4 + 1e-6 * int(ax["work"]), f"{name}: max_error {b['max_error']}")
        c.check(b.get("wall_ms", 0) * 1e3 >= 0.9 * b["real_time"], f"{name}: wall_ms {b.get('wall_ms')} below GPU time")
        c.check(b.get("samples", 0) >= 5, f"{name}: {b.get('samples')} samples")
        if ax["schedule"] == "serial":
            c.check(b["speedup"] == 1, f"{name}: serial speedup {b['speedup']:.3f} is not 1")
            # A serial schedule is the sum of its stages: below its own bound means the bound is wrong.
            if ax["mem"] == "pinned":
                c.judge(f"{name}: serial efficiency", *eff, low=0.97)
    base = "Overlap/schedule:depth_first/mem:pinned/streams:8/bytes:536870912/work:1/sync:"
    if base + "end" in ok and base + "per_chunk" in ok:
        end, per_chunk = ok[base + "end"]["speedup"], ok[base + "per_chunk"]["speedup"]
        c.check_effect(end >= 1.3, f"depth_first x8 pinned speedup {end:.2f} shows no overlap")
        c.check_effect(per_chunk < 0.8 * end, f"per_chunk speedup {per_chunk:.2f} does not show the loss against {end:.2f}")
    for name, b in ok.items():
        fam, ax = axes(name)
        if fam != "HostBlocking":
            continue
        gpu_us = b["real_time"] * {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}[b["time_unit"]]
        if ax["mem"] == "pinned" and ax["mode"] == "async_copy":
            c.check(b["host_blocked_us"] < 50, f"{name}: pinned async copy held the host {b['host_blocked_us']:.1f} us")
        # Gated exactly where the call cannot wait for the GPU: asynchronous copies from pinned memory.
        gated = ax["mem"] == "pinned" and ax["mode"] != "sync_copy"
        c.check(gated == ("ungated" not in b.get("label", "")), f"{name}: label {b.get('label')!r}")
        if ax["mem"] == "pageable" and ax["mode"] != "async_then_cpu_work":
            c.check_effect(b["host_blocked_us"] > 0.5 * gpu_us,
                    f"{name}: pageable copy held the host only {b['host_blocked_us']:.1f} us of {gpu_us:.1f}")
    with open(trace_path) as f:
        trace = json.load(f)
    events = trace["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M"}
    overlap_cases = [n for n in ok if n.startswith("Overlap/")]
    c.check(sorted(names.values()) == sorted(overlap_cases), "timeline cases differ from the cases run")
    pipelined = [pid for pid, n in names.items() if "depth_first/mem:pinned/streams:8/bytes:536870912/work:1/sync:end" in n]
    if pipelined:
        spans = [e for e in events if e.get("ph") == "X" and e["pid"] == pipelined[0]]
        c.check(len(spans) == 24, f"expected 24 spans (8 chunks x 3), got {len(spans)}")
        copies = [e for e in spans if e["cat"] == "copy"]
        kernels = [e for e in spans if e["cat"] == "kernel"]
        overlapping = any(k["tid"] != x["tid"] and k["ts"] < x["ts"] + x["dur"] and x["ts"] < k["ts"] + k["dur"]
                          for k in kernels for x in copies)
        c.check(overlapping, "no kernel overlaps a copy of another stream in the pipelined timeline")
    return "Overlap and HostBlocking cases verified; the timeline shows the overlap"


def main(exe, out, trace_path):
    return checked_twice(lambda c: evaluate(c, exe, out, trace_path))


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
