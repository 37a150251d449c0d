#!/usr/bin/env python3
"""Host-only test of gpu_overlap's checks of Overlap's bound (overlap_check.py): its copy of the bound's
formula gives the model's figures; the committed default runs of the bound before it held (110d606: a
bound per turn, its link line the chained stage alone) each fail the check that the bound holds; a case
whose ideal_ms leaves out the link line (the planted defect) fails the check of the formula, and its
efficiency the check of tightness. Needs no GPU.

usage: overlap_bound_test.py
"""
import json
import math
import os
import sys

import gpu_common as g
import overlap_check as oc

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
OLD_RUNS = [os.path.join(ROOT, "results", "aa", f"{gpu}_default_110d606", f"default_{gpu}_run{n}.json")
            for gpu in ("h100", "h200") for n in (1, 2)]



def case(in_ms, out_ms, both_ms, kernel_ms, bidir_in_ms, bidir_out_ms, s, eff=0.97, lo=0.96, hi=0.98, planted=False):
    b = {"in_ms": in_ms, "out_ms": out_ms, "both_ms": both_ms, "kernel_ms": kernel_ms, "bidir_in_ms": bidir_in_ms,
         "bidir_out_ms": bidir_out_ms, "efficiency": eff, "efficiency_lo": lo, "efficiency_hi": hi}
    lines = oc.bound_lines(b, s)
    b["ideal_ms"] = max(lines["kernels"], lines["in"], lines["out"]) if planted else max(lines.values())
    return b


def main():
    expect = g.Expectations()

    # The figures of tests/unit/test_overlap.cpp, TheLinkLineTakesTheFastestRateOfBothDirections.
    slow = oc.bound_lines({"in_ms": 9.724, "out_ms": 9.739, "both_ms": 12.9, "kernel_ms": 1.926,
                           "bidir_in_ms": 10.6, "bidir_out_ms": 10.6}, 8)
    first, last = (9.724 + 1.926) / 8, (1.926 + 9.739) / 8
    expect(math.isclose(slow["link"], first + last + (2 - first / 9.724 - last / 9.739) * 5.3), f"link line {slow['link']}")
    one = oc.bound_lines({"in_ms": 10, "out_ms": 8, "both_ms": 18.5, "kernel_ms": 3}, 1)
    expect(math.isclose(max(one.values()), 21.0) and math.isclose(one["link"], 18.0), f"one chunk: {one}")

    for path in OLD_RUNS:
        with open(path) as f:
            doc = json.load(f)
        c = g.Checker()
        for b in g.iteration_runs(doc):
            if b["name"].startswith("Overlap/") and not b.get("error_occurred"):
                g.quiet(oc.check_holds, c, b["name"], b)
        expect(len(c.failures) > 0, f"{os.path.basename(path)}: the bound before this check held in every case")

    c = g.Checker()
    g.quiet(oc.check_bound, c, "sound", case(9.8, 9.76, 11.85, 2.14, 11.0, 10.7, 8), 8)
    g.quiet(oc.check_holds, c, "sound", case(9.8, 9.76, 11.85, 2.14, 11.0, 10.7, 8))
    expect(not c.failures, f"a case that follows the formula and holds passes: {c.failures}")
    c = g.Checker()
    g.quiet(oc.check_bound, c, "planted", case(9.8, 9.76, 11.85, 2.14, 11.0, 10.7, 8, planted=True), 8)
    expect(len(c.failures) == 1, "a bound without its link line fails the check of the formula")
    c = g.Checker()
    g.quiet(oc.check_holds, c, "above", case(9.8, 9.76, 11.85, 2.14, 11.0, 10.7, 8, eff=1.03, lo=0.99, hi=1.05))
    g.quiet(oc.check_holds, c, "every turn above", case(9.8, 9.76, 11.85, 2.14, 11.0, 10.7, 8, eff=1.01, lo=1.004))
    expect(len(c.failures) == 2, "an efficiency above 1.02, and a lowest turn above 1, each fail")

    sweep = {oc.SWEEP.format(sc, st): case(9.8, 9.76, 11.85, 2.14, 11.0, 10.7, st, eff=0.91, lo=0.90, hi=0.92)
             for st in (8, 16) for sc in ("depth_first", "breadth_first")}
    c = g.Checker()
    g.quiet(oc.check_tight, c, sweep)
    expect(len(c.failures) == 1, "a sweep whose best efficiency at 8 and 16 streams is 0.91 fails as loose")
    sweep[oc.SWEEP.format("breadth_first", 16)].update(efficiency=0.96, efficiency_lo=0.95, efficiency_hi=0.97)
    c = g.Checker()
    g.quiet(oc.check_tight, c, sweep)
    expect(not c.failures and not c.undecided, "one case at 0.96 is tight enough")

    return expect.finish("ok: gpu_overlap's checks of the bound")


if __name__ == "__main__":
    sys.exit(main())
