"""gpu-bench-report: one self-contained HTML page for a procurement or nightly review."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Sequence

from .common import EXIT_OK, ArgumentParser, run
from ..reading.load import BenchmarkFile, InputError, Timeline, load_any, load_timeline
from ..report.page import build_report

PROG = "gpu-bench-report"


def build_parser() -> ArgumentParser:
    p = ArgumentParser(prog=PROG, description="Write one HTML page with the machines side by side, the headline "
                       "numbers per family, the comparison against the first file and the plots inline.")
    p.add_argument("files", nargs="*", metavar="FILE.json", help="gpu_bench JSON results (the first is the baseline)")
    p.add_argument("--timeline", action="append", default=[], metavar="TRACE.json",
                   help="a Chrome trace written by gpu_bench --timeline (may repeat)")
    p.add_argument("-o", "--out", required=True, metavar="REPORT.html")
    p.add_argument("--title", help="page title (default: the GPUs and drivers compared)")
    p.add_argument("--no-plots", action="store_true", help="leave the figures out (a much smaller page)")
    return p


def _main(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    if not args.files and not args.timeline:
        raise InputError("give at least one JSON file")
    loaded = [load_any(p) for p in args.files] + [load_timeline(p) for p in args.timeline]
    files = [x for x in loaded if isinstance(x, BenchmarkFile)]
    timelines = [x for x in loaded if isinstance(x, Timeline)]
    page = build_report(files, timelines, title=args.title, with_plots=not args.no_plots)
    out = Path(args.out)
    if out.is_dir():
        raise InputError(f"{out}: is a directory; give a file name for the report")
    tmp = out.with_name(out.name + ".part")
    tmp.write_text(page, encoding="utf-8")
    tmp.replace(out)
    print(f"wrote {out} ({len(page) / 1024:.0f} KiB)")
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    return run(PROG, _main, argv)


if __name__ == "__main__":
    sys.exit(main())
