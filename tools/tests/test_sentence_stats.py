"""scripts/sentence_stats.py counts words per sentence in Markdown prose, and README.md keeps to short ones."""

import re
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


def test_readme_keeps_to_short_sentences():
    p = run(str(REPO / "README.md"))
    average = float(re.search(r"([\d.]+) words/sentence", p.stdout).group(1))
    assert p.returncode == 0 and average <= 22, p.stdout
