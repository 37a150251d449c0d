"""Judging runs, not samples: files with rounds (gpu_bench's default), files of one round widened to the
between-run floor, several runs a side, non-finite figures refused, and the A/A report's statistics."""

import copy
import json
import math
import statistics
from pathlib import Path

import pytest

import synth
from conftest import run_cli
from gpu_bench_tools.aa.altered import tick_floor_only
from gpu_bench_tools.aa.analysis import report
from gpu_bench_tools.aa.render import render
from gpu_bench_tools.aa.report_files import write_floor, write_json
from gpu_bench_tools.cli import aa as cli_aa, compare as cli_compare
from gpu_bench_tools.compare.verdicts import compare
from gpu_bench_tools.stats.floors import SPREAD_TO_HALF_WIDTH, load_floors
from gpu_bench_tools.reading.load import benchmark_file_from_doc, load_file

REPO = Path(__file__).resolve().parents[2]
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365}
UNIT_S = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def base_doc(**kw):
    kw.setdefault("reps", 1)
    kw.setdefault("families", ("Transfer",))
    return synth.make_run(schema="2", sample_times=True, errors=False, aggregates=False, **kw)


def runs_of(doc):
    return [e for e in doc["benchmarks"] if e.get("run_type", "iteration") == "iteration"]


def scaled(doc, k, samples=None, rounds=None, keep_samples=True):
    """Every case's time times k (rates over k); `samples`: the samples' own factor; `rounds`: each round's
    factor, which makes the case's figure their mean and noise_pct their prediction interval, as gpu_bench
    writes them with --rounds."""
    out = copy.deepcopy(doc)
    for e in runs_of(out):
        t = e["real_time"] * UNIT_S[e["time_unit"]] * k
        f = 1.0
        if rounds:
            rt = [t * r for r in rounds]
            e["round_times_s"] = rt
            e["rounds"] = len(rt)
            mean = statistics.fmean(rt)
            f = mean / t
            n = len(rt)
            e["noise_pct"] = T975[n - 1] * statistics.stdev(rt) * math.sqrt(2 / n) / mean * 100
        e["real_time"] *= k * f
        e["cpu_time"] *= k * f
        for c in ("gbps", "bytes_per_second"):
            if c in e:
                e[c] /= k * f
        if "sample_times_s" in e:
            if keep_samples:
                e["sample_times_s"] = [s * k * (samples or 1.0) for s in e["sample_times_s"]]
            else:
                del e["sample_times_s"]
    return out


def write(tmp_path, name, doc):
    return synth.write(tmp_path / f"{name}.json", doc)


def test_runs_whose_rounds_agree_are_the_same_even_where_their_samples_differ(tmp_path):
    base = base_doc()
    a = scaled(base, 1.0, rounds=[1.00, 1.02, 0.99])
    # The second run's process is 3% slower in every sample, which its rounds show is usual between runs.
    b = scaled(base, 1.0, samples=1.03, rounds=[1.03, 1.00, 1.01])
    res = compare([benchmark_file_from_doc("a", a), benchmark_file_from_doc("b", b)])
    verdicts = {r.key: r.versus[1] for r in res.rows}
    assert verdicts and all(v.verdict in ("same", "noisy") for v in verdicts.values()), verdicts
    assert all(v.method == "moderated-rounds" for v in verdicts.values())


def test_files_as_run_sh_writes_them_fail_on_a_regression(tmp_path, capsys):
    base = base_doc()
    a = write(tmp_path, "a", scaled(base, 1.0, rounds=[1.00, 1.01, 0.99], keep_samples=False))
    for pct, gate in ((30, "10"), (10, "5")):
        b = write(tmp_path, f"b{pct}", scaled(base, 1 + pct / 100, rounds=[1.01, 0.99, 1.00], keep_samples=False))
        code, _, err = run_cli(cli_compare.main, ["--one-round", a, b, "--fail-on-regression", gate, "--format", "csv"], capsys)
        assert code == 1, err
        assert "regression(s) beyond" in err
    same = write(tmp_path, "same", scaled(base, 1.0, rounds=[0.99, 1.01, 1.00], keep_samples=False))
    code, out, err = run_cli(cli_compare.main, ["--one-round", a, same, "--fail-on-regression", "5"], capsys)
    assert code == 0, err


def test_one_round_a_side_is_widened_to_the_between_run_floor(tmp_path, capsys):
    floors = tmp_path / "floors.toml"
    floors.write_text('measured_on = "test"\n[floor_pct]\nTransfer = 2.0\n')
    base = base_doc(reps=3)
    a = write(tmp_path, "a", base)
    b = write(tmp_path, "b", scaled(base, 1.03))  # 3% slower in every sample of one process
    code, out, err = run_cli(cli_compare.main, ["--one-round", a, b, "--floors", str(floors), "--fail-on-regression", "1"], capsys)
    assert code == 0, err
    assert "widened to its group's between-run floor" in out
    res = compare([load_file(a), load_file(b)], floors=load_floors(floors))
    assert all(r.versus[1].verdict in ("same", "noisy") and r.versus[1].floored for r in res.rows)
    assert all(r.versus[1].noise_pct >= SPREAD_TO_HALF_WIDTH * 2.0 for r in res.rows)
    slow = write(tmp_path, "slow", scaled(base, 1.2))
    code, out, err = run_cli(cli_compare.main, ["--one-round", a, slow, "--floors", str(floors), "--fail-on-regression", "5"],
                             capsys)
    assert code == 1, out


def test_a_file_of_one_round_is_refused_in_one_line_saying_how_many_rounds_compare_needs(tmp_path, capsys):
    base = base_doc(reps=3)
    a = write(tmp_path, "a", base)
    b = write(tmp_path, "b", scaled(base, 1.10))
    code, out, err = run_cli(cli_compare.main, [a, b], capsys)
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "a.json ran each case in one round" in lines[0]
    assert "at least 3 rounds a side" in lines[0] and "--one-round" in lines[0]
    # A side of runs with rounds of their own is judged.
    with_rounds = write(tmp_path, "r", scaled(base, 1.0, rounds=[1.0, 1.01, 0.99]))
    code, out, err = run_cli(cli_compare.main, [with_rounds, with_rounds], capsys)
    assert code == 0, err


def test_several_runs_a_side_are_judged_on_the_runs(tmp_path, capsys):
    base = base_doc()
    side_a = [write(tmp_path, f"a{i}", scaled(base, k)) for i, k in enumerate((1.00, 1.02, 0.99))]
    side_b = [write(tmp_path, f"b{i}", scaled(base, k)) for i, k in enumerate((1.01, 0.99, 1.02))]
    slow_b = [write(tmp_path, f"s{i}", scaled(base, 1.1 * k)) for i, k in enumerate((1.01, 0.99, 1.02))]
    code, out, err = run_cli(cli_compare.main, ["--per-side", "3", *side_a, *side_b, "--format", "json",
                                                "--fail-on-regression", "5"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["rows"] and all(r["versus"][1]["verdict"] in ("same", "noisy") for r in doc["rows"])
    code, out, err = run_cli(cli_compare.main, ["--per-side", "3", *side_a, *slow_b, "--fail-on-regression", "5"],
                             capsys)
    assert code == 1, out
    code, _, err = run_cli(cli_compare.main, ["--one-round", "--per-side", "2", *side_a], capsys)
    assert code == 2 and "multiple of 2" in err


@pytest.mark.parametrize("field", ["real_time", "gbps"])
def test_a_figure_that_is_not_a_number_is_refused(tmp_path, capsys, field):
    base = base_doc()
    bad = copy.deepcopy(base)
    entry = next(e for e in runs_of(bad) if e["name"].startswith("Transfer/dir:h2d/mem:pinned"))
    entry[field] = float("nan")
    a, b = write(tmp_path, "a", base), write(tmp_path, "b", bad)
    code, out, err = run_cli(cli_compare.main, ["--one-round", a, b], capsys)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "not a finite number" in err, err


def _aa_files(tmp_path, factors, rounds=(1.0, 1.01, 0.99)):
    base = base_doc()
    return [load_file(write(tmp_path, f"run{i}", scaled(base, k, rounds=list(rounds), keep_samples=False)))
            for i, k in enumerate(factors)]


def test_the_aa_report_counts_coverage_false_calls_and_detection(tmp_path):
    files = _aa_files(tmp_path, (1.0, 1.002, 0.999, 1.001))
    r = report(files, slowdowns=[30])
    assert r.coverage_next == 1.0 and r.false_call_rate == 0.0
    assert r.meets_targets()
    s = r.slowdowns[0]
    assert s.detection_cases > 0 and s.rate == 1.0 and s.gate_fired == s.pairs == 3
    # A run far outside the others' intervals is not covered, and compare calls it different.
    far = _aa_files(tmp_path, (1.0, 1.0, 1.5))
    r = report(far)
    assert r.coverage_next == pytest.approx(0.5)
    assert r.false_calls[0]["slower"] == 0 and r.false_calls[1]["slower"] == r.false_calls[1]["cases"]
    assert not r.meets_targets()
    n = r.false_calls[1]["cases"]
    assert f"per pair: 0/{n} (0 faster, 0 slower), {n}/{n} (0 faster, {n} slower))" in render(r)


def test_the_aa_report_plants_its_slowdowns_in_the_copies_the_file_calls_link_bound(tmp_path):
    """The copies the slowdowns are planted in are Transfer's link-bound cases by the file's own rule
    (family.transfer.link_bound); a file without the rule is read by link_bound_oracle."""
    base = base_doc()

    def detection(rule):
        files = []
        for i, k in enumerate((1.0, 1.002)):
            doc = scaled(base, k, rounds=[1.0, 1.01, 0.99], keep_samples=False)
            if rule is not None:
                doc["context"]["family.transfer.link_bound"] = rule
            files.append(load_file(write(tmp_path, f"{rule}{i}", doc)))
        r = report(files, slowdowns=[30])
        cases = {c.key for c in r.cases if c.detection}
        assert r.slowdowns[0].detection_cases == len(cases)
        return cases, files[0]

    oracle, f = detection(None)
    mib = {k for k, c in f.cases.items() if c.axis_int("bytes") >= 1 << 20}
    assert oracle and oracle == {k for k in mib if "/mem:pinned/" in k}
    assert detection("mem:pageable")[0] == {k for k in mib if "/mem:pageable/" in k}
    assert detection("no")[0] == set()


def test_the_aa_report_slows_each_run_of_a_pair_in_turn(tmp_path):
    # Run 1 is 10% slower than run 2 throughout (a link others loaded through it): run 2 made 10% slower
    # matches run 1, which no comparison can tell apart; run 1 made 10% slower is 21% off run 2.
    files = _aa_files(tmp_path, (1.1, 1.0), rounds=(1.0, 1.002, 0.998))
    s = report(files, slowdowns=[10]).slowdowns[0]
    assert s.detection_cases > 0 and s.pairs == 1
    assert s.rate == 0.0 and s.gate_fired == 0
    assert s.rate_earlier == 1.0 and s.gate_fired_earlier == 1
    assert "the earlier run of each pair 10% slower instead: 100.0%" in render(report(files, slowdowns=[10]))


def test_the_aa_report_says_which_gpus_ran_and_how_much_of_each_run_was_timed(tmp_path):
    base = base_doc()
    docs = []
    for uuid, elapsed, timed, calibration in (("GPU-a", "200", "110", "18.5"), ("GPU-b", "250", "120", None)):
        d = scaled(base, 1.0, rounds=[1.0, 1.01, 0.99], keep_samples=False)
        d["context"].update({"gpu.uuid": uuid, "gpu_bench.elapsed_s": elapsed, "gpu_bench.timed_s": timed})
        if calibration:
            d["context"]["gpu_bench.calibration_timed_s"] = calibration
        docs.append(d)
    files = [load_file(write(tmp_path, f"t{i}", d)) for i, d in enumerate(docs)]
    r = report(files)
    assert [t.timed_share for t in r.run_times] == pytest.approx([0.55, 0.48])
    assert r.run_times[0].calibration_timed_s == 18.5 and math.isnan(r.run_times[1].calibration_timed_s)
    assert not r.one_machine
    text = render(r)
    assert "on 2 GPUs" in text and ("200.0 s (target 300 s or less), 110.0 s of it timed samples (55.0%, "
                                     "calibrations' 18.5 s") in text
    assert "250.0 s (target 300 s or less), 120.0 s of it timed samples (48.0%; target" in text
    write_json(r, tmp_path / "r.json")
    runs = json.loads((tmp_path / "r.json").read_text())["run_times"]
    assert [(d["within_run_time_target"], d["within_timed_share_target"]) for d in runs] == [(True, True),
                                                                                           (True, False)]
    same = report([files[0], files[0]])
    assert same.one_machine and "every run on one GPU (GPU-a)" in render(same)
    del docs[1]["context"]["gpu_bench.elapsed_s"]
    bare = report([files[0], load_file(write(tmp_path, "bare", docs[1]))])
    assert "run 2: no gpu_bench.elapsed_s and timed_s" in render(bare)


def test_the_aa_report_says_where_the_host_link_moved_between_the_runs(tmp_path):
    # Ten sizes of pinned and registered copies of 1 MiB and more in each direction. Run 2's h2d copies are
    # 2% slower, each by its own amount around it (others' traffic through the whole run); its d2h and
    # bidirectional copies differ from run 1's either way, as runs of one build on a still link do.
    base = synth.make_run(schema="2", sample_times=True, errors=False, aggregates=False, reps=1, full=True,
                          families=("Transfer",), sizes=[1 << p for p in range(20, 30)])
    run1 = scaled(base, 1.0, rounds=[1.0, 1.01, 0.99], keep_samples=False)
    run2 = copy.deepcopy(run1)
    for i, e in enumerate(runs_of(run2)):
        k = (1.02 + 0.001 * (i % 3)) if "/dir:h2d/" in e["name"] else (1.0 + 0.003 * (-1) ** i)
        e["real_time"] *= k
        e["round_times_s"] = [t * k for t in e["round_times_s"]]
        for c in ("gbps", "bytes_per_second"):
            e[c] /= k
    files = [load_file(write(tmp_path, f"link{i}", d)) for i, d in enumerate((run1, run2))]
    r = report(files)
    drift = {d.direction: d for d in r.link_drift}
    assert set(drift) == {"h2d", "d2h", "bidir"} and drift["h2d"].cases == 20
    assert drift["h2d"].moved and drift["h2d"].change_pct == pytest.approx(2.1, abs=0.1)
    assert not drift["d2h"].moved and not drift["bidir"].moved
    text = render(r)
    assert "moved between the runs (p < 0.01): h2d:" in text, text
    # Runs of one build on a still link: no direction moved, and the report says nothing of it.
    still = report([files[0], load_file(write(tmp_path, "link_again", run1))])
    assert all(not d.moved for d in still.link_drift) and "moved between the runs" not in render(still)


def test_the_aa_report_sets_each_runs_rounds_beside_the_process_they_ran_in(tmp_path):
    # Copies of 1 MiB and more in seven rounds: round_1, link_1, round_2, link_2, two extra rounds, the last.
    # The bidirectional copies read 10% slower in the extra rounds; the one-way copies agree in every round.
    base = synth.make_run(schema="2", sample_times=True, errors=False, aggregates=False, reps=1, full=True,
                          families=("Transfer",), sizes=[1 << 20, 1 << 26])
    kinds = ["full", "link", "full", "link", "extra", "extra", "last"]
    doc = scaled(base, 1.0, rounds=[1.0] * 7, keep_samples=False)
    # The rounds of the host-driven cases alone (host_K) hold no copy.
    doc["context"]["gpu_bench.round_processes"] = ("round_1=70.1/68.5/34.2 link_1=6.0/5.2/2.5 host_1=4.0/3.6/1.9 "
                                                   "round_2=72.0/70.1/35.7 link_2=6.2/5.4/2.9 host_2=4.1/3.7/1.8 "
                                                   "extra_1=3.6/2.8/0.7 extra_2=3.4/2.6/0.7")
    for e in runs_of(doc):
        t = e["round_times_s"][0]
        slow = "/dir:bidir/" in e["name"]
        e["round_times_s"] = [t * (1.10 if slow and k == "extra" else 1.0 + 0.001 * i) for i, k in enumerate(kinds)]
    # A case whose round failed fits no order of the processes and is left out.
    failed = next(e for e in runs_of(doc) if "/dir:h2d/mem:pinned/bytes:1048576/" in e["name"])
    failed["round_times_s"] = failed["round_times_s"][:3]
    files = [load_file(write(tmp_path, f"kinds{i}", doc)) for i in range(2)]
    r = report(files)
    assert [k.run for k in r.round_kinds] == [1, 2]
    k = r.round_kinds[0]
    assert k.excess_pct["bidir"]["extra"] == pytest.approx(10.0, abs=0.01)
    assert k.excess_pct["bidir"]["full"] < 0.3 and k.excess_pct["one way"]["extra"] < 0.6
    bidir_copies = sum(1 for e in runs_of(doc)
                       if "/dir:bidir/" in e["name"] and ("/mem:pinned/" in e["name"] or "/mem:registered/" in e["name"]))
    assert k.rounds["bidir"] == {"full": 2 * bidir_copies, "link": 2 * bidir_copies, "extra": 2 * bidir_copies,
                                 "last": bidir_copies}
    assert k.rounds["one way"]["last"] == k.rounds["one way"]["full"] // 2
    text = render(r)
    assert "rounds by their process" in text and "bidir full 0.10% " in text and "extra 10.00% " in text, text
    # Files without gpu_bench.round_processes (written before it) say nothing of it.
    del doc["context"]["gpu_bench.round_processes"]
    bare = report([load_file(write(tmp_path, f"bare{i}", doc)) for i in range(2)])
    assert bare.round_kinds == [] and "rounds by their process" not in render(bare)


def test_the_aa_report_sets_each_familys_full_rounds_beside_its_link_rounds(tmp_path):
    # Five rounds (round_1, link_1, round_2, link_2, the last): SmallCopy's cases read 10% slower in their full
    # rounds, as where other cases ran before them there alone; Transfer's agree in every round.
    base = synth.make_run(schema="2", sample_times=True, errors=False, aggregates=False, reps=1,
                          families=("SmallCopy", "Transfer"), sizes=[4, 1 << 20])
    kinds = ["full", "link", "full", "link", "full"]
    doc = scaled(base, 1.0, rounds=[1.0] * 5, keep_samples=False)
    doc["context"]["gpu_bench.round_processes"] = ("round_1=70.1/68.5/34.2 link_1=6.0/5.2/2.5 "
                                                   "round_2=72.0/70.1/35.7 link_2=6.2/5.4/2.9")
    for e in runs_of(doc):
        t = e["round_times_s"][0]
        slow = e["name"].startswith("SmallCopy/")
        e["round_times_s"] = [t * (1.10 if slow and k == "full" else 1.0) for k in kinds]
    files = [load_file(write(tmp_path, f"split{i}", doc)) for i in range(2)]
    r = report(files)
    assert r.full_over_link["SmallCopy"] == pytest.approx([10.0, 10.0])
    assert r.full_over_link["Transfer/mem:pinned"] == pytest.approx([0.0, 0.0])
    text = render(r)
    assert "full rounds over link rounds, by family, worst first" in text, text
    assert "in both): SmallCopy +10.00%, +10.00%; " in text, text
    # With rounds of the host-driven cases alone, a case's count of rounds cannot tell its kind: left out.
    doc["context"]["gpu_bench.round_processes"] += " host_1=4.0/3.6/1.9"
    hosted = report([load_file(write(tmp_path, f"hosted{i}", doc)) for i in range(2)])
    assert hosted.full_over_link == {} and "full rounds over link rounds" not in render(hosted)


def test_the_aa_report_sets_each_familys_full_rounds_spread_beside_its_link_rounds(tmp_path):
    # Seven rounds (round_1, link_1, link_2, round_2, link_3, link_4, the last): the pageable copies' link rounds
    # swing 10% about their median, their full rounds 1%; the pinned copies' two kinds swing alike.
    base = synth.make_run(schema="2", sample_times=True, errors=False, aggregates=False, reps=1,
                          families=("Transfer",), sizes=[4])
    kinds = ["full", "link", "link", "full", "link", "link", "full"]
    doc = scaled(base, 1.0, rounds=[1.0] * 7, keep_samples=False)
    doc["context"]["gpu_bench.round_processes"] = ("round_1=9.9/9.3/5.5 link_1=2.4/2.0/0.7 link_2=2.6/2.1/0.7 "
                                                   "round_2=10.1/9.6/5.6 link_3=2.5/2.1/0.7 link_4=2.5/2.0/0.7")
    full_swing, link_swing = [1.0, 1.01, 0.99], [1.1, 0.9, 1.1, 0.9]
    for e in runs_of(doc):
        t = e["round_times_s"][0]
        link = iter(link_swing if "mem:pageable" in e["name"] else [1.0, 1.01, 0.99, 1.0])
        full = iter(full_swing)
        e["round_times_s"] = [t * next(link if k == "link" else full) for k in kinds]
    r = report([load_file(write(tmp_path, f"kinds{i}", doc)) for i in range(2)])
    full_sd, link_sd = r.spread_by_kind["Transfer/mem:pageable"]
    assert full_sd == pytest.approx(100 * statistics.stdev(math.log(x) for x in full_swing))
    assert link_sd == pytest.approx(100 * statistics.stdev(math.log(x) for x in link_swing))
    assert r.spread_by_kind["Transfer/mem:pinned"] == pytest.approx((full_sd, full_sd), rel=0.2)
    text = render(r)
    assert "rounds' spread by their process, by family, widest link rounds first" in text, text
    assert f"back to back): Transfer/mem:pageable {full_sd:.2f}%, {link_sd:.2f}%; " in text, text
    # A run of no link rounds says nothing of it.
    doc["context"]["gpu_bench.round_processes"] = "round_1=9.9/9.3/5.5 round_2=10.1/9.6/5.6"
    for e in runs_of(doc):
        e["round_times_s"] = e["round_times_s"][:3]
    bare = report([load_file(write(tmp_path, f"nolink{i}", doc)) for i in range(2)])
    assert bare.spread_by_kind == {} and "spread by their process" not in render(bare)


def test_the_aa_report_writes_floors_compare_reads(tmp_path, capsys):
    files = [f.path for f in _aa_files(tmp_path, (1.0, 1.01, 0.99), rounds=(1.0, 1.02, 0.98))]
    floor = tmp_path / "floor.toml"
    code, out, err = run_cli(cli_aa.main, ["report", *files, "--floor", str(floor), "--json",
                                           str(tmp_path / "aa.json")], capsys)
    assert code == 0, err
    f = load_floors(floor)
    # One round's spread between processes: the rounds of all runs, here 2% apart each side.
    assert f.sd_pct["Transfer"] == pytest.approx(statistics.stdev(
        [math.log(x) for x in (1.0, 1.02, 0.98) for _ in range(3)]) * 100, rel=0.3)
    assert "A/A over 3 runs" in out
    doc = json.loads((tmp_path / "aa.json").read_text())
    assert doc["coverage_next"] == 1.0


def _floors_file(tmp_path, **sd_pct):
    path = tmp_path / "floors.toml"
    path.write_text('measured_on = "test"\n[floor_pct]\n' + "".join(f'"{k}" = {v}\n' for k, v in sd_pct.items()))
    return load_floors(path)


def test_the_aa_report_judges_the_floors_on_the_runs_rounds(tmp_path):
    # Each round of run 1 against each of run 2, as files of one round: 6% apart at most, and a floor whose
    # half-width is 2.77 x 1 = 2.8% calls most of the nine pairs different; a floor of 3% (8.3%) calls none.
    files = _aa_files(tmp_path, (1.0, 1.03), rounds=(1.0, 1.02, 0.98))
    narrow = report(files, floors=_floors_file(tmp_path, Transfer=1.0)).one_round
    cases = len(files[0].cases)
    assert narrow.compared == 9 * cases and narrow.unfloored == []
    changes = [abs((1.0 * x) / (1.03 * y) - 1) * 100 for x in (1.0, 1.02, 0.98) for y in (1.0, 1.02, 0.98)]
    expected = sum(c >= 2.0 and c > SPREAD_TO_HALF_WIDTH * 1.0 for c in changes)
    assert narrow.called == expected * cases and 0 < expected < 9
    wide = report(files, floors=_floors_file(tmp_path, Transfer=3.0))
    assert wide.one_round.called == 0 and wide.meets_targets()
    assert "one round a side" in render(wide) and "0/" in render(wide)
    # A family the floors do not hold is named: compare would not widen its files of one round.
    bare = report(files, floors=_floors_file(tmp_path, Overlap=3.0))
    assert bare.one_round.unfloored == ["Transfer"] and bare.one_round.compared == 0
    assert "no floor for Transfer" in render(bare)
    partly = report(files + files[:1], floors=_floors_file(tmp_path, **{"Transfer/mem:pinned": 3.0}))
    assert partly.one_round.unfloored == ["Transfer"] and partly.one_round.compared > 0
    assert not partly.meets_targets()


def test_a_floor_is_the_spread_of_the_figure_compare_judges(tmp_path):
    # HostBlocking's headline is the host's time, which its rounds and noise_pct do not describe: its floor
    # must come from that headline between runs, not from the GPU time that stayed put.
    base = base_doc(families=("HostBlocking",))
    docs = []
    for k in (1.0, 1.5):
        d = scaled(base, 1.0, rounds=[1.0, 1.001, 0.999], keep_samples=False)
        for e in runs_of(d):
            e["host_blocked_us"] *= k
        docs.append(d)
    files = [load_file(write(tmp_path, f"hb{i}", d)) for i, d in enumerate(docs)]
    r = report(files)
    assert r.floors["HostBlocking"] == pytest.approx(math.log(1.5) / math.sqrt(2) * 100, rel=1e-3)
    # compare then widens those verdicts enough that the two runs are not called different.
    floor = tmp_path / "hb.toml"
    write_floor(r, str(floor))
    res = compare(files, floors=load_floors(floor))
    assert all(row.versus[1].verdict in ("same", "noisy") for row in res.rows)


def test_floors_of_several_machines_merge_to_the_larger(tmp_path, capsys):
    reports = []
    for name, sd in (("h100", {"Transfer": 2.0, "Transfer/mem:pinned": 1.0}),
                     ("h200", {"Transfer": 3.0, "Latency": 0.5})):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({"gpu": name, "runs": [f"{name}_1.json", f"{name}_2.json"], "revision": "abc",
                                    "floors": sd, "one_machine": True}))
        reports.append(str(path))
    out_file = tmp_path / "merged.toml"
    code, out, err = run_cli(cli_aa.main, ["floors", *reports, "--out", str(out_file)], capsys)
    assert code == 0, err
    f = load_floors(out_file)
    assert f.sd_pct == {"Transfer": 3.0, "Transfer/mem:pinned": 1.0, "Latency": 0.5}
    assert "h100, 2 runs" in f.source and "h200, 2 runs" in f.source
    code, _, err = run_cli(cli_aa.main, ["floors", *reports, "--out", str(out_file), "--measured-on", "two GPUs"],
                           capsys)
    assert code == 0 and load_floors(out_file).source == "two GPUs"
    # A report of runs on several machines, or a file that is no report, is refused in one line.
    doc = json.loads(Path(reports[0]).read_text())
    doc["one_machine"] = False
    Path(reports[0]).write_text(json.dumps(doc))
    code, _, err = run_cli(cli_aa.main, ["floors", *reports, "--out", str(tmp_path / "x.toml")], capsys)
    assert code == 2 and "several GPUs" in err and len(err.strip().splitlines()) == 1
    Path(reports[0]).write_text(json.dumps({"benchmarks": []}))
    code, _, err = run_cli(cli_aa.main, ["floors", *reports, "--out", str(tmp_path / "x.toml")], capsys)
    assert code == 2 and "not an A/A report" in err and not (tmp_path / "x.toml").exists()


@pytest.mark.floors
def test_the_shipped_floors_hold_every_family_of_a_default_run():
    f = load_floors()
    run = load_file(REPO / "results" / "aa" / "h100_default_110d606" / "default_h100_run1.json")
    families = {c.family for c in run.cases.values()}
    assert {fam for fam in families if f.half_width_pct(fam) is None} == set()


@pytest.mark.floors
def test_the_shipped_floors_cover_every_family_they_were_measured_for():
    f = load_floors()
    assert {"Transfer", "Events", "SmallCopy", "Overlap", "HostBlocking", "Transfer/mem:pinned"} <= set(f.sd_pct)
    assert all(v >= 0 for v in f.sd_pct.values())
    assert "H200" in f.source or "H100" in f.source
    # A family and memory kind's own floor comes first: pinned copies vary far less than managed ones.
    assert f.half_width_pct("Transfer", "pinned") < f.half_width_pct("Transfer", "managed_fault")
    assert f.half_width_pct("Transfer", "no_such_kind") == f.half_width_pct("Transfer")


def test_aa_run_refuses_an_output_flag_and_a_missing_executable(tmp_path, capsys):
    code, _, err = run_cli(cli_aa.main, ["run", "--out", str(tmp_path), "--exe", "/nonexistent/gpu_bench"], capsys)
    assert code == 2 and "no such executable" in err
    code, _, err = run_cli(cli_aa.main, ["run", "--out", str(tmp_path), "--exe", "/bin/true", "--",
                                         "--benchmark_out=x.json"], capsys)
    assert code == 2 and "leave out --benchmark_out" in err


def test_a_runs_wall_time_is_not_a_counter(tmp_path):
    doc = base_doc()
    for e in runs_of(doc):
        e["wall_s"] = 0.5
    f = load_file(write(tmp_path, "walls", doc))
    assert all("wall_s" not in s.counters for c in f.cases.values() for s in c.samples)


def test_a_change_the_rounds_test_finds_is_called_even_within_noise_pct(tmp_path):
    # Each side's rounds spread 2%, so each file's noise_pct (t(0.975, 2) x s x sqrt(2/3), about 7%) holds
    # a 6% change; the test on both sides' rounds does not: two runs whose rounds differ so are not alike.
    base = base_doc()
    a = scaled(base, 1.0, rounds=[1.00, 1.02, 0.98])
    b = scaled(base, 1.06, rounds=[1.00, 1.02, 0.98])
    res = compare([benchmark_file_from_doc("a", a), benchmark_file_from_doc("b", b)])
    assert res.rows
    for r in res.rows:
        v = r.versus[1]
        assert v.noise_pct > 6.0, v
        assert v.method == "moderated-rounds" and v.verdict == "slower", v


def test_a_rate_whose_rounds_a_burst_slowed_is_judged_on_its_fastest_rounds(tmp_path):
    # Eight rounds, one of them at half speed (a burst on the host link) and the rest within 0.2%: the figure
    # is the fastest half's, and a run 10% slower in every round is slower, whatever the headline's unit (a
    # rate's fastest rounds are its highest values).
    base = base_doc()
    rounds = [1.0, 1.002, 0.999, 2.0, 1.001, 0.998, 1.002, 1.0]
    a = scaled(base, 1.0, rounds=rounds)
    b = scaled(base, 1.10, rounds=rounds)
    res = compare([benchmark_file_from_doc("a", a), benchmark_file_from_doc("b", b)])
    assert res.rows
    for r in res.rows:
        v = r.versus[1]
        assert r.higher_is_better and v.method == "moderated-rounds" and v.verdict == "slower", (r.key, v)


def test_the_tick_floor_what_if_narrows_a_case_floored_on_a_noisy_last_round(tmp_path):
    # gpu_bench floored this case on its last round's own 25%: re-derived from its rounds (within 0.2% but one
    # at half speed) and its prior, with the tick alone as floor, its interval is its rounds'.
    doc = scaled(base_doc(), 1.0, rounds=[1.0, 1.002, 0.999, 1.001, 0.998, 1.002, 1.0, 2.0])
    for e in runs_of(doc):
        e.update(noise_pct=25.0, detectable_pct=25.0, round_prior_sd=0.002, round_prior_dof=2.0)
    f = tick_floor_only(benchmark_file_from_doc("a", doc))
    cases = [c for c in f.cases.values() if c.samples[0].round_times_s]
    assert cases
    for c in cases:
        assert c.samples[0].counters["noise_pct"] < 1.0, c.key
        assert c.samples[0].counters["detectable_pct"] == pytest.approx(1.0), c.key
