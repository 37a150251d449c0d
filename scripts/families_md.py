#!/usr/bin/env python3
"""docs/families.md's reference blocks, written from the families' own descriptors.

Each family describes itself in gpu_bench (its name pattern, axes and counters), and `gpu_bench --help`
prints that text. Under each family's heading, docs/families.md holds that text in a block between two
HTML comments; the prose around the blocks is written by hand. This script rewrites the blocks from
`gpu_bench --help`, or with --check says which block differs.

usage: families_md.py [--check] GPU_BENCH [FAMILIES_MD]   (FAMILIES_MD default: docs/families.md)
Exit status: 0 when the blocks match (or were written), 1 when --check finds one that differs or a family
with no block, 2 when gpu_bench or the file cannot be read.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

BEGIN = "<!-- from gpu_bench --help: {name} (scripts/families_md.py writes this block) -->"
END = "<!-- end of {name} -->"


def block_pattern(begin: str) -> re.Pattern:
    """A block whose first comment is `begin` with any {name} in it, up to that name's end comment."""
    head = re.escape(begin).replace(re.escape("{name}"), r"(\w+)")
    return re.compile(head + r"\n.*?<!-- end of \1 -->\n", re.S)


BLOCK = block_pattern(BEGIN)
FAMILY_LINE = re.compile(r"^([A-Z][A-Za-z]+): ")


def help_sections(help_text: str) -> dict[str, str]:
    """Each family's section of --help, by name: its summary line and its indented lines."""
    if "\nfamilies:\n" not in help_text:
        raise ValueError("gpu_bench --help has no 'families:' section")
    body = help_text.split("\nfamilies:\n", 1)[1]
    sections: dict[str, list[str]] = {}
    name = None
    for line in body.splitlines():
        m = FAMILY_LINE.match(line)
        if m:
            name = m.group(1)
            sections[name] = [line]
        elif name and (line.startswith(" ") or not line):
            sections[name].append(line)
        else:
            name = None  # the text after the families (exit status)
    return {n: "\n".join(lines).rstrip() + "\n" for n, lines in sections.items()}


def fenced(text: str) -> str:
    return f"```text\n{text}```\n"


def block(name: str, text: str, begin: str = BEGIN, wrap=fenced) -> str:
    return f"{begin.format(name=name)}\n{wrap(text)}{END.format(name=name)}\n"


def rewrite(doc: str, sections: dict[str, str], begin: str = BEGIN, wrap=fenced,
            source: str = "gpu_bench --help") -> tuple[str, list[str]]:
    """The document with every block rewritten, and what is wrong with it: a block that differed, a section
    of `source` with no block, a block of no section."""
    problems: list[str] = []
    pattern = block_pattern(begin)

    def replace(m: re.Match) -> str:
        name = m.group(1)
        if name not in sections:
            problems.append(f"a block of {name}, which {source} does not name")
            return m.group(0)
        new = block(name, sections[name], begin, wrap)
        if new != m.group(0):
            problems.append(f"{name}'s block differs from {source}")
        return new

    out = pattern.sub(replace, doc)
    present = set(pattern.findall(doc))
    problems += [f"{n} has no block (add the two comments under its heading)" for n in sections if n not in present]
    return out, problems


def run(argv: list[str] | None, description: str, flag: str, default_doc: Path, read_sections, begin: str,
        wrap, script: str) -> int:
    """A script's whole run: `gpu_bench flag` read into sections, the blocks of a document rewritten or
    (--check) compared with them. Both scripts that write blocks from gpu_bench run this."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--check", action="store_true", help="change nothing; exit 1 where a block differs")
    p.add_argument("gpu_bench")
    p.add_argument("doc", nargs="?", default=str(default_doc))
    a = p.parse_args(argv)
    try:
        r = subprocess.run([a.gpu_bench, flag], capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            raise ValueError(f"{a.gpu_bench} {flag} exited with {r.returncode}: {r.stderr.strip()}")
        sections = read_sections(r.stdout)
        doc = Path(a.doc).read_text()
    except (OSError, subprocess.SubprocessError, ValueError) as e:
        print(f"{script}: {e}", file=sys.stderr)
        return 2
    out, problems = rewrite(doc, sections, begin, wrap, f"gpu_bench {flag}")
    missing = [q for q in problems if "has no block" in q or "does not name" in q]
    if a.check:
        for q in problems:
            print(f"{script}: {a.doc}: {q}; run scripts/{script}.py {a.gpu_bench}", file=sys.stderr)
        return 1 if problems else 0
    if out != doc:
        Path(a.doc).write_text(out)
    for q in missing:
        print(f"{script}: {a.doc}: {q}", file=sys.stderr)
    return 1 if missing else 0


def main(argv: list[str] | None = None) -> int:
    return run(argv, __doc__.split("\n\n")[0], "--help", Path(__file__).resolve().parent.parent / "docs" / "families.md",
               help_sections, BEGIN, fenced, "families_md")


if __name__ == "__main__":
    sys.exit(main())
