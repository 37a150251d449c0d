#!/usr/bin/env python3
"""Derive the shipped expectations (tools/gpu_bench_tools/fleet/expectations.toml) from committed runs.

Each entry (GPU model, host link, node shape) names the committed runs of its kind in ENTRIES below; each of
its figures is derived from every run and every GPU of those runs that has the case:
- a minimum is 90% of the lowest figure, a 4-byte latency's maximum 115% of the highest, each rounded to
  two decimals away from the figures (a limit never sits closer to them than the rule says);
- a rate's maximum is the physical peak the runs' own device profile states: the host link's
  (profile.host_link_gbps; twice that for both directions), half the memory's for a device copy, which
  reads and writes each byte (profile.memory_gbps); a peer pair's is its NVLink peak (max_nvlink).
A run whose GPUs' profiles disagree on a peak is refused, as is an entry without a run of its kind.

usage: PYTHONPATH=tools python3 scripts/derive_expectations.py [--check] [--out FILE]
  writes the shipped file (or FILE); with --check, writes nothing and exits 1 where the file differs from what
  the committed runs give.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from pathlib import Path

from gpu_bench_tools.fleet.expectations import default_path, result_link
from gpu_bench_tools.fleet.gate import axes_without_device
from gpu_bench_tools.reading.facts import host_link_peak
from gpu_bench_tools.reading.load import load_file, parse_name
from gpu_bench_tools.reading.multigpu import ONE_GPU, SEVERAL_GPUS, gpu_fact, gpus_used, node_shape, topology

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "results"
MIN_SHARE, LATENCY_SHARE = Decimal("0.90"), Decimal("1.15")

# (case, counter, name, what bounds it from above): "link" the host link's peak, "link2" twice that,
# "memory" half the memory's peak, "runs" 115% of the highest figure.
HOST_FIGURES = (
    ("Transfer/dir:h2d/mem:pinned/bytes:268435456", "gbps", "h2d", "link"),
    ("Transfer/dir:d2h/mem:pinned/bytes:268435456", "gbps", "d2h", "link"),
    ("Transfer/dir:bidir/mem:pinned/bytes:268435456", "gbps", "bidir", "link2"),
    ("Transfer/dir:bidir/mem:pinned/bytes:268435456", "gbps_h2d", "bidir h2d", "link"),
    ("Transfer/dir:bidir/mem:pinned/bytes:268435456", "gbps_d2h", "bidir d2h", "link"),
    ("Transfer/dir:d2d/mem:device/cache:cold/bytes:268435456", "gbps", "d2d", "memory"),
    ("SmallCopy/dir:h2d/mem:pinned/bytes:4", "p50_us", "h2d 4 B latency", "runs"),
    ("SmallCopy/dir:d2h/mem:pinned/bytes:4", "p50_us", "d2h 4 B latency", "runs"),
)
# Peer pairs joined by NVLink: (case, counter, name, times the pair's NVLink peak per direction).
PEER_FIGURES = (
    ("Peer/src:*/dst:*/peer_access:on/dir:bidir/bytes:268435456", "gbps", "peer bidir", 2.0),
    ("Peer/src:*/dst:*/peer_access:on/dir:oneway/bytes:268435456", "gbps", "peer oneway", 1.0),
)
# One machine's gate and default runs, minutes apart, per kind (results/README.md says how each was made).
ENTRIES = (
    dict(name="NVIDIA H100 80GB HBM3", link="PCIe gen5 x16", node=ONE_GPU,
         about="H100 SXM5 80 GB on a PCIe 5.0 x16 host link, the only GPU of its host",
         runs=("gate/gate_h100.json", "sampled/default_h100.json.gz")),
    dict(name="NVIDIA H100 80GB HBM3", link="PCIe gen5 x16", node=SEVERAL_GPUS,
         about="H100 SXM5 80 GB on a PCIe 5.0 x16 host link, in a node of four joined by NVLink",
         runs=("multi/h100x4_b03a548/default_all_h100x4.json.gz", "multi/h100x4_b03a548/default_node_h100x4.json.gz")),
    dict(name="NVIDIA H200", link="PCIe gen5 x16", node=ONE_GPU,
         about="H200 SXM 141 GB on a PCIe 5.0 x16 host link, the only GPU of its host",
         runs=("gate/gate_h200.json", "sampled/default_h200.json.gz")),
    dict(name="NVIDIA H200", link="PCIe gen5 x16", node=SEVERAL_GPUS,
         about="H200 SXM 141 GB on a PCIe 5.0 x16 host link, in a node of two or four joined by NVLink",
         runs=("multi/h200x4_fc0a364/gate_all_h200x4.json", "multi/h200x4_fc0a364/default_node_h200x4.json.gz",
               "aa/h200x2_default_14dbca2/default_h200x2_run1.json.gz",
               "aa/h200x2_default_14dbca2/default_h200x2_run2.json.gz",
               "multi/peer_h200x2.json", "multi/peer_h200x4.json")),
)

HEADER = """\
# What a healthy node's `gpu_bench --preset=gate` run must reach, per GPU model, host link and node shape.
# gpu-bench-gate and gpu-bench-export read this file unless given --expect FILE (docs/fleet.md).
# Written by scripts/derive_expectations.py from the committed runs each entry names: derive it again, do
# not edit the numbers by hand.
#
# One [[gpu]] per model, link and node: `name` is gpu.name as gpu_bench writes it, `link` the host link the
# GPU and its slot can train to ("PCIe gen{gpu.pcie_gen_max} x{gpu.pcie_width_max}", or profile.host_link
# where that is not PCIe, such as "NVLink-C2C"), `node` the node's shape: "one GPU" or "several GPUs"
# (gpu.count, whichever GPUs the run measured; an entry without it holds for a node of either shape).
# The host's side of a copy differs between the two: a pinned 4-byte copy takes nearly twice as long on a
# node of several GPUs as on a host of one. A link trained below its maximum is judged against what it
# should reach, so it shows as a slow figure.
# One [[gpu.figure]] per figure: the case (a `*` value matches any), the counter, a short name for
# messages, `min` and/or `max` in the counter's own unit, and `source`: where the numbers come from.
# `link` on a figure limits it to GPU pairs joined by that link (topology.i-j.link). `max_nvlink` on a
# pair's figure holds it to that many times the pair's NVLink peak per direction as the run's own context
# states it (topology.i-j.nvlink_gbps: NVML's link count and speed): 1 for one direction, 2 for both.
#
# How the numbers are derived, from every GPU of the runs an entry names (paths under results/):
# - A minimum is 90% of the lowest figure and a latency maximum 115% of the highest, rounded to two
#   decimals away from the figures: the gate and default runs of one machine, minutes apart, agree within
#   2% on rates and 6% on 4-byte latency (which comes in steps of 32 ns), yet a figure 20% worse fails.
# - A maximum on a rate is the physical peak the runs' device profile states: the host link's
#   (profile.host_link_gbps: PCIe 5.0 x16 carries 32 GT/s x 16 lanes x 128/130 / 8 = 63.02 GB/s per
#   direction), half the memory's for a device copy, which reads and writes each byte
#   (profile.memory_gbps), a peer copy's its pair's NVLinks (max_nvlink). A figure beyond it is a broken
#   measurement.
"""


def _lenient(x: Decimal, up: bool) -> Decimal:
    return x.quantize(Decimal("0.01"), rounding=ROUND_CEILING if up else ROUND_FLOOR)


def _matches(pattern, axes) -> bool:
    return len(axes) == len(pattern) and all(k == pk and (pv == "*" or v == pv)
                                             for (k, v), (pk, pv) in zip(axes, pattern))


class Runs:
    """The runs of one entry, read once."""

    def __init__(self, paths: tuple[str, ...]):
        self.files = [(p, load_file(RESULTS / p, require_figures=False)) for p in paths]

    def figures(self, case: str, metric: str, nvlink_only: bool = False) -> list[tuple[float, str]]:
        """(figure, run) of every GPU (or pair) of every run that has the case."""
        name = parse_name(case)
        out = []
        for path, f in self.files:
            links = topology(f) if nvlink_only else {}
            for c in f.cases.values():
                if not c.ok or c.family != name.family or not _matches(name.axes, axes_without_device(c)):
                    continue
                if nvlink_only and links.get((int(c.axis("src")), int(c.axis("dst"))), {}).get("link") != "nvlink":
                    continue
                v = c.center(metric)
                if v is not None:
                    out.append((v, path))
        return out

    def peak(self, what: str, paths: set[str]) -> tuple[Decimal, str]:
        """The host link's or memory's peak of every GPU of these runs, which must agree, with its fact's name."""
        found = set()
        for path, f in self.files:
            for gpu in gpus_used(f) if path in paths else ():
                if what == "link":
                    p = host_link_peak(f, gpu)
                    found.add(repr(p[0]) if p else None)
                else:
                    found.add(gpu_fact(f, gpu, "profile.memory_gbps"))
        key = "profile.host_link_gbps" if what == "link" else "profile.memory_gbps"
        if len(found) != 1 or None in found:
            raise SystemExit(f"derive_expectations: the runs state {key} as {sorted(map(str, found))}: not one peak")
        return Decimal(found.pop()), key

    def check_kind(self, e: dict) -> None:
        for path, f in self.files:
            for gpu in gpus_used(f):
                kind = (gpu_fact(f, gpu, "name"), result_link(f, gpu), node_shape(f))
                if kind != (e["name"], e["link"], e["node"]):
                    raise SystemExit(f"derive_expectations: {path} GPU {gpu} is {kind}, not the entry's "
                                     f"{(e['name'], e['link'], e['node'])}")


def _list(values: list[tuple[float, str]], lowest: bool, digits: int) -> tuple[Decimal, str, str]:
    """The extreme figure, as a number and as shown, and '(its run; another run ITS EXTREME; ...)'."""
    per_run: dict[str, float] = {}
    for v, path in values:
        per_run[path] = min(v, per_run.get(path, v)) if lowest else max(v, per_run.get(path, v))
    order = sorted(per_run, key=lambda p: per_run[p], reverse=not lowest)
    first = per_run[order[0]]
    others = "".join(f"; {p} {per_run[p]:.{digits}f}" for p in order[1:])
    return Decimal(repr(first)), f"{first:.{digits}f}", f"({order[0]}{others})"


def _number(x: Decimal) -> str:
    return format(x.normalize(), "f")


def derive() -> str:
    out = [HEADER, "format = 1\n"]
    for e in ENTRIES:
        runs = Runs(e["runs"])
        runs.check_kind(e)
        measured = ", ".join(p.rsplit("/", 1)[-1] for p in e["runs"])
        out.append(f'[[gpu]]\nname = "{e["name"]}"\nlink = "{e["link"]}"\nnode = "{e["node"]}"\n'
                   f'about = "{e["about"]}; measured: {measured}"\n')
        for case, metric, name, bound in HOST_FIGURES:
            values = runs.figures(case, metric)
            if not values:
                raise SystemExit(f"derive_expectations: no run of {e['name']} ({e['node']}) has {case} {metric}")
            lines = [f'  case = "{case}"', f'  metric = "{metric}"', f'  name = "{name}"']
            if bound == "runs":
                top, shown, where = _list(values, lowest=False, digits=3)
                lines.append(f"  max = {_number(_lenient(top * LATENCY_SHARE, up=True))}")
                lines.append(f'  source = "max: 115% of {shown} us {where}"')
            else:
                low, shown, where = _list(values, lowest=True, digits=2)
                lines.append(f"  min = {_number(_lenient(low * MIN_SHARE, up=False))}")
                peak, key = runs.peak("memory" if bound == "memory" else "link", {p for _, p in values})
                if bound == "memory":
                    top, said = peak / 2, f"half of {key} {_number(peak)}"
                else:
                    top = peak * (2 if bound == "link2" else 1)
                    said = f"{key} {_number(peak)}" + (" both ways" if bound == "link2" else "")
                lines.append(f"  max = {_number(_lenient(top, up=True))}")
                lines.append(f'  source = "min: 90% of {shown} {where}; max: {said}"')
            out.append("  [[gpu.figure]]\n" + "\n".join(lines) + "\n")
        for case, metric, name, times in PEER_FIGURES:
            values = runs.figures(case, metric, nvlink_only=True)
            if not values:
                continue
            low, shown, where = _list(values, lowest=True, digits=2)
            both = " both ways" if times == 2 else ""
            out.append("  [[gpu.figure]]\n" + "\n".join([
                f'  case = "{case}"', f'  metric = "{metric}"', f'  name = "{name}"', '  link = "nvlink"',
                f"  min = {_number(_lenient(low * MIN_SHARE, up=False))}", f"  max_nvlink = {times}",
                f'  source = "min: 90% of {shown}, the slowest pair\'s median {where}; max: the pair\'s NVLink '
                f'peak{both}"']) + "\n")
    return "\n".join(out)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--check", action="store_true", help="exit 1 where the file differs from what the runs give")
    p.add_argument("--out", default=str(default_path()), help="the file to write or check (default: the shipped one)")
    args = p.parse_args(argv)
    text = derive()
    target = Path(args.out)
    if args.check:
        have = target.read_text() if target.exists() else ""
        if have != text:
            sys.stdout.writelines(difflib.unified_diff(have.splitlines(True), text.splitlines(True), str(target),
                                                       "derived from the committed runs"))
            print(f"derive_expectations: {target} is not what the committed runs give", file=sys.stderr)
            return 1
        return 0
    target.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
