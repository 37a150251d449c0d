"""scripts/aa_fewer_rounds.py judges a pair's cases on fewer of their rounds: made-up runs whose link rounds
(positions 1 and 3) agree while their full rounds spread, and the committed pair at 2631bb0."""

import gzip
import json
import re
import subprocess
import sys

from conftest import REPO

SCRIPT = REPO / "scripts" / "aa_fewer_rounds.py"
PAIR = [REPO / "results/aa/h200_default_2631bb0" / f"default_h200_run{i}.json.gz" for i in (1, 2)]


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True)


def medians(out):
    return [float(m) for m in re.findall(r"detectable_pct median ([0-9.]+)%", out)]


def write_run(path, spread):
    """Six cases of five rounds: rounds 0, 2 and 4 spread by `spread`, rounds 1 and 3 at the middle."""
    cases = []
    for k in range(6):
        base = 1e-3 * (1 + k)
        times = [base * (1 - spread), base, base * (1 + spread), base, base * (1 + spread / 2)]
        cases.append({"name": f"Copy/mem:pinned/bytes:{4 ** k}/manual_time", "run_type": "iteration",
                      "iterations": 1, "real_time": base * 1e6, "cpu_time": base * 1e6, "time_unit": "us",
                      "round_times_s": times})
    with gzip.open(path, "wt") as f:
        json.dump({"context": {}, "benchmarks": cases}, f)


def test_rounds_that_agree_narrow_what_the_pair_can_detect(tmp_path):
    runs = [tmp_path / "a.json.gz", tmp_path / "b.json.gz"]
    write_run(runs[0], 0.04)
    write_run(runs[1], 0.05)
    r = run("--cases", "^Copy/", "--rounds", "5", "--keep", "0,2,4", *runs)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("6 cases")
    five, three = medians(r.stdout)
    assert five < three


def test_the_committed_pair_reads_as_its_note_says():
    # docs/methodology.md, "More rounds for the host-driven cases": 7.63% with five rounds, 12.76% with three.
    r = run("--cases", "^Transfer/.*mem:pageable/", "--rounds", "5", "--keep", "0,2,4", *PAIR)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("39 cases")
    assert medians(r.stdout) == [7.63, 12.76]


def test_bad_input_gets_one_line_and_status_2(tmp_path):
    r = run("--cases", "x", "--rounds", "5", "--keep", "0,9", *PAIR)
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    r = run("--cases", "^NoSuchFamily/", "--rounds", "5", "--keep", "0,2,4", *PAIR)
    assert r.returncode == 2 and "no case matches" in r.stderr
    r = run("--cases", "x", "--rounds", "5", "--keep", "0,2", tmp_path / "missing.json", tmp_path / "missing.json")
    assert r.returncode == 2 and "cannot read" in r.stderr
