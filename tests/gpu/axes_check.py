#!/usr/bin/env python3
"""GPU test: copy engine against SMs, batched copies, AllHost's patterns and sizes that cannot fit.

Every case runs and verifies its data, a loop of 1024 copies too (ungated where the stream cannot queue
it behind the gate); an SM twin moves the same bytes as its copy-engine case; the three ways of issuing a
batch all deliver (cudaMemcpyBatchAsync may be skipped, with its reason, where the toolkit or driver lacks
it); on one GPU each AllHost pattern equals the plain case; a --sizes list the GPU cannot hold twice over
is refused in one line before anything runs.

usage: axes_check.py GPU_BENCH OUT.json
"""
import os
import subprocess
import sys
import tempfile

from gpu_common import Checker, figure_interval, iteration_runs, ratio_interval, run_gpu_bench

FILTER = ("^(Transfer/dir:(h2d|d2h|bidir|d2d)/mem:(pinned|mapped|device)/(engine:(ce|sm)/)?(cache:cold/)?bytes:1048576/"
          "|Batch/api:(loop|batch|kernel)/copies:(1|64)/bytes:(4|4096)/|Batch/api:loop/copies:1024/bytes:4/|AllHost/)")


def main(exe, out):
    rc, doc = run_gpu_bench(exe, out, f"--benchmark_filter={FILTER}", "--max_time_per_case=0.2")
    c = Checker()
    runs = {b["name"].replace("/manual_time", ""): b for b in iteration_runs(doc)}
    skipped = {n: b for n, b in runs.items() if b.get("error_message", "").startswith("skipped: ")}
    failed = {n: b for n, b in runs.items() if b.get("error_occurred") and n not in skipped}
    for n, b in failed.items():
        c.check(False, f"{n} failed: {b.get('error_message')}")
    c.check(rc == 0 or not failed, f"gpu_bench exited {rc}")
    for n in skipped:
        c.check(n.startswith("Batch/api:batch/"), f"{n} skipped: {runs[n]['error_message']}")
    ok = {n: b for n, b in runs.items() if not b.get("error_occurred")}

    twins = [n for n in ok if "/engine:" in n]
    c.check(len(twins) >= 4, f"only {len(twins)} engine twins ran")
    for n in twins:
        plain = n.replace("/engine:sm", "").replace("/engine:ce", "")
        c.check(plain in ok, f"{n} has no plain case beside it")
        if plain in ok:
            # Both engines move the same bytes over the same link: within a factor of 4 of each other.
            a, b = ok[n]["gbps"], ok[plain]["gbps"]
            c.check(0.25 < a / b < 4, f"{n}: {a:.2f} GB/s against {b:.2f} for {plain}")
        if "dir:bidir" in n:
            c.check(ok[n].get("gbps_h2d", 0) > 0 and ok[n].get("gbps_d2h", 0) > 0, f"{n}: no per-direction rates")

    for api in ("loop", "kernel"):
        for copies in (1, 64):
            n = f"Batch/api:{api}/copies:{copies}/bytes:4096"
            b = ok.get(n)
            c.check(b is not None, f"{n} missing or failed")
            if b:
                c.check(b["gbps"] > 0 and b["per_copy_us"] > 0 and b["host_issue_us"] >= 0, f"{n}: {b}")
    loop64, loop1 = ok.get("Batch/api:loop/copies:64/bytes:4096"), ok.get("Batch/api:loop/copies:1/bytes:4096")
    if loop64 and loop1:
        c.check(loop64["host_issue_us"] > loop1["host_issue_us"], "issuing 64 copies took no longer than one")
    # A loop longer than a held stream queues still runs: gated where it fits, else ungated and labelled so.
    loop1024 = ok.get("Batch/api:loop/copies:1024/bytes:4")
    c.check(loop1024 is not None, "Batch/api:loop/copies:1024/bytes:4 missing or failed")
    if loop1024:
        label = loop1024.get("label", "")
        c.check("ungated" not in label or "more copies than a held stream queues" in label, f"label {label!r}")
        if loop64:
            c.check(loop1024["host_issue_us"] > loop64["host_issue_us"], "issuing 1024 copies took no longer than 64")

    for d, pattern in (("h2d", "one_to_all"), ("d2h", "all_to_one")):
        plain = [b for n, b in ok.items() if n.startswith(f"AllHost/dir:{d}/bytes:")]
        pat = [b for n, b in ok.items() if n.startswith(f"AllHost/dir:{d}/pattern:{pattern}/bytes:")]
        c.check(bool(plain) and bool(pat), f"AllHost {d}: plain or {pattern} missing")
        if plain and pat and doc["context"].get("gpu.count") == "1":
            a, b = pat[0]["gbps"], plain[0]["gbps"]
            # Within 5%, judged with each figure's own interval (noise_pct): a burst of other traffic on a
            # shared host link makes one case noisy, and says so in noise_pct, without the two differing.
            ratio, interval = ratio_interval(figure_interval(a, pat[0].get("noise_pct")),
                                             figure_interval(b, plain[0].get("noise_pct")))
            c.judge(f"AllHost {d} {pattern} on one GPU over the plain case ({a:.2f} / {b:.2f} GB/s)", ratio, interval,
                    low=0.95, high=1.05)

    with tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run([exe, "--sizes=1T", "--benchmark_filter=^Transfer/dir:h2d/mem:pinned/",
                            f"--benchmark_out={os.path.join(tmp, 'x.json')}"], capture_output=True, text=True, timeout=120)
        line = c.refusal_line(r.stderr)
        c.check(r.returncode == 2 and line is not None and "--sizes asks for copies of 1 TiB" in line,
                f"--sizes=1T: exit {r.returncode}, {r.stderr!r}")
        c.check(os.listdir(tmp) == [], "--sizes=1T left a file behind")
    return c.finish(f"{len(ok)} cases: engines, batches and AllHost patterns verified; an impossible size refused")


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
