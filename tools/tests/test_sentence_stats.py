"""scripts/sentence_stats.py counts words per sentence in Markdown prose, and the README and the reference
pages in docs/ keep to short ones."""

import functools
import importlib.util
import subprocess
import sys

from conftest import REPO

SCRIPT = REPO / "scripts" / "sentence_stats.py"

# Six sentences of 5, 7, 6, 2, 3 and 8 words: 31 words, 5.2 a sentence. The heading, the fenced and the
# indented code and the table add none; each code span is one word; "e.g." ends no sentence; a list item
# ends one without a full stop.
SAMPLE = """\
# A heading long enough to move the average if it were counted

First sentence has five words. Second one, with `a code span here`, has seven words!

```sh
echo this is code. It has many words that must not count at all.
```

    indented code. Not counted either, however many words it holds.

| a | table |
| --- | --- |
| cells are not counted. | at all |

- a list item without a stop
- another item. With two sentences

See [the docs page](docs/page.md), e.g. `--flag`, for more.
"""


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=60)


def test_sample_counts(tmp_path):
    sample = tmp_path / "sample.md"
    sample.write_text(SAMPLE)
    p = run(str(sample))
    assert p.returncode == 0, p.stderr
    assert p.stdout == f"{sample}: 6 sentences, 31 words, 5.2 words/sentence\n"
    p = run(str(sample), "--max", "5")
    assert p.returncode == 1
    assert p.stdout == f"{sample}: 6 sentences, 31 words, 5.2 words/sentence\n"


def test_unreadable_file(tmp_path):
    p = run(str(tmp_path / "missing.md"))
    assert p.returncode == 2
    assert p.stdout == ""
    assert len(p.stderr.splitlines()) == 1 and "cannot read" in p.stderr

# Reference pages still above the script's limit while they are being rewritten. Each leaves this list once
# it keeps to the limit; the list is then empty and every reference page is held to it.
PAGES_NOT_YET_SHORT: set[str] = set()


def reference_pages():
    """The README and docs/*.md; the experiment logs under docs/notes/ are not reference pages."""
    return ["README.md"] + sorted(f"docs/{p.name}" for p in (REPO / "docs").glob("*.md"))


@functools.cache
def sentence_stats():
    spec = importlib.util.spec_from_file_location("sentence_stats", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def within_limit(page):
    """Whether the page averages at most the script's limit, and its average as the script counts it."""
    stats = sentence_stats()
    lengths = [n for _, n in stats.sentence_lengths((REPO / page).read_text(encoding="utf-8"))]
    average = stats.average_words(lengths)
    return average <= stats.DEFAULT_MAX, f"{page}: {average:.1f} words/sentence (limit {stats.DEFAULT_MAX:g})"


def test_reference_pages_keep_to_short_sentences():
    too_long = []
    for page in reference_pages():
        short, line = within_limit(page)
        if not short and page not in PAGES_NOT_YET_SHORT:
            too_long.append(line)
    assert not too_long, "reference pages above the limit of words per sentence: " + "; ".join(too_long)


def test_pages_not_yet_short_are_still_long():
    # An exemption outlives its reason once its page is short or gone: it must then leave the list.
    missing = sorted(PAGES_NOT_YET_SHORT - set(reference_pages()))
    assert not missing, f"PAGES_NOT_YET_SHORT names pages that are not reference pages: {missing}"
    short = [line for short, line in map(within_limit, sorted(PAGES_NOT_YET_SHORT)) if short]
    assert not short, "pages within the limit: take them out of PAGES_NOT_YET_SHORT: " + "; ".join(short)
