#!/usr/bin/env python3
"""Host-only test of how the GPU tests judge (gpu_common.py): a figure inside its limits passes, one whose
whole interval misses fails, one whose interval straddles a limit is too noisy to judge (exit 77, naming
it); a ratio's interval comes from its factors' interval ends; an effect that misses is measured again once
and fails only when it misses twice; while other processes share the GPU an effect's miss is undecided; a
refusal is found among gpu_bench's warnings; gpu_peer judges AllHost's aggregate and its GPUs' own rates on
one round's samples, and the NVLink facts against nvidia-smi's files; gpu_fast_cpu passes rounds held in the
fast state and fails rounds half of them slow, or a run whose context names no held state; gpu_managed_rounds
fails a quarter of its rounds slow, an event-timed prefetch or no held state. Needs no GPU.

usage: judging_test.py
"""
import io
import math
import sys
from contextlib import redirect_stdout

import gpu_common as g



def main():
    expect = g.Expectations()

    c = g.Checker()
    g.quiet(c.judge, "inside", 0.99, (0.95, 1.02), low=0.97)
    expect(not c.failures and not c.undecided and g.quiet(c.finish, "x") == 0, "a figure inside its limit passes")
    c = g.Checker()
    g.quiet(c.judge, "missed", 0.90, (0.88, 0.93), low=0.97)
    expect(len(c.failures) == 1 and g.quiet(c.finish, "x") == 1, "a whole interval below the limit fails")
    c = g.Checker()
    g.quiet(c.judge, "straddles", 0.95, (0.90, 1.01), low=0.97)
    out = io.StringIO()
    with redirect_stdout(out):
        rc = c.finish("x")
    expect(rc == g.SKIP and "too noisy to judge 1 check(s): straddles" in out.getvalue(),
           f"an interval across the limit skips and names the check (exit {rc})")
    c = g.Checker()
    g.quiet(c.judge, "gap", 2.1, (1.9, 2.2), low=-0.6, high=0.6)
    expect(len(c.failures) == 1, "a difference wholly above its upper limit fails")
    c = g.Checker()
    g.quiet(c.judge, "failed and undecided", 0.5, (0.4, 0.6), low=0.97)
    g.quiet(c.judge, "undecided", 0.95, (0.9, 1.0), low=0.97)
    expect(g.quiet(c.finish, "x") == 1, "a failure outweighs an undecided check")

    r, (lo, hi) = g.ratio_interval((1200.0, (1190.0, 1210.0)), (4000.0, (1200.0, 4100.0)))
    expect(math.isclose(r, 0.3) and math.isclose(lo, 1190 / 4100) and math.isclose(hi, 1210 / 1200),
           f"a ratio's interval runs from the low end over the high to the high over the low ({lo}, {hi})")
    m, (lo, hi) = g.median_interval([3.0, 1.0, 2.0])
    expect(m == 2.0 and (lo, hi) == (1.0, 3.0), "three values: the median and their whole range")
    m, (lo, hi) = g.median_interval([5.0])
    expect(lo == -math.inf and hi == math.inf, "one value: no interval")
    v, (lo, hi) = g.figure_interval(100.0, 5.0)
    expect((lo, hi) == (95.0, 105.0), "a figure's noise_pct is its interval")

    calls = []

    def flaky(c):
        calls.append(1)
        c.check_effect(len(calls) > 1, "speedup")
        return "passed"

    out = io.StringIO()
    with redirect_stdout(out):
        rc = g.checked_twice(flaky)
    expect(rc == 0 and len(calls) == 2 and "measuring again" in out.getvalue(), "an effect missed once is measured again")
    calls.clear()

    def broken(c):
        calls.append(1)
        c.check_effect(False, "speedup")
        return "passed"

    expect(g.quiet(g.checked_twice, broken) == 1 and len(calls) == 2, "an effect missed twice fails")
    calls.clear()

    def failing(c):
        calls.append(1)
        c.check(False, "data")
        c.check_effect(False, "speedup")
        return "passed"

    expect(g.quiet(g.checked_twice, failing) == 1 and len(calls) == 1, "a plain failure is not measured again")
    c = g.Checker()
    rounds = {"slow": {"round_times_s": [1e-6, 1e-6, 2e-6]}, "fast": {"round_times_s": [1e-6, 1e-6, 1e-6]}}
    g.quiet(c.few_slow_rounds, rounds, ("slow", "fast"), 3, 1.1, 0.1, "a state was not held")
    expect(not c.failures and len(c.effect_misses) == 1, "too many slow rounds are an effect missed, measured again")
    c = g.Checker()
    c.set_machine({"context": {"gpu.other_processes": "1"}})
    g.quiet(c.check_effect, False, "speedup")
    expect(not c.effect_misses and len(c.undecided) == 1, "a missed effect on a shared GPU is undecided")
    c = g.Checker()
    c.set_machine({"context": {"gpu.other_processes": "unavailable"}})
    g.quiet(c.check_effect, False, "speedup")
    expect(c.effect_misses == ["speedup"], "an unknown process count is not a shared GPU")

    warn = "gpu_bench: warning: 1 other process(es) are using GPU 0; figures may suffer"
    expect(c.refusal_line(f"{warn}\ngpu_bench: --sizes asks for 1 TiB\n") == "gpu_bench: --sizes asks for 1 TiB",
           "the refusal is found among warnings")
    expect(c.refusal_line("gpu_bench: one\ngpu_bench: two\n") is None, "two refusal lines are not one")
    # gpu_peer's AllHost check: the aggregate of every round's mean against the last round's own GPU rates
    # once read 159.47 GB/s against their sum of 155.19; one round's samples on both sides cannot do that.
    import peer_check

    def all_host(rounds_s, per_gpu, bytes_=268435456):
        moved = bytes_ * len(per_gpu)
        return {"name": f"AllHost/dir:h2d/bytes:{bytes_}/manual_time", "gpus": float(len(per_gpu)),
                "gbps": moved / (sum(rounds_s) / len(rounds_s)) / 1e9, "round_times_s": rounds_s,
                **{f"gbps_gpu{i}": v for i, v in enumerate(per_gpu)}}

    seen = all_host([0.00326, 0.00329, 0.00355], [77.60, 77.59])
    expect(abs(seen["gbps"] - 159.47) < 0.05 and not seen["gbps"] <= 1.02 * 155.19,
           f"the made-up run is the one seen, which the rule of every round's mean failed: {seen['gbps']:.2f}")
    r = peer_check.all_host_ratio(seen)
    expect(r is not None and r <= 1.0, f"one round's aggregate is within the sum of its GPUs' rates ({r})")
    c = g.Checker()
    g.quiet(peer_check.judge_all_host, c, "AllHost", [seen, all_host([0.0033, 0.0034, 0.0036], [75.0, 75.1]),
                                                    all_host([0.0034, 0.0032, 0.0035], [77.0, 77.1])])
    expect(not c.failures and not c.undecided, "rounds that differ from each other do not fail AllHost")
    c = g.Checker()
    broken = [all_host([0.0034, 0.0034, 0.0030], [77.6, 77.6]) for _ in range(3)]  # the last round: 179 GB/s
    g.quiet(peer_check.judge_all_host, c, "AllHost", broken)
    expect(len(c.failures) == 1, "an aggregate above its own round's GPU rates fails")
    one_round = {"name": "AllHost/dir:d2h/bytes:1024/manual_time", "gpus": 2.0, "gbps": 30.0, "gbps_gpu0": 16.0,
                 "gbps_gpu1": 15.0}
    expect(abs(peer_check.all_host_ratio(one_round) - 30 / 31) < 1e-12, "one round: gbps is that round's")
    expect(peer_check.all_host_ratio({**one_round, "gbps_gpu1": None}) is None, "a missing GPU rate: no ratio")
    # gpu_peer reads nvidia-smi's NVLinks to compare with gpu_bench's: the committed topo -m of four H200s.
    import os
    topo = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "results", "multi", "topo_h200x4.txt")
    with open(topo) as f:
        links = peer_check.parse_topo(f.read())
    expect(len(links) == 12 and set(links.values()) == {18}, f"topo -m: NV18 between every pair of four ({links})")
    expect(peer_check.parse_topo("\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tSYS\t0-7\nGPU1\tPIX\t X \t0-7\n")
           == {(0, 1): 0, (1, 0): 0}, "topo -m: a PCIe path is no NVLink")
    status = "GPU 0: NVIDIA H200 (UUID: GPU-x)\n\t Link 0: 26.562 GB/s\n\t Link 1: <inactive>\n\t Link 2: 26.562 GB/s\n"
    expect(peer_check.parse_nvlink_status(status) == {0: 26.562, 2: 26.562}, "nvlink -s: the links up and their rate")
    # The facts check (peer_check.py --facts): gpu_bench's NVLinks against nvidia-smi's, GPUs matched by UUID,
    # on the committed topo -m and nvlink -s of four H200s and contexts made to agree or not.
    node = os.path.join(os.path.dirname(topo), "h200x4_fc0a364")
    with open(os.path.join(node, "topo.txt")) as f:
        topo_text = f.read()
    with open(os.path.join(node, "nvlink_s.txt")) as f:
        status_text = f.read()
    by_gpu = peer_check.nvlink_status_by_gpu(status_text)
    expect(sorted(by_gpu) == [0, 1, 2, 3] and all(len(links) == 18 for _, links in by_gpu.values()),
           f"nvlink -s of four GPUs: 18 links each ({ {k: len(v[1]) for k, v in by_gpu.items()} })")

    def context(order):  # CUDA's GPU i is nvidia-smi's order[i]
        ctx = {"gpu.count": "4"}
        for i, k in enumerate(order):
            ctx.update({f"gpu.{i}.uuid": by_gpu[k][0], f"gpu.{i}.nvlinks": "18", f"gpu.{i}.nvlink_link_gbps": "26.562"})
            ctx.update({f"topology.{i}-{j}.nvlinks": "18" for j in range(4) if j != i})
        return ctx

    def facts_failures(ctx):
        c = g.Checker()
        g.quiet(peer_check.compare_with_nvidia_smi, c, ctx, 4, topo_text, status_text)
        return c.failures

    expect(not facts_failures(context([0, 1, 2, 3])), "facts that agree with nvidia-smi pass")
    expect(not facts_failures(context([3, 1, 0, 2])), "GPUs numbered otherwise by CUDA are matched by UUID")
    expect(len(facts_failures({**context([0, 1, 2, 3]), "gpu.2.nvlinks": "12"})) == 1, "a GPU's link count fails")
    expect(len(facts_failures({**context([0, 1, 2, 3]), "gpu.1.nvlink_link_gbps": "25.0"})) == 1,
           "a GPU's link rate fails")
    expect(len(facts_failures({**context([0, 1, 2, 3]), "topology.1-3.nvlinks": "0"})) == 1, "a pair's links fail")
    unknown = context([0, 1, 2, 3])
    unknown["gpu.3.uuid"] = "GPU-not-on-this-node"
    expect(facts_failures(unknown), "a GPU nvidia-smi does not name fails")
    # gpu_fast_cpu on made-up runs: each case's seven rounds, `slow` of them twice as long as the others.
    import fast_cpu_check as fc

    def fast_cpu_run(slow, policy="fast state of 16 held", moves="searched at 3 of 900 checks"):
        runs = [{"name": f"{n}/manual_time", "run_type": "iteration",
                 "round_times_s": [2e-7 if i >= slow else 4e-7 for i in range(fc.ROUNDS)]} for n in fc.CASES]
        return {"context": {"host.thread_cpu": policy, "gpu_bench.cpu_moves": moves}, "benchmarks": runs}

    def fast_cpu_failures(doc):
        c = g.Checker()
        g.quiet(fc.judge, c, doc)
        return c.failures + c.effect_misses  # a slow share is an effect missed: measured again

    expect(not fast_cpu_failures(fast_cpu_run(2)), "two slow rounds of seven a case pass gpu_fast_cpu")
    expect(len(fast_cpu_failures(fast_cpu_run(3))) == 1, "three of seven a case (9 of 21) fail gpu_fast_cpu")
    expect(len(fast_cpu_failures(fast_cpu_run(0, policy="off", moves=""))) == 2,
           "a run that held no state fails gpu_fast_cpu, however its rounds read")

    # gpu_managed_rounds on made-up runs: each case's rounds, `slow` of them 1.2 times the others.
    import managed_rounds_check as mr

    def managed_failures(slow, label="host clock", policy="fast state of 16 held"):
        runs = [{"name": f"{n}/manual_time", "run_type": "iteration", "label": label,
                 "round_times_s": [2.4e-5 if i < slow else 2e-5 for i in range(mr.ROUNDS)]} for n in mr.CASES]
        c = g.Checker()
        g.quiet(mr.judge, c, {"context": {"host.thread_cpu": policy}, "benchmarks": runs})
        return c.failures + c.effect_misses  # a slow share is an effect missed: measured again

    expect(not managed_failures(1), "one slow round of seven a case passes gpu_managed_rounds")
    expect(len(managed_failures(2)) == 1, "two of seven a case (8 of 28) fail gpu_managed_rounds")
    expect(len(managed_failures(0, label="")) == len(mr.CASES), "event-timed prefetches fail gpu_managed_rounds")
    expect(len(managed_failures(0, policy="off")) == 1, "a run that held no state fails gpu_managed_rounds")

    import pageable_cpu_check as pc

    def pageable_failures(slow_cases, policy="fast state of 16 held"):
        """A run in which the first `slow_cases` of pc.CASES read two of their seven rounds 1.2x slow."""
        runs = [{"name": f"{n}/manual_time", "run_type": "iteration",
                 "round_times_s": [1.2e-6 if k < slow_cases and i < 2 else 1e-6 for i in range(pc.ROUNDS)]}
                for k, n in enumerate(pc.CASES)]
        c = g.Checker()
        g.quiet(pc.judge, c, {"context": {"host.thread_cpu": policy}, "benchmarks": runs})
        return c.failures + c.effect_misses  # a slow share is an effect missed: measured again

    expect(not pageable_failures(1), "two slow rounds of 35 pass gpu_pageable_cpu")
    expect(len(pageable_failures(2)) == 1, "four of 35 (over a tenth) fail gpu_pageable_cpu")
    expect(len(pageable_failures(0, policy="off")) == 1, "a run that held no state fails gpu_pageable_cpu")
    return expect.finish("ok: the GPU tests judge as docs/testing.md says")


if __name__ == "__main__":
    sys.exit(main())
