#!/usr/bin/env python3
"""GPU test: the SyncPlacement, Streams, Events, Launch, SmallCopy and Alloc families run every case (and
HostBlocking's pinned copies of 1 MiB), verify it, and show the effect each exists to show.

usage: families_check.py GPU_BENCH OUT.json
"""
import sys

from gpu_common import checked_twice, run_gpu_bench

FILTER = ("^(SyncPlacement|Streams|Events|Launch|SmallCopy/dir:h2d/mem:pinned|Alloc/.*/bytes:1048576/"
          "|HostBlocking/mem:pinned/bytes:1048576/)")


def evaluate(c, exe, out):
    rc, doc = run_gpu_bench(exe, out, f"--benchmark_filter={FILTER}", "--max_time_per_case=0.2")
    c.set_machine(doc)
    c.check(rc == 0, f"gpu_bench exited {rc}")
    _, ok = c.runs_by_name(doc)

    def get(name, counter):
        b = ok.get(name)
        c.check(b is not None, f"{name} missing or failed")
        return None if b is None else b[counter]

    # SyncPlacement: only syncing both before and after agrees with events.
    both = get("SyncPlacement/op:copy/sync:both", "error_pct")
    after = get("SyncPlacement/op:copy/sync:after", "error_pct")
    before = get("SyncPlacement/op:copy/sync:before", "error_pct")
    none = get("SyncPlacement/op:copy/sync:none", "error_pct")
    if None not in (both, after, before, none):
        c.check_effect(abs(both) < 10, f"copy sync:both is {both:.1f}% off events")
        c.check_effect(after > 100, f"copy sync:after is only {after:.1f}% off: the queued work should show")
        c.check_effect(before < -50 and none < -50, f"copy before/none are {before:.1f}% / {none:.1f}%: launch time only")
    # A kernel of a few microseconds: the host clock adds the launch and the wake-up to it even when it waits
    # in the right places, and the queued adds finish while the host is still launching, so after and both
    # read alike.
    add_both, add_after = get("SyncPlacement/op:add/sync:both", "error_pct"), get("SyncPlacement/op:add/sync:after", "error_pct")
    if None not in (add_both, add_after):
        c.check_effect(add_both > 20 and add_after > 20, f"add: host clock only {add_both:.0f}% / {add_after:.0f}% above events")

    # Streams: independent arrays and small kernels overlap, large kernels do not; the legacy default
    # stream serialises blocking streams and nothing else does.
    norm = get("Streams/op:normalize/streams:10/arrays:10", "speedup")
    small = get("Streams/op:small_kernels/streams:8/kernels:32", "speedup")
    large = get("Streams/op:large_kernels/streams:8/kernels:32", "speedup")
    if None not in (norm, small, large):
        c.check_effect(norm > 1.2, f"normalize of 10 arrays over 10 streams: speedup {norm:.2f}")
        c.check_effect(small > 4, f"small kernels over 8 streams: speedup {small:.2f}")
        c.check_effect(large < 1.3, f"large kernels over 8 streams: speedup {large:.2f} (they should not overlap)")
    for kind, serial in (("legacy_default", True), ("per_thread_default", False), ("blocking", False),
                         ("non_blocking", False)):
        f = get(f"Streams/kind:{kind}", "serial_fraction")
        if f is not None:
            c.check_effect((f > 0.7) if serial else (f < 0.3), f"Streams/kind:{kind}: serial_fraction {f:.2f}")

    # Events and launches.
    res = get("Events/op:elapsed_resolution/timing:on", "resolution_us")
    if res is not None:
        c.check(0 < res < 2, f"event resolution {res} us")
    for timing in ("on", "off"):
        hand = get(f"Events/op:wait_cross_stream/timing:{timing}", "handoff_us")
        if hand is not None:
            c.check_effect(0 <= hand < 20, f"cross-stream hand-off (timing:{timing}) {hand} us")
    graph = get("Launch/op:graph_replay/kernels:100", "host_per_kernel_us")
    stream = get("Launch/op:empty_kernel/kernels:100", "host_per_kernel_us")
    if None not in (graph, stream):
        c.check_effect(graph < stream, f"graph replay {graph:.3f} us/kernel on the host is not below stream launches {stream:.3f}")
    # Launches take their samples from every placement's stream in turn; the host-timed calls, launches, small
    # copies and HostBlocking's copies under 256 MiB ride the link rounds, so they take as many rounds as the
    # link-bound copies.
    context = (doc or {}).get("context", {})
    placements, link_rounds = int(context.get("gpu_bench.placements", 1)), int(context.get("gpu_bench.link_rounds", 0))
    for name, b in ok.items():
        if name.startswith("Launch/"):
            c.check(b.get("placements") == placements, f"{name}: placements {b.get('placements')}, not {placements}")
        if name.startswith(("Launch/", "Events/", "SyncPlacement/", "SmallCopy/", "HostBlocking/")):
            c.check(b.get("rounds") == link_rounds, f"{name}: {b.get('rounds')} rounds, not the link's {link_rounds}")

    for name, b in ok.items():
        if name.startswith("SmallCopy/"):
            c.check(b["p99_us"] >= b["p50_us"] > 0, f"{name}: p50 {b['p50_us']} p99 {b['p99_us']}")
            # The headline is the case's time, the rounds' center, which noise_pct describes: not the last
            # round's own median.
            c.check(abs(b["p50_us"] - b["real_time"]) <= 1e-6 * b["real_time"],
                    f"{name}: p50_us {b['p50_us']} is not the case's time {b['real_time']} us")
            # Copies back to back cost less each than one copy between its own events, and no bandwidth
            # comes from a single copy's latency.
            c.check(0 < b["steady_us"] < b["p50_us"], f"{name}: steady {b['steady_us']} us vs p50 {b['p50_us']} us")
            c.check("gbps" not in b and b.get("steady_gbps", 0) > 0, f"{name}: gbps {b.get('gbps')}")
    # HostBlocking: the headline is the case's time, so the rounds combine it and noise_pct describes it; a
    # synchronous copy holds the thread for the copy, an asynchronous one returns well before it ends.
    for mode in ("sync_copy", "async_copy", "async_then_cpu_work"):
        name = f"HostBlocking/mem:pinned/bytes:1048576/mode:{mode}"
        blocked, gpu, time = get(name, "host_blocked_us"), get(name, "copy_gpu_us"), get(name, "real_time")
        if None in (blocked, gpu, time):
            continue
        c.check(abs(blocked - time) <= 1e-6 * time, f"{name}: host_blocked_us {blocked} is not the case's time {time} us")
        if mode == "sync_copy":
            c.check_effect(blocked >= 0.8 * gpu, f"{name}: the call held the thread {blocked:.1f} us, the copy took {gpu:.1f}")
        else:
            c.check_effect(blocked < 0.5 * gpu, f"{name}: the call held the thread {blocked:.1f} us of the copy's {gpu:.1f}")
    c.check(len([n for n in ok if n.startswith("Alloc/")]) == 7, "not every Alloc case at 1 MiB ran")
    cold = get("Alloc/op:malloc_async/pool:cold/bytes:1048576", "real_time")
    warm = get("Alloc/op:malloc_async/pool:warm/bytes:1048576", "real_time")
    if None not in (cold, warm):
        c.check_effect(warm < cold, f"malloc_async from a warm pool ({warm} us) is not faster than from a cold one ({cold} us)")
    # SyncPlacement: one reference for every placement of an op.
    for op in ("add", "copy"):
        refs = {get(f"SyncPlacement/op:{op}/sync:{p}", "event_us") for p in ("both", "before", "after", "none", "events")}
        c.check(len(refs) == 1, f"SyncPlacement op:{op}: event_us differs across placements: {sorted(map(str, refs))}")
    return f"{len(ok)} cases of the latency, stream and event families verified and showed their effects"


def main(exe, out):
    return checked_twice(lambda c: evaluate(c, exe, out))


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
