"""history check against each case's own nights: a small step in a steady case is found on its night, identical
and A/A nights give none, --threshold is a floor, and `replay` tells both from committed runs."""

import glob
import re
from pathlib import Path

import pytest

import synth
from conftest import aa_set, run_cli
from gpu_bench_tools.cli import history as cli_history

FAMS = ("Transfer",)
# Transfer's pinned copies of 1 MiB and more in synth's sizes (4 MiB, 32 MiB, 256 MiB), every direction.
STEADY = r"Transfer/dir:(h2d|d2h|bidir)/mem:pinned/bytes:(4194304|33554432|268435456)$"
AA_SETS = ("h100_broad_d0460aa", "h100_rounds_7c29fd0", "h200_rounds_b010260")


def check(db, capsys, *extra):
    return run_cli(cli_history.main, ["--db", str(db), "check", *extra], capsys)


def ingest(db, paths, capsys):
    code, _, err = run_cli(cli_history.main, ["--db", str(db), "ingest", *map(str, paths)], capsys)
    assert code == 0, err


def night(tmp_path, n, **kw):
    kw.setdefault("families", FAMS)
    kw.setdefault("seed", 700 + n)
    doc = synth.make_run(date=f"2025-04-{n:02d}T02:00:00+00:00", **kw)
    return synth.write(Path(tmp_path) / f"n{n:02d}.json", doc)


def flagged(out, tag="REGRESSION"):
    return sorted(ln.split()[1] for ln in out.splitlines() if ln.strip().startswith(tag))


def test_a_2_percent_step_in_steady_cases_is_found_on_its_night(tmp_path, capsys):
    steady = [c for c in synth_cases() if re.search(STEADY, c)]
    paths = [night(tmp_path, n) for n in range(1, 7)]
    paths.append(night(tmp_path, 7, slow={STEADY: 1 / 1.02}))
    ingest(tmp_path / "h.sqlite", paths, capsys)
    code, out, err = check(tmp_path / "h.sqlite", capsys)
    assert code == 1, out
    # Each night's figure is the median of five repetitions 0.4% apart: nights agree to about 0.2%.
    assert len(steady) == 9 and set(flagged(out)) <= set(steady) and len(flagged(out)) >= 8, out
    assert "improvement" not in out.split("cases checked")[0]
    assert all("in the newest run" in ln for ln in out.splitlines() if "since" in ln or "newest run;" in ln)
    assert "2.0% worse" in out and "threshold 1%, alpha 0.001" in out
    assert "regression(s) or newly failing case(s) beyond 1%" in err


def test_the_step_keeps_failing_the_check_the_night_after(tmp_path, capsys):
    paths = [night(tmp_path, n) for n in range(1, 7)]
    paths += [night(tmp_path, n, slow={STEADY: 1 / 1.02}) for n in (7, 8)]
    ingest(tmp_path / "h.sqlite", paths, capsys)
    code, out, _ = check(tmp_path / "h.sqlite", capsys)
    assert code == 1 and len(flagged(out)) >= 8
    assert out.count("since 2025-04-07T02:00:00+00:00 (1 run(s) ago)") == len(flagged(out))


def synth_cases():
    doc = synth.make_run(families=FAMS)
    return sorted({e["run_name"].removesuffix("/manual_time") for e in doc["benchmarks"]})


def test_identical_nights_give_no_finding_and_the_floor_decides_what_they_see(tmp_path, capsys):
    """Nights with the very same figures have no spread at all: the floor alone says what change counts."""
    same = [night(tmp_path, n, seed=1) for n in range(1, 7)]
    ingest(tmp_path / "same.sqlite", same, capsys)
    code, out, _ = check(tmp_path / "same.sqlite", capsys)
    assert code == 0 and "0 regression(s), 0 improvement(s), 0 newly failing" in out
    pinned_1g = r"Transfer/dir:h2d/mem:pinned/bytes:268435456$"
    ingest(tmp_path / "same.sqlite", [night(tmp_path, 7, seed=1, slow={pinned_1g: 1 / 1.005})], capsys)
    code, out, _ = check(tmp_path / "same.sqlite", capsys)
    assert code == 0 and "0 regression(s)" in out  # 0.5%: under the floor
    code, out, _ = check(tmp_path / "same.sqlite", capsys, "--threshold", "0.4")
    assert code == 1 and flagged(out) == ["Transfer/dir:h2d/mem:pinned/bytes:268435456"]
    assert "0.5% worse" in out and "threshold 0.4%" in out


@pytest.mark.parametrize("bad", ["0", "-1", "nan", "inf", "five", ""])
def test_threshold_must_be_a_positive_percentage(tmp_path, capsys, bad):
    ingest(tmp_path / "h.sqlite", [night(tmp_path, n) for n in range(1, 4)], capsys)
    code, _, err = check(tmp_path / "h.sqlite", capsys, "--threshold", bad)
    assert code == 2 and "Traceback" not in err
    assert "argument --threshold" in err and len([ln for ln in err.splitlines() if "error" in ln]) == 1


def values_night(tmp_path, n, values, noise_pct=None):
    """A night of one case per entry of `values` (GB/s, one repetition each), with the given noise_pct."""
    doc = synth.doc_from_values({name: [v] for name, v in values.items()},
                                date=f"2025-05-{n:02d}T02:00:00+00:00")
    for e in doc["benchmarks"]:
        if noise_pct is not None:
            e["noise_pct"] = noise_pct[e["run_name"].removesuffix("/manual_time")]
    return synth.write(Path(tmp_path) / f"v{n:02d}.json", doc)


CASE = "Transfer/dir:h2d/mem:pinned/bytes:1048576"


def test_a_night_knows_its_own_noise(tmp_path, capsys):
    """With few nights, their own noise_pct is what the interval rests on; a night whose own noise is far
    larger than the nights' before it widens its own interval."""
    def run(noise_before, noise_newest, newest=48.5, n_before=2):
        db = tmp_path / f"db_{noise_before}_{noise_newest}_{n_before}.sqlite"
        paths = [values_night(tmp_path, n, {CASE: 50.0 * (1 + 0.001 * (-1) ** n)}, {CASE: noise_before})
                 for n in range(1, n_before + 1)]
        paths.append(values_night(tmp_path, n_before + 1, {CASE: newest}, {CASE: noise_newest}))
        ingest(db, paths, capsys)
        return check(db, capsys)

    code, out, _ = run(0.3, 0.3)  # 3% slower, two nights before it agreeing to 0.2%, noise 0.3%
    assert code == 1 and "3.0% worse" in out and "from 2 night(s)" in out
    code, out, _ = run(10.0, 10.0)  # the same figures, but each night's own rounds spread 10%
    assert code == 0 and "0 regression(s)" in out
    code, out, _ = run(0.3, 0.3, n_before=6)
    assert code == 1 and "from 6 night(s)" in out
    code, out, _ = run(0.3, 30.0, n_before=6)  # the newest night's own rounds disagree: a stray round
    assert code == 0 and "0 regression(s)" in out


def test_nights_that_know_nothing_of_their_noise_need_five_before_them(tmp_path, capsys):
    """One repetition and no noise_pct: a night's figure is all there is, and only five of them can show a
    case that moves between a few levels."""
    steady = [values_night(tmp_path, n, {CASE: 50.0 * (1 + 0.001 * (-1) ** n)}) for n in range(1, 6)]
    ingest(tmp_path / "four.sqlite", steady[:4] + [values_night(tmp_path, 10, {CASE: 40.0})], capsys)
    code, out, _ = check(tmp_path / "four.sqlite", capsys)
    assert code == 0 and "20.0% worse" not in out
    ingest(tmp_path / "five.sqlite", steady + [values_night(tmp_path, 6, {CASE: 40.0})], capsys)
    code, out, _ = check(tmp_path / "five.sqlite", capsys)
    assert code == 0 and f"unconfirmed  {CASE}" in out  # one night of one repetition: maybe an outlier
    ingest(tmp_path / "five.sqlite", [values_night(tmp_path, 7, {CASE: 40.0})], capsys)
    code, out, _ = check(tmp_path / "five.sqlite", capsys)
    assert code == 1 and "since 2025-05-06T02:00:00+00:00 (1 run(s) ago)" in out


def aa_runs(name):
    return sorted(glob.glob(str(aa_set(name) / "run_0*.json")))


def replay(capsys, *argv):
    return run_cli(cli_history.main, ["replay", *argv], capsys)


def table_rows(out):
    return {ln.split("|")[1].strip(): [c.strip() for c in ln.split("|")[2:-1]]
            for ln in out.splitlines() if re.match(r"\| [0-9.]+% \|", ln)}


@pytest.mark.parametrize("name,least", [("h100_rounds_7c29fd0", 2), ("h200_rounds_b010260", 6)])
def test_committed_aa_nights_give_no_finding_and_a_planted_step_is_found(capsys, name, least):
    """Six committed A/A runs as nights: nothing on nights 3 to 6 at the default threshold, and a 2% step
    in the stable copies of a seventh night (each run in turn) called slower in at least `least` of 13."""
    runs = aa_runs(name)
    assert len(runs) == 6
    code, out, err = replay(capsys, *runs, "--plant", "2", "--thresholds", "1,3")
    assert code == 0, err
    rows = table_rows(out)
    assert rows["1%"][:4] == ["0", "0", "0", "0"]
    found = re.match(r"\d+% \((\d+)(?: to (\d+))? of 13\)", rows["1%"][4])
    assert found and int(found.group(1)) >= least
    assert rows["1%"][5] == "0, 0, 0, 0, 0, 0"
    assert rows["3%"][4] == "0% (0 of 13)"  # a floor above the step hides it


def test_replay_of_the_broad_aa_set_has_no_regression(capsys):
    code, out, _ = replay(capsys, *aa_runs("h100_broad_d0460aa"), "--thresholds", "1")
    assert code == 0
    assert all("worse" not in cell for cell in table_rows(out)["1%"])


def test_replay_refuses_too_few_runs_and_runs_of_two_machines(tmp_path, capsys):
    code, _, err = replay(capsys, night(tmp_path, 1), night(tmp_path, 2))
    assert code == 2 and "replay needs at least 3" in err
    other = synth.write(tmp_path / "other.json", synth.make_run(gpu="H200", host="node-b", families=FAMS,
                                                                date="2025-04-03T02:00:00+00:00"))
    code, _, err = replay(capsys, night(tmp_path, 1), night(tmp_path, 2), other)
    assert code == 2 and "another machine" in err and len(err.strip().splitlines()) == 1
    code, _, err = replay(capsys, night(tmp_path, 1), night(tmp_path, 2), night(tmp_path, 3), "--plant", "0")
    assert code == 2 and "argument --plant" in err


def test_replay_with_a_step_night_of_its_own(tmp_path, capsys):
    paths = [night(tmp_path, n, full=True) for n in range(1, 7)]
    step = night(tmp_path, 7, full=True, slow={r"Transfer/dir:\w+/mem:(pinned|registered)/": 1 / 1.03})
    code, out, _ = replay(capsys, *paths, "--step", step, "--thresholds", "1")
    assert code == 0
    row = table_rows(out)["1%"]
    stable = re.match(r"(\d+)% \((\d+) of (\d+)\)", row[4])
    assert stable and int(stable.group(3)) > 0 and int(stable.group(1)) >= 75, out
