#!/usr/bin/env python3
"""Host-only test of how the multi-GPU evidence judges Latency/mem:peer against nvbandwidth
(peer_references.py), on made-up figures: nvbandwidth's -j output is read (N/A on the diagonal, a row per
GPU that chases), each pair of gpu_bench's is matched to the nvbandwidth figure of the same GPU chasing the
same peer's memory at nvbandwidth's footprint, a ratio within 3% passes, one whose whole interval misses
fails, one that straddles the limit is too noisy to judge, and a pair nvbandwidth lacks or a failed case
fails. Needs no GPU.

usage: peer_references_test.py
"""
import json
import os
import sys
import tempfile

import gpu_common as g
import peer_references as pr


def nvb_doc(matrix):
    return {"nvbandwidth": {"testcases": [
        {"name": "device_to_device_latency_sm", "status": "Passed",
         "bandwidth_description": "Device to Device Latency SM GPU(row) <-> GPU(column) (ns)",
         "bandwidth_matrix": [["N/A" if v is None else str(v) for v in row] for row in matrix]}]}}


def latency_run(gpu, peer, ns, noise=0.4, size=2 << 20, pattern="stride", device_key=True, error=None):
    name = f"Latency/mem:peer/peer:{peer}/pattern:{pattern}/bytes:{size}" + (f"/device:{gpu}" if device_key else "")
    b = {"name": name + "/manual_time", "run_type": "iteration", "latency_ns": ns, "noise_pct": noise}
    if error:
        b.update(error_occurred=True, error_message=error)
    return b



def main():
    expect = g.Expectations()

    tests = pr.nvbandwidth_tests(nvb_doc([[None, 826.5, 830.1], [828.0, None, 829.0], [831.0, 827.0, None]]))
    pairs = pr.nvbandwidth_pairs(tests["device_to_device_latency_sm"]["matrix"])
    expect(pairs[(0, 1)] == 826.5 and pairs[(2, 0)] == 831.0 and (0, 0) not in pairs and len(pairs) == 6,
           "nvbandwidth's matrix: row the GPU that chases, column the peer, no diagonal")

    three = [pairs, {k: v + 2 for k, v in pairs.items()}, {k: v - 1 for k, v in pairs.items()}]
    doc = {"context": {"gpu_bench.device": "all"},
           "benchmarks": [latency_run(0, 1, 835.0), latency_run(1, 0, 829.0),
                          latency_run(0, 1, 700.0, size=1 << 20),  # another footprint: shown, not judged
                          latency_run(0, 1, 1500.0, pattern="random")]}
    cases = pr.peer_latency_cases(doc)
    expect(set(cases) == {(0, 1, "stride", 2 << 20), (1, 0, "stride", 2 << 20), (0, 1, "stride", 1 << 20),
                          (0, 1, "random", 2 << 20)}, f"cases keyed by GPU, peer, pattern, bytes: {sorted(cases)}")
    c = g.Checker()
    rows = g.quiet(pr.judge_peer_latency, c, cases, three)
    expect(len(rows) == 2 and not c.failures and not c.undecided and all(r["within"] for r in rows),
           f"pairs within 3% of nvbandwidth pass ({c.failures} {c.undecided})")
    expect(rows[0]["nvbandwidth_ns"] == 826.5 and rows[0]["gpu"] == 0 and rows[0]["peer"] == 1,
           "GPU 0 chasing GPU 1's memory meets nvbandwidth's row 0, column 1 (the median of its runs)")

    # 5% slower with narrow intervals on both sides: fails.
    c = g.Checker()
    g.quiet(pr.judge_peer_latency, c, {(0, 1, "stride", 2 << 20): latency_run(0, 1, 870.0, noise=0.3)}, three)
    expect(len(c.failures) == 1, "a pair whose whole ratio interval lies beyond 3% fails")
    # 2% faster is within; 3.5% slower with a wide interval straddles the limit: too noisy to judge.
    c = g.Checker()
    g.quiet(pr.judge_peer_latency, c, {(0, 1, "stride", 2 << 20): latency_run(0, 1, 810.0)}, three)
    expect(not c.failures and not c.undecided, "2% under nvbandwidth is within 3%")
    c = g.Checker()
    g.quiet(pr.judge_peer_latency, c, {(0, 1, "stride", 2 << 20): latency_run(0, 1, 855.5, noise=3.0)}, three)
    expect(not c.failures and len(c.undecided) == 1, "an interval across the limit is too noisy to judge")
    # No figure for the pair, a failed case, no case at nvbandwidth's footprint: each a failure.
    c = g.Checker()
    g.quiet(pr.judge_peer_latency, c, {(3, 1, "stride", 2 << 20): latency_run(3, 1, 830.0)}, three)
    expect(len(c.failures) == 1 and "no figure" in c.failures[0], "a pair nvbandwidth lacks fails")
    c = g.Checker()
    g.quiet(pr.judge_peer_latency, c, {(0, 1, "stride", 2 << 20): latency_run(0, 1, 0, error="out of memory")}, three)
    expect(len(c.failures) == 1 and "failed" in c.failures[0], "a failed case fails")
    c = g.Checker()
    g.quiet(pr.judge_peer_latency, c, {(0, 1, "stride", 1 << 20): latency_run(0, 1, 830.0, size=1 << 20)}, three)
    expect(len(c.failures) == 1, "no case at nvbandwidth's footprint fails")

    # A run on one GPU (--device=1) names no device: the GPU is the run's own.
    one = pr.peer_latency_cases({"context": {"gpu_bench.device": "1"},
                                 "benchmarks": [latency_run(1, 0, 829.0, device_key=False)]})
    expect(list(one) == [(1, 0, "stride", 2 << 20)], f"--device=1's cases are GPU 1's: {list(one)}")

    # The whole script on files: exit 0 within, 1 beyond, 77 without nvbandwidth.
    with tempfile.TemporaryDirectory() as d:
        def write(name, obj):
            path = os.path.join(d, name)
            with open(path, "w") as f:
                json.dump(obj, f)
            return path
        nvb = [write(f"nvb{i}.json", nvb_doc([[None, 826.5 + i], [828.0 + i, None]])) for i in range(3)]
        good = write("good.json", {"context": {}, "benchmarks": [latency_run(0, 1, 830.0), latency_run(1, 0, 831.0)]})
        bad = write("bad.json", {"context": {}, "benchmarks": [latency_run(0, 1, 900.0, noise=0.2)]})
        out = os.path.join(d, "out.json")
        rc = g.quiet(pr.main, ["--gpus", "2", "--latency", good, "--nvb-latency", *nvb, "--out", out])
        expect(rc == 0 and json.load(open(out))["verdict"]["rc"] == 0, f"the script passes within 3% (exit {rc})")
        rc = g.quiet(pr.main, ["--gpus", "2", "--latency", bad, "--nvb-latency", *nvb, "--out", out])
        expect(rc == 1, f"the script fails beyond 3% (exit {rc})")
        rc = g.quiet(pr.main, ["--gpus", "2", "--latency", good, "--out", out])
        expect(rc == g.SKIP, f"without nvbandwidth the script cannot judge (exit {rc})")

    return expect.finish("ok: peer latency is judged against nvbandwidth as documented")


if __name__ == "__main__":
    sys.exit(main())
