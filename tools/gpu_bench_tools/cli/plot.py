"""gpu-bench-plot: PNG and SVG figures from gpu_bench JSON and --timeline traces."""

from __future__ import annotations

import sys
from typing import Sequence

from .. import plot as plot_mod
from .common import EXIT_OK, ArgumentParser, positive_int, run
from ..reading.load import BenchmarkFile, InputError, load_any, load_timeline
from ..reading.multigpu import first_gpu_facts_note

PROG = "gpu-bench-plot"


def build_parser() -> ArgumentParser:
    p = ArgumentParser(
        prog=PROG,
        description="Draw bandwidth, peer-matrix, overlap, sync-placement, small-copy and timeline figures; "
        "one line or bar per input file (and GPU, for --device=all runs), labelled by GPU and driver.",
    )
    p.add_argument("files", nargs="*", metavar="FILE.json",
                   help="gpu_bench JSON results; --timeline traces are recognised by their content")
    p.add_argument("--timeline", action="append", default=[], metavar="TRACE.json",
                   help="a Chrome trace written by gpu_bench --timeline (may repeat)")
    p.add_argument("-o", "--out", required=True, metavar="DIR", help="folder for the figures (created if missing)")
    p.add_argument("--format", default="png,svg", help="comma-separated: png, svg, pdf (default png,svg)")
    p.add_argument("--kind", action="append", metavar="KIND",
                   help="only this plot kind (may repeat): a family's kind (transfer, small_copy, ...), "
                   "peer_matrix, peer_latency, all_host, timeline")
    p.add_argument("--one-per-kind", action="store_true",
                   help="one representative figure per kind, named KIND.png (for documentation)")
    p.add_argument("--dpi", type=positive_int, default=110, help="pixels per inch of PNG figures (default 110)")
    return p


def _main(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    if not args.files and not args.timeline:
        raise InputError("give at least one JSON file or --timeline trace")
    formats = tuple(x.strip().lower() for x in args.format.split(",") if x.strip())
    bad = [x for x in formats if x not in ("png", "svg", "pdf")]
    if bad or not formats:
        raise InputError(f"--format: unknown format {', '.join(bad) or '(none)'}; use png, svg or pdf")
    inputs = [load_any(p) for p in args.files] + [load_timeline(p) for p in args.timeline]
    note = first_gpu_facts_note([f for f in inputs if isinstance(f, BenchmarkFile)])
    if note:
        print(f"{PROG}: note: {note}", file=sys.stderr)
    plots = plot_mod.make_plots(inputs, args.out, formats=formats, dpi=args.dpi, kinds=args.kind,
                                one_per_kind=args.one_per_kind)
    if not plots:
        raise InputError("nothing to draw: no case of a plotted family (or no timeline) in the inputs")
    for p in plots:
        print(f"{p.kind:15} {', '.join(p.paths)}")
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    return run(PROG, _main, argv)


if __name__ == "__main__":
    sys.exit(main())
