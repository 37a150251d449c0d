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
    return sorted(ln.strip()[len(tag):].split()[0] for ln in out.splitlines() if ln.strip().startswith(tag))


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


def values_night(tmp_path, n, values, noise_pct=None, rounds=None):
    """A night of one case per entry of `values` (GB/s, one repetition each), with the given noise_pct, and
    with `rounds` its context's gpu_bench.rounds."""
    doc = synth.doc_from_values({name: [v] for name, v in values.items()},
                                date=f"2025-05-{n:02d}T02:00:00+00:00")
    if rounds is not None:
        doc["context"]["gpu_bench.rounds"] = str(rounds)
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


def test_a_night_of_one_round_knows_nothing_of_the_next_runs_noise(tmp_path, capsys):
    """gpu_bench --rounds=1 writes a noise_pct of its one process: nights of it judge as nights without one.
    Two nights 0.2% apart, noise 0.3%, then one 3% slower: a regression from three rounds a night, none from
    one; five one-round nights before the step show it, unconfirmed on its first night."""
    def run(rounds, n_before, steps=1):
        db = tmp_path / f"db_{rounds}_{n_before}_{steps}.sqlite"
        paths = [values_night(tmp_path, n, {CASE: 50.0 * (1 + 0.001 * (-1) ** n)}, {CASE: 0.3}, rounds)
                 for n in range(1, n_before + 1)]
        paths += [values_night(tmp_path, n, {CASE: 48.5}, {CASE: 0.3}, rounds)
                  for n in range(n_before + 1, n_before + 1 + steps)]
        ingest(db, paths, capsys)
        return check(db, capsys)

    code, out, _ = run(3, 2)
    assert code == 1 and "3.0% worse" in out and "ran each case in one round" not in out
    code, out, _ = run(1, 2)
    assert code == 0 and "0 regression(s)" in out
    assert "note: 3 of these runs ran each case in one round (gpu_bench --rounds=1)" in out
    code, out, _ = run(1, 5)
    assert code == 0 and f"unconfirmed  {CASE}" in out
    code, out, _ = run(1, 5, steps=2)
    assert code == 1 and "1 regression(s)" in out and "(1 run(s) ago)" in out


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


# A case whose rounds lie 100-fold apart, as gpu_bench wrote it for free_host (issue 58): each night's
# rounds in us and its noise_pct.
FREE_HOST = "Alloc/op:free_host/bytes:1048576"
FREE_HOST_NIGHTS = {1: ((556.0, 5.0, 358.0), 116155.0), 2: ((350.4, 1.2, 229.2), 92357.1),
                    3: ((556.0, 5.0, 358.0), 116155.0)}
SIX_PINNED = r"Transfer/dir:(h2d|d2h)/mem:pinned/bytes:(4194304|33554432|268435456)$"
ALLOC = {"family.alloc.name": "Alloc", "family.alloc.scope": "single_gpu", "family.alloc.axes": "op,pool,bytes",
         "family.alloc.headline": "real_time", "family.alloc.unit": "us", "family.alloc.better": "lower",
         "family.alloc.headline_kind": "time", "family.alloc.host_link": "no", "family.alloc.host_side": "yes"}


def default_night(tmp_path, n, rounds_us, noise_pct, slow=None, context=ALLOC):
    """A night of a default run (one repetition, noise_pct per case) with the free_host case added."""
    doc = synth.make_run(schema="2", reps=1, noise=0.001, families=FAMS, seed=900 + n, slow=slow,
                         date=f"2025-06-{n:02d}T02:00:00+00:00", extra_context=context)
    name = FREE_HOST + "/manual_time"
    doc["benchmarks"].append(dict(
        name=name, run_name=name, family_index=len(doc["benchmarks"]), per_family_instance_index=0,
        run_type="iteration", repetitions=1, repetition_index=0, threads=1, iterations=1,
        real_time=sorted(rounds_us)[1], cpu_time=sorted(rounds_us)[1], time_unit="us", noise_pct=noise_pct,
        rounds=3.0, samples=71.0, round_times_s=[r * 1e-6 for r in rounds_us]))
    return synth.write(Path(tmp_path) / f"d{n:02d}.json", doc)


def test_a_case_too_noisy_to_judge_is_named_and_the_others_are_judged(tmp_path, capsys):
    """Three default nights, the newest with six pinned copies 10% slower: check names those six and exits 1,
    and names the case whose rounds lie 100-fold apart as too noisy to judge instead of failing on it."""
    six = sorted(c for c in synth_cases() if re.search(SIX_PINNED, c))
    paths = [default_night(tmp_path, n, *FREE_HOST_NIGHTS[n], slow={SIX_PINNED: 1 / 1.10} if n == 3 else None)
             for n in (1, 2, 3)]
    ingest(tmp_path / "h.sqlite", paths, capsys)
    code, out, err = check(tmp_path / "h.sqlite", capsys)
    assert code == 1 and len(six) == 6 and flagged(out) == six, out
    worse = [float(w) for w in re.findall(r"\(([0-9.]+)% worse", out)]
    assert len(worse) == 6 and all(8.6 < w < 9.6 for w in worse), out  # 10% longer: 9.1% fewer GB/s
    assert flagged(out, "too noisy") == [FREE_HOST] and "noise_pct 116155% on 2025-06-01" in out
    assert "6 regression(s), 0 improvement(s), 0 newly failing, 1 too noisy to judge" in out
    assert "6 regression(s) or newly failing case(s)" in err


# Alloc's descriptor as gpu_bench writes it since descriptors name the machine's own cause of a case's spread.
HOST_CPU = "the host CPU's state, which a virtual machine changes between processes (host.clock_read_ns)"
ALLOC_VARIES = dict(ALLOC, **{"family.alloc.machine_variance": "yes", "family.alloc.machine_variance_cause": HOST_CPU})
WILD_COPY = "Transfer/dir:h2d/mem:pinned/bytes:4194304"


def test_a_too_noisy_case_whose_family_names_the_machines_cause_says_it_in_words(tmp_path, capsys):
    """Two default nights with free_host (Alloc names the host CPU's state as its cause) and a pinned copy
    (Transfer names none) too noisy: free_host's line gives the cause before its noise_pct, the copy's line its
    noise_pct alone, and the note counts the first apart."""
    import json

    paths = []
    for n in (1, 2):
        path = default_night(tmp_path, n, *FREE_HOST_NIGHTS[n], context=ALLOC_VARIES)
        doc = json.loads(Path(path).read_text())
        for e in doc["benchmarks"]:
            if e["name"] == WILD_COPY + "/manual_time":
                e["noise_pct"] = 250.0
        paths.append(synth.write(path, doc))
    ingest(tmp_path / "h.sqlite", paths, capsys)
    code, out, err = check(tmp_path / "h.sqlite", capsys)
    assert code == 0 and err == "" and flagged(out, "too noisy") == [FREE_HOST, WILD_COPY], out
    assert (f"too noisy    {FREE_HOST}  the machine's own variance: varies with {HOST_CPU} "
            "(noise_pct 116155% on 2025-06-01T02:00:00+00:00)") in out, out
    assert f"too noisy    {WILD_COPY}  noise_pct 250% on 2025-06-01T02:00:00+00:00" in out, out
    assert "note: 2 case(s) too noisy to judge" in out and "; for 1 of them that is the machine's own variance" in out


@pytest.mark.parametrize("noisy", [1, 2, 3])
def test_a_too_noisy_night_never_makes_check_exit_1(tmp_path, capsys, noisy):
    """One night of three with the free_host case's rounds, the others steady: the case is not judged
    whichever night it is, and alone it is no regression."""
    steady = ((300.0, 301.0, 302.0), 0.8)
    paths = [default_night(tmp_path, n, *(FREE_HOST_NIGHTS[n] if n == noisy else steady)) for n in (1, 2, 3)]
    ingest(tmp_path / "h.sqlite", paths, capsys)
    code, out, err = check(tmp_path / "h.sqlite", capsys)
    assert code == 0 and err == "", out
    assert flagged(out, "too noisy") == [FREE_HOST] and "0 regression(s)" in out


def test_a_figure_of_zero_is_not_judged_and_is_counted(tmp_path, capsys):
    """A log has no zero: a case with a figure of zero or below on one of its nights is counted in a note."""
    other = "Transfer/dir:d2h/mem:pinned/bytes:1048576"
    paths = []
    for n in (1, 2, 3):
        doc = synth.doc_from_values({CASE: [50.0], other: [49.0]}, date=f"2025-05-{n:02d}T02:00:00+00:00")
        for e in doc["benchmarks"]:
            e["host_blocked_us"] = 0.0 if (n == 2 and e["name"].startswith(other)) else 4.0 + n
        paths.append(synth.write(tmp_path / f"z{n}.json", doc))
    ingest(tmp_path / "h.sqlite", paths, capsys)
    code, out, _ = check(tmp_path / "h.sqlite", capsys, "--metric", "host_blocked_us")
    assert code == 0 and "note: 1 case(s) not judged: a figure of zero or below" in out, out


def test_an_interval_beyond_a_float_is_infinite(tmp_path):
    """Nights whose repetitions span the floats' range give an interval whose bound no float holds."""
    from gpu_bench_tools.history import check as history_check
    from gpu_bench_tools.history.series import Point

    run = history_check.Run(1, 1, {}, "2025-06-01T02:00:00+00:00", None, {})
    nights = [Point(run, 1.0, [1e-150, 1.0, 1e150], None) for _ in range(3)]
    newest = [Point(run, 2.0, [2.0], None)]
    own = {id(p): history_check.night_sd(p) for p in nights + newest}
    beyond = history_check.level_against(nights, newest, 0.001, own)
    assert beyond.half_width_pct == float("inf") and beyond.p_value > 0.5


def later(src, date, dst, slow=None):
    """A committed run again under a later date, its cases matching `slow` made that many times slower."""
    import gzip
    import json

    doc = json.loads(gzip.open(src).read())
    doc["context"]["date"] = date
    for e in doc["benchmarks"]:
        if slow and re.search(slow[0], e["name"].removesuffix("/manual_time")):
            for k in ("real_time", "cpu_time"):
                e[k] *= slow[1]
            e["round_times_s"] = [t * slow[1] for t in e.get("round_times_s", [])]
            for k in ("gbps", "bytes_per_second"):
                if k in e:
                    e[k] /= slow[1]
    return synth.write(dst, doc)


def test_the_reported_sequence_of_committed_runs(tmp_path, capsys):
    """Issue 58's sequence: run 1, run 2, and run 1 again under a later date; then a fourth night with six
    pinned copies 10% slower. check named free_host's rounds (1.4 to 369 us apart) too noisy and judged the
    rest."""
    runs = aa_set("h200_default_f799a91")
    db = tmp_path / "h.sqlite"
    ingest(db, [runs / "default_h200_run1.json.gz", runs / "default_h200_run2.json.gz",
                later(runs / "default_h200_run1.json.gz", "2026-11-29T04:51:13+00:00", tmp_path / "r1.json")], capsys)
    code, out, err = check(db, capsys)
    assert code == 0 and err == "" and flagged(out) == [], out
    assert FREE_HOST in flagged(out, "too noisy")
    six = r"Transfer/dir:(h2d|d2h)/mem:pinned/bytes:(1048576|67108864|1073741824)$"
    ingest(db, [later(runs / "default_h200_run2.json.gz", "2026-11-30T04:51:13+00:00", tmp_path / "r2.json",
                      slow=(six, 1.10))], capsys)
    code, out, err = check(db, capsys)
    assert code == 1 and len(flagged(out)) == 6 and all(re.search(six, c) for c in flagged(out)), out
    assert FREE_HOST in flagged(out, "too noisy")


def test_three_identical_runs_call_no_host_time_a_regression(tmp_path, capsys):
    """Three default runs of one command on one H200 (results/aa/host_side_h200/aa_fixed_order.tgz). HostBlocking's
    headline, the host time, comes from each run's last round alone: the case's noise_pct is its GPU time's
    interval and says nothing of it, so two nights cannot judge it. With that interval it read a 26% change
    between identical runs as a regression."""
    import tarfile

    with tarfile.open(Path(__file__).resolve().parents[2] / "results/aa/host_side_h200/aa_fixed_order.tgz") as t:
        runs = [m for m in t.getmembers() if re.fullmatch(r"aa/host_side_cpu_off_run\d\.json", m.name)]
        t.extractall(tmp_path, members=runs)
    db = tmp_path / "h.sqlite"
    ingest(db, sorted(tmp_path.glob("aa/host_side_cpu_off_run*.json")), capsys)
    code, out, err = check(db, capsys)
    assert code == 0, out + err
    assert "REGRESSION" not in out and " 0 regression(s)" in out


def test_a_step_on_a_night_whose_host_was_busy_says_so(tmp_path, capsys):
    quiet = {"gpu_bench.round_host": "round_1=0.80/0.02/50 round_2=0.90/0.03/55 last=1.00/0.02/60"}
    busy = {"gpu_bench.round_host": "round_1=49.90/0.02/90 round_2=-/-/80 last=50.10/0.10/95"}
    paths = [night(tmp_path, n, extra_context=quiet) for n in range(1, 7)]
    paths.append(night(tmp_path, 7, slow={STEADY: 1 / 1.02}, extra_context=busy))
    ingest(tmp_path / "h.sqlite", paths, capsys)
    code, out, _ = check(tmp_path / "h.sqlite", capsys)
    assert code == 1 and len(flagged(out)) >= 8, out
    # The busy night's own record is no change in the context; the line after it names the load.
    assert "there: nothing in the context changed" in out
    assert out.count("that run's host was busy: other processes used 50.0% of its CPU time in its median round "
                     "(gpu_bench.round_host)") == len(flagged(out)), out
    # The same step on a quiet night says nothing of the host.
    (tmp_path / "q").mkdir()
    quiet_paths = paths[:6] + [night(tmp_path / "q", 7, slow={STEADY: 1 / 1.02}, extra_context=quiet)]
    ingest(tmp_path / "q.sqlite", quiet_paths, capsys)
    code, out, _ = check(tmp_path / "q.sqlite", capsys)
    assert code == 1 and "host was busy" not in out
