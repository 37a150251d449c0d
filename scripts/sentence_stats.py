#!/usr/bin/env python3
"""Words per sentence in the prose of Markdown files, so the docs keep to short sentences."""

from __future__ import annotations

import argparse
import re
import statistics
import sys
from pathlib import Path

DEFAULT_MAX = 22.0

RULES = """\
What counts as prose:
  - Paragraphs, block quotes and list items. Each list item ends a sentence, with or
    without a full stop, and so does each paragraph.
  - A sentence ends at '.', '!' or '?' followed by a space (after any closing quote or
    bracket); 'e.g.', 'i.e.', 'cf.' and 'vs.' do not end one.
  - An inline code span counts as one word, whatever it holds. A link counts its text,
    not its address.
  - A word is a run of non-blank characters holding a letter or a digit: dashes,
    arrows and other lone symbols are not words.

What is left out:
  - Fenced code blocks (``` or ~~~), indented code blocks (four spaces after a blank
    line, outside a list), headings, horizontal rules and HTML comments.
  - Tables, whole: their cells are reference entries, not sentences, and counting each
    short cell as a sentence would hide long prose behind them.

Exit status: 0 when every file's average is at most --max, 1 when one is above it,
2 when a file cannot be read."""

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
HEADING = re.compile(r"^ {0,3}#{1,6}(\s|$)")
SETEXT_UNDERLINE = re.compile(r"^ {0,3}(=+|-+)\s*$")
RULE = re.compile(r"^ {0,3}([-*_])( *\1){2,} *$")
TABLE_SEPARATOR = re.compile(r"^ {0,3}\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")
LIST_ITEM = re.compile(r"^\s*([-*+]|\d{1,9}[.)])\s+")
QUOTE = re.compile(r"^\s*>\s?")
CODE_SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)")
IMAGE_OR_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)
HTML_TAG = re.compile(r"</?[A-Za-z][^>]*>")
# The end of a sentence: a full stop, '!' or '?', any closing quote, bracket or emphasis, then a space.
SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]*_]*\s+")
NOT_AN_END = ("e.g.", "i.e.", "cf.", "vs.")
# A code span stands in the text as one token of its own, \x00N\x00, until it is shown again.
SPAN_TOKEN = re.compile(r"\x00(\d+)\x00")


def prose_blocks(text: str) -> list[str]:
    """The file's prose as blocks, a paragraph or a list item each; code, headings and tables left out."""
    text = HTML_COMMENT.sub(" ", text)
    blocks: list[str] = []
    current: list[str] = []
    fence: str | None = None
    in_list = in_table = False
    previous_blank = True

    def close() -> None:
        if current:
            blocks.append(" ".join(current))
            current.clear()

    for line in text.splitlines():
        if fence is not None:
            marker = FENCE.match(line)
            if marker and marker.group(1)[0] == fence[0] and len(marker.group(1)) >= len(fence) \
                    and not line.strip().strip(fence[0]):
                fence = None
            continue
        if not line.strip():
            close()
            in_table = False
            previous_blank = True
            continue
        indented = line.startswith(("    ", "\t"))
        if indented and previous_blank and not in_list:
            continue  # an indented code block
        previous_blank = False
        marker = FENCE.match(line)
        if marker:
            close()
            fence = marker.group(1)
            continue
        if in_table or line.lstrip().startswith("|"):
            close()
            in_table = True
            continue
        if "|" in line and TABLE_SEPARATOR.match(line):
            current.clear()  # the table's header row
            in_table = True
            continue
        if current and SETEXT_UNDERLINE.match(line):
            current.clear()  # the lines above were a heading
            continue
        if HEADING.match(line) or RULE.match(line):
            close()
            in_list = False
            continue
        line = QUOTE.sub("", line)
        item = LIST_ITEM.match(line)
        if item:
            close()
            in_list = True
            line = line[item.end():]
        elif not indented and not current:
            in_list = False
        current.append(line.strip())
    close()
    return blocks


def sentences(block: str) -> list[tuple[str, int]]:
    """Each sentence of one paragraph or list item, as it reads, with its number of words."""
    spans: list[str] = []

    def hold(match: re.Match[str]) -> str:
        spans.append(match.group(0))
        return f"\x00{len(spans) - 1}\x00"

    block = CODE_SPAN.sub(hold, block)
    block = IMAGE_OR_LINK.sub(r"\1", block)
    block = HTML_TAG.sub(" ", block)
    found: list[tuple[str, int]] = []
    start = 0
    for end in [m for m in SENTENCE_END.finditer(block)] + [None]:
        piece = block[start:end.start() if end else len(block)]
        tokens = piece.split()
        if end and tokens and tokens[-1].lstrip("(\"'").lower() in NOT_AN_END:
            continue
        words = sum(1 for token in tokens if SPAN_TOKEN.search(token) or re.search(r"[^\W_]", token))
        if words:
            found.append((SPAN_TOKEN.sub(lambda m: spans[int(m.group(1))], piece.strip()), words))
        if end:
            start = end.end()
    return found


def sentence_lengths(text: str) -> list[tuple[str, int]]:
    return [s for block in prose_blocks(text) for s in sentences(block)]


def average_words(lengths: list[int]) -> float:
    """Words per sentence over the given sentence lengths; 0 where there is no prose."""
    return statistics.fmean(lengths) if lengths else 0.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="sentence_stats.py",
        description="Print the average number of words per sentence in each Markdown file's prose, "
        "one line a file: 'FILE: N sentences, M words, AVG words/sentence'.",
        epilog=RULES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", metavar="FILE.md")
    parser.add_argument("--max", type=float, default=DEFAULT_MAX, metavar="WORDS",
                        help=f"exit 1 when a file's average is above this (default {DEFAULT_MAX:g})")
    parser.add_argument("--longest", type=int, default=0, metavar="K",
                        help="also print each file's K longest sentences, with their words")
    args = parser.parse_args(argv)

    status = 0
    for name in args.files:
        try:
            text = Path(name).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            print(f"sentence_stats.py: cannot read {name}: {e}", file=sys.stderr)
            return 2
        found = sentence_lengths(text)
        lengths = [n for _, n in found]
        average = average_words(lengths)
        print(f"{name}: {len(lengths)} sentences, {sum(lengths)} words, {average:.1f} words/sentence")
        for sentence, n in sorted(found, key=lambda s: -s[1])[:args.longest]:
            print(f"  {n:4d}  {sentence}")
        if average > args.max:
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
