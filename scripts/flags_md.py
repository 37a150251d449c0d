#!/usr/bin/env python3
"""README.md's flag table, written from gpu_bench's own table of flags.

Each flag is declared once in gpu_bench (harness/run/flags.cpp), with a one-line summary, and
`gpu_bench --flags_markdown` prints the Markdown table of those summaries. README.md holds that table in a
block between two HTML comments; the prose around it is written by hand. This script rewrites the block from
`gpu_bench --flags_markdown`, or with --check says that it differs.

usage: flags_md.py [--check] GPU_BENCH [README_MD]   (README_MD default: README.md)
Exit status: 0 when the block matches (or was written), 1 when --check finds it differs or README_MD has no
block, 2 when gpu_bench or the file cannot be read.
"""

from __future__ import annotations

import sys
from pathlib import Path

import families_md

BEGIN = "<!-- from gpu_bench --flags_markdown: {name} (scripts/flags_md.py writes this block) -->"


def table(text: str) -> str:
    """The table between blank lines, so that Markdown reads it as a table and not as part of the comments."""
    return f"\n{text}\n"


def main(argv: list[str] | None = None) -> int:
    return families_md.run(argv, __doc__.split("\n\n")[0], "--flags_markdown",
                           Path(__file__).resolve().parent.parent / "README.md", lambda out: {"flags": out}, BEGIN,
                           table, "flags_md")


if __name__ == "__main__":
    sys.exit(main())
