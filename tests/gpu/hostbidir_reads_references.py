#!/usr/bin/env python3
"""AllHost/dir:bidir and Peer's reads beside nvbandwidth v0.8 run in the same call (scripts/gpu_evidence.sh OUT
multi, part hostbidir_reads), judged within 3%:
  - AllHost/dir:bidir's gbps_h2d against host_to_all_bidirectional_memcpy_ce's sum over its GPUs, and gbps_d2h
    against all_to_host_bidirectional_memcpy_ce's: each direction's rate over all GPUs while every GPU copies
    both ways (docs/multi_gpu.md says where the two differ);
  - Peer/src:i/dst:j/peer_access:on/dir:oneway/access:read (GPU j's copy engine pulls GPU i's memory) against
    device_to_device_memcpy_read_ce's row j, column i, and its engine:sm twin against
    device_to_device_memcpy_read_sm's: nvbandwidth's read tests issue the copy from the row's GPU, the
    copy's destination, and move the column's memory to it.
A comparison passes where gpu_bench's figure is within 3% of nvbandwidth's. Exit status: 1 where one is
beyond 3%, or a gpu_bench case is missing or failed; else 77 where nvbandwidth's figure is missing (it did
not run, or has no figure for a comparison); else 0. Writes every row to --out (JSON) and the table to
--summary.

usage: hostbidir_reads_references.py --run RUN.json --nvb NVB.json [--bytes N] --out OUT.json [--summary OUT.txt]
"""
import argparse
import math
import sys

from gpu_common import SKIP, Checker
from peer_references import (axes, load_json, load_run, nvbandwidth_pairs, nvbandwidth_tests, runs,
                             write_outputs)

TOLERANCE = 0.03
BYTES = 256 << 20  # nvbandwidth's -b 256
HOST_TO_ALL = "host_to_all_bidirectional_memcpy_ce"
ALL_TO_HOST = "all_to_host_bidirectional_memcpy_ce"
READ_CE = "device_to_device_memcpy_read_ce"
READ_SM = "device_to_device_memcpy_read_sm"
NVB_TESTS = (HOST_TO_ALL, ALL_TO_HOST, READ_CE, READ_SM)


def bidir_and_read_cases(doc, size):
    """gpu_bench's cases of `size` bytes: {"allhost": run or None, "reads": {(src, dst, engine): run}}, engine
    "ce" or "sm"."""
    out = {"allhost": None, "reads": {}}
    for b in runs(doc):
        name = b["name"].replace("/manual_time", "")
        a = axes(name)
        if a.get("bytes") != str(size):
            continue
        if name.startswith("AllHost/") and a.get("dir") == "bidir" and "pattern" not in a:
            out["allhost"] = b
        elif (name.startswith("Peer/") and a.get("access") == "read" and a.get("peer_access") == "on"
              and a.get("dir") == "oneway"):
            out["reads"][(int(a["src"]), int(a["dst"]), a.get("engine", "ce"))] = b
    return out


def nvbandwidth_sum(test):
    """nvbandwidth's sum of a matrix as its -j output writes it: every value it has, added (N/A counts 0);
    None where the matrix holds no value."""
    vals = [v for row in test["matrix"] for v in row if v is not None]
    return sum(vals) if vals else None


def compare(c, rows, what, case, counter, theirs, nvb_what):
    """One row: gpu_bench's `counter` of `case` against nvbandwidth's figure `theirs`. A missing or failed case,
    or a ratio beyond 3%, fails; a missing nvbandwidth figure leaves the row undecided."""
    row = {"what": what, "nvbandwidth": nvb_what, "gpu_bench_gbps": None, "noise_pct": None,
           "nvbandwidth_gbps": theirs, "ratio": None, "verdict": ""}
    rows.append(row)
    if case is None:
        row["verdict"] = "MISSING"
        c.check(False, f"{what}: gpu_bench has no such case")
        return
    if case.get("error_occurred"):
        row["verdict"] = "FAILED"
        c.check(False, f"{what} failed: {case.get('error_message')}")
        return
    ours = case.get(counter)
    row["gpu_bench_gbps"], row["noise_pct"] = ours, case.get("noise_pct")
    if not isinstance(ours, (int, float)) or not math.isfinite(ours):
        row["verdict"] = "MISSING"
        c.check(False, f"{what}: gpu_bench wrote no {counter}")
        return
    if theirs is None or not theirs > 0:
        row["verdict"] = "NO NVBANDWIDTH"
        c.undecided.append(f"{what}: nvbandwidth's {nvb_what} has no figure")
        return
    row["ratio"] = ours / theirs
    within = abs(row["ratio"] - 1) <= TOLERANCE
    row["verdict"] = "PASS" if within else "FAIL"
    c.check(within, f"{what}: gpu_bench {ours:.1f} GB/s over nvbandwidth's {theirs:.1f} is {row['ratio']:.3f}, "
                    f"beyond {TOLERANCE:.0%}")


def judge(c, cases, nvb, gpus):
    """Every comparison, as rows in table order."""
    rows = []
    for counter, test in (("gbps_h2d", HOST_TO_ALL), ("gbps_d2h", ALL_TO_HOST)):
        t = nvb.get(test)
        compare(c, rows, f"AllHost/dir:bidir {counter}", cases["allhost"], counter,
                nvbandwidth_sum(t) if t else None, f"{test} sum")
    for engine, test in (("ce", READ_CE), ("sm", READ_SM)):
        t = nvb.get(test)
        theirs = nvbandwidth_pairs(t["matrix"]) if t else {}
        pairs = sorted({(s, d) for s, d, e in cases["reads"] if e == engine} |
                       {(s, d) for s in range(gpus) for d in range(gpus) if s != d})
        for src, dst in pairs:
            # nvbandwidth's row is the GPU that issues the read and receives the bytes, its column the source.
            compare(c, rows, f"Peer read {src}->{dst} {engine}", cases["reads"].get((src, dst, engine)), "gbps",
                    theirs.get((dst, src)), f"{test} [{dst}][{src}]")
    return rows


def finish(c):
    """1 where a comparison failed; else 77 where nvbandwidth's figure was missing for one; else 0."""
    if c.failures:
        print(f"{len(c.failures)} comparison(s) failed")
        return 1
    if c.undecided:
        print(f"skipped: nvbandwidth's figure is missing for {len(c.undecided)} comparison(s): "
              + "; ".join(c.undecided))
        return SKIP
    print(f"ok: every comparison within {TOLERANCE:.0%} of nvbandwidth")
    return 0


def table(rows):
    def num(v, fmt):
        return format(v, fmt) if isinstance(v, (int, float)) and math.isfinite(v) else "-"
    lines = [f"{'comparison':<30} {'gpu_bench GB/s':>14} {'noise %':>8} {'nvbandwidth GB/s':>16} {'ratio':>7}  "
             f"{'verdict':<14} nvbandwidth figure"]
    for r in rows:
        lines.append(f"{r['what']:<30} {num(r['gpu_bench_gbps'], '14.1f')} {num(r['noise_pct'], '8.2f')} "
                     f"{num(r['nvbandwidth_gbps'], '16.1f')} {num(r['ratio'], '7.3f')}  {r['verdict']:<14} "
                     f"{r['nvbandwidth']}")
    return lines


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--run", required=True, help="gpu_bench's JSON with AllHost/dir:bidir and Peer's read cases")
    p.add_argument("--nvb", help="nvbandwidth -j output of the four tests")
    p.add_argument("--bytes", type=int, default=BYTES)
    p.add_argument("--out", required=True)
    p.add_argument("--summary")
    a = p.parse_args(argv)
    c = Checker()
    doc = load_run(c, a.run, "the AllHost/dir:bidir and Peer read run")
    try:
        gpus = int(doc.get("context", {}).get("gpu.count", "0"))
    except ValueError:
        gpus = 0
    nvb, text = {}, []
    if a.nvb:
        try:
            nvb = nvbandwidth_tests(load_json(a.nvb))
        except (OSError, ValueError) as e:
            text.append(f"nvbandwidth output {a.nvb} unreadable: {e}")
    for test in NVB_TESTS:
        t = nvb.get(test)
        if t is None:
            text.append(f"nvbandwidth {test}: did not run")
        elif not t["matrix"]:
            text.append(f"nvbandwidth {test}: {t['status']} {t.get('error') or ''}".rstrip())
        else:
            text.append(f"nvbandwidth {test} ({t['description']}): "
                        + "; ".join(" ".join("-" if v is None else f"{v:.1f}" for v in row) for row in t["matrix"]))
    rows = judge(c, bidir_and_read_cases(doc, a.bytes), nvb, gpus)
    text = [f"AllHost/dir:bidir and Peer's reads at {a.bytes} B beside nvbandwidth, within {TOLERANCE:.0%}:"] + \
        table(rows) + [""] + text
    print("\n".join(text))
    rc = finish(c)
    write_outputs(a.out, a.summary, {"bytes": a.bytes, "gpus": gpus, "rows": rows}, text, rc, c, "nvbandwidth missing")
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
