#!/usr/bin/env python3
"""GPU test (two GPUs or more, every pair of one link class): PeerPattern/pattern:all_pairs carries what the
node carries. Every GPU copies to every other at once, so each GPU's copies share its own links. Where every
pair is alike, the node carries about G times what one pair carries one way: all_pairs must reach at least
0.9 of G times Peer's oneway rate of GPUs 0 and 1 (both with peer access, 256 MiB, in the same run), judged
on the two figures' intervals. Both engines: copy engines against Peer's copy-engine pair, engine:sm against
Peer's engine:sm pair. Every case verifies its data.
Skips (77) with fewer than two GPUs, where GPUs cannot map each other's memory, or where the pairs are not
all one link class (topology.i-j.link and topology.i-j.nvlinks of the context). Writes the figures to OUT.json.

usage: all_pairs_check.py GPU_BENCH OUT.json
"""
import json
import sys

from gpu_common import SKIP, Checker, figure_interval, list_cases, ratio_interval, run_gpu_bench

BIG = 256 << 20
SHARE = 0.9
FILTER = (f"^(PeerPattern/pattern:all_pairs/(engine:sm/)?bytes:{BIG}/"
          f"|Peer/src:0/dst:1/peer_access:on/dir:oneway/(engine:sm/)?bytes:{BIG}/)")


def link_classes(ctx, count):
    """The set of (link, nvlinks) over every ordered pair of the context's GPUs."""
    return {(ctx.get(f"topology.{i}-{j}.link"), ctx.get(f"topology.{i}-{j}.nvlinks"))
            for i in range(count) for j in range(count) if i != j}


def main(gpu_bench, out):
    # PeerPattern registers no case below two GPUs, and --device=all lists nothing without a GPU.
    if not any(c.startswith("PeerPattern/") for c in list_cases(gpu_bench, "--device=all", f"--benchmark_filter={FILTER}")):
        print("no PeerPattern case is registered (fewer than two GPUs are visible): skipping")
        return SKIP
    rc, doc = run_gpu_bench(gpu_bench, out + ".gpu_bench.json", "--device=all", f"--benchmark_filter={FILTER}",
                            "--sizes=256M")
    ctx = doc["context"]
    count = int(ctx.get("gpu.count", "0"))
    if count < 2:
        print(f"gpu.count is {ctx.get('gpu.count')}: all_pairs needs two GPUs or more; skipping")
        return SKIP
    classes = link_classes(ctx, count)
    if len(classes) != 1:
        print(f"the pairs are of {len(classes)} link classes ({sorted(map(str, classes))}): G times one pair is "
              "no bound here; skipping")
        return SKIP
    c = Checker()
    c.set_machine(doc)
    c.check(rc == 0, f"gpu_bench exited {rc}")
    runs, ok = c.runs_by_name(doc)
    if any("cannot access each other's memory" in (b.get("error_message") or "") for b in runs.values()):
        print("a pair cannot map each other's memory: skipping")
        return SKIP
    report = {"gpus": count, "link_class": list(classes)[0], "cases": {}}
    for engine in ("", "engine:sm/"):
        pair = ok.get(f"Peer/src:0/dst:1/peer_access:on/dir:oneway/{engine}bytes:{BIG}")
        every = ok.get(f"PeerPattern/pattern:all_pairs/{engine}bytes:{BIG}")
        c.check(pair is not None and every is not None, f"{engine or 'copy engines'}: a case is missing")
        if pair is None or every is None:
            continue
        share, interval = ratio_interval(figure_interval(every["gbps"], every.get("noise_pct")),
                                         figure_interval(count * pair["gbps"], pair.get("noise_pct")))
        report["cases"][engine or "ce"] = {"all_pairs_gbps": every["gbps"], "all_pairs_noise_pct": every.get("noise_pct"),
                                           "pair_gbps": pair["gbps"], "pair_noise_pct": pair.get("noise_pct"),
                                           "share": share}
        c.judge(f"all_pairs {engine or 'copy engines'}: {every['gbps']:.1f} GB/s over {count} x one pair's "
                f"{pair['gbps']:.1f}", share, interval, low=SHARE)
    with open(out, "w") as f:
        json.dump(report, f, indent=1)
    return c.finish(f"all_pairs carries at least {SHARE} of {count} times one pair's rate on both engines")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
