#!/usr/bin/env python3
"""Host-only tests of how the multi-GPU evidence judges AllHost/dir:bidir and Peer's reads against nvbandwidth
(hostbidir_reads_references.py), on made-up figures: gbps_h2d meets host_to_all_bidirectional's sum and
gbps_d2h all_to_host_bidirectional's, a read from GPU i to GPU j meets row j, column i of the read matrices,
a ratio within 3% passes, one beyond fails (exit 1), and a missing nvbandwidth figure skips (exit 77). Needs
no GPU; pytest collects the test_ functions, and run as a script (as ctest does) it runs them all.

usage: hostbidir_reads_references_test.py
"""
import json
import os
import sys
import tempfile

import gpu_common as g
import hostbidir_reads_references as hr

SIZE = 256 << 20
# Two GPUs. The host tests: a row for the CPU, a column per GPU; the read tests: row the GPU that reads (the
# copy's destination), column the GPU read from, so [1][0] is GPU 1 pulling GPU 0's memory.
NVB = {"host_to_all_bidirectional_memcpy_ce": [[40.0, 42.0]],
       "all_to_host_bidirectional_memcpy_ce": [[30.0, 31.0]],
       "device_to_device_memcpy_read_ce": [[None, 380.0], [390.0, None]],
       "device_to_device_memcpy_read_sm": [[None, 360.0], [370.0, None]]}


def nvb_doc(tests=NVB):
    return {"nvbandwidth": {"testcases": [
        {"name": name, "status": "Passed", "bandwidth_description": "memcpy bandwidth (GB/s)",
         "bandwidth_matrix": [["N/A" if v is None else str(v) for v in row] for row in m],
         "sum": sum(v for row in m for v in row if v is not None)} for name, m in tests.items()]}}


def case(name, error=None, **counters):
    b = {"name": name + "/manual_time", "run_type": "iteration", "noise_pct": 1.0, **counters}
    if error:
        b.update(error_occurred=True, error_message=error)
    return b


def read(src, dst, gbps, engine="ce", **kw):
    sm = "/engine:sm" if engine == "sm" else ""
    return case(f"Peer/src:{src}/dst:{dst}/peer_access:on/dir:oneway/access:read{sm}/bytes:{SIZE}", gbps=gbps, **kw)


def run_doc(h2d=82.0, d2h=61.0, reads=None, drop=()):
    """A gpu_bench run of two GPUs whose figures meet NVB's, less the reads named in `drop`."""
    reads = reads or {(0, 1, "ce"): 390.0, (1, 0, "ce"): 380.0, (0, 1, "sm"): 370.0, (1, 0, "sm"): 360.0}
    benchmarks = [case(f"AllHost/dir:bidir/bytes:{SIZE}", gbps=140.0, gbps_h2d=h2d, gbps_d2h=d2h),
                  # Neither a write nor another size is a read of 256 MiB.
                  case(f"Peer/src:0/dst:1/peer_access:on/dir:oneway/bytes:{SIZE}", gbps=1.0),
                  case("Peer/src:0/dst:1/peer_access:on/dir:oneway/access:read/bytes:1048576", gbps=1.0)]
    benchmarks += [read(s, d, v, e) for (s, d, e), v in reads.items() if (s, d, e) not in drop]
    return {"context": {"gpu.count": "2", "gpu_bench.device": "all"}, "benchmarks": benchmarks}


def judged(doc, nvb=NVB):
    c = g.Checker()
    rows = g.quiet(hr.judge, c, hr.bidir_and_read_cases(doc, SIZE), hr.nvbandwidth_tests(nvb_doc(nvb)), 2)
    return c, {r["what"]: r for r in rows}


def test_each_direction_meets_its_own_test_and_a_read_its_readers_row():
    c, rows = judged(run_doc())
    assert not c.failures and not c.undecided, (c.failures, c.undecided)
    assert rows["AllHost/dir:bidir gbps_h2d"]["nvbandwidth_gbps"] == 82.0  # host_to_all's 40 + 42
    assert rows["AllHost/dir:bidir gbps_d2h"]["nvbandwidth_gbps"] == 61.0  # all_to_host's 30 + 31
    # GPU 1 pulling GPU 0's memory is nvbandwidth's row 1, column 0.
    assert rows["Peer read 0->1 ce"]["nvbandwidth_gbps"] == 390.0
    assert rows["Peer read 1->0 sm"]["nvbandwidth_gbps"] == 360.0
    assert all(r["verdict"] == "PASS" for r in rows.values()), rows
    assert len(rows) == 6


def test_the_directions_are_not_swapped():
    # gbps_h2d read as the d2h test's figure would be 82 / 61: far beyond 3%.
    c, rows = judged(run_doc(h2d=61.0, d2h=82.0))
    assert len(c.failures) == 2
    assert rows["AllHost/dir:bidir gbps_h2d"]["verdict"] == "FAIL"


def test_within_three_percent_passes_and_beyond_fails():
    c, rows = judged(run_doc(h2d=82.0 * 1.029, reads={(0, 1, "ce"): 390.0 * 0.975, (1, 0, "ce"): 380.0,
                                                     (0, 1, "sm"): 370.0, (1, 0, "sm"): 360.0 * 1.04}))
    assert rows["AllHost/dir:bidir gbps_h2d"]["verdict"] == "PASS"
    assert rows["Peer read 0->1 ce"]["verdict"] == "PASS"
    assert rows["Peer read 1->0 sm"]["verdict"] == "FAIL"
    assert len(c.failures) == 1 and "1->0 sm" in c.failures[0]


def test_a_missing_or_failed_case_fails():
    c, rows = judged(run_doc(drop=[(1, 0, "sm")]))
    assert rows["Peer read 1->0 sm"]["verdict"] == "MISSING" and len(c.failures) == 1
    doc = run_doc()
    doc["benchmarks"][0].update(error_occurred=True, error_message="out of memory")
    c, rows = judged(doc)
    assert rows["AllHost/dir:bidir gbps_d2h"]["verdict"] == "FAILED" and len(c.failures) == 2


def test_a_missing_nvbandwidth_figure_is_undecided():
    c, rows = judged(run_doc(), {k: v for k, v in NVB.items() if k != "device_to_device_memcpy_read_sm"})
    assert not c.failures and len(c.undecided) == 2
    assert rows["Peer read 0->1 sm"]["verdict"] == "NO NVBANDWIDTH"


def test_the_script_exits_0_within_1_beyond_and_77_without_nvbandwidth():
    with tempfile.TemporaryDirectory() as d:
        def write(name, obj):
            path = os.path.join(d, name)
            with open(path, "w") as f:
                json.dump(obj, f)
            return path
        nvb = write("nvb.json", nvb_doc())
        good = write("good.json", run_doc())
        bad = write("bad.json", run_doc(d2h=55.0))
        out = os.path.join(d, "out.json")
        summary = os.path.join(d, "summary.txt")
        rc = g.quiet(hr.main, ["--run", good, "--nvb", nvb, "--out", out, "--summary", summary])
        assert rc == 0 and json.load(open(out))["verdict"]["rc"] == 0, rc
        assert "PASS" in open(summary).read()
        assert g.quiet(hr.main, ["--run", bad, "--nvb", nvb, "--out", out]) == 1
        assert g.quiet(hr.main, ["--run", good, "--out", out]) == g.SKIP
        assert g.quiet(hr.main, ["--run", good, "--nvb", os.path.join(d, "absent.json"), "--out", out]) == g.SKIP
        # A figure beyond 3% fails even where nvbandwidth lacks another.
        partial = write("partial.json", nvb_doc({k: v for k, v in NVB.items() if "read" not in k}))
        assert g.quiet(hr.main, ["--run", bad, "--nvb", partial, "--out", out]) == 1


def main():
    tests = [(name, f) for name, f in sorted(globals().items()) if name.startswith("test_") and callable(f)]
    failed = 0
    for name, f in tests:
        try:
            f()
        except AssertionError as e:
            failed += 1
            print(f"FAIL: {name}: {e}")
    print(f"{failed} of {len(tests)} failed" if failed else f"ok: {len(tests)} tests of hostbidir_reads_references")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
