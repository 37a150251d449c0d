import csv
import gc
import importlib
import io
import json
import re
import time

import pytest

import synth
from conftest import REPO, SLOW, run_cli
from gpu_bench_tools.cli import compare as cli_compare
from gpu_bench_tools.compare.verdicts import compare
from gpu_bench_tools.reading.load import benchmark_file_from_doc, load_file

SLOW_RX = re.compile("|".join(SLOW))
RESULTS = REPO / "results"


def verdicts(result, i=1):
    return {r.key: r.versus[i].verdict for r in result.rows}


def test_identical_runs_are_all_same(data, capsys):
    code, out, err = run_cli(cli_compare.main, ["--one-round", data["base"], data["copy"], "--fail-on-regression", "0"], capsys)
    assert code == 0, err
    res = compare([load_file(data["base"]), load_file(data["copy"])])
    assert set(verdicts(res).values()) == {"same"}
    assert all(r.versus[1].ratio == 1.0 for r in res.rows)
    assert not re.search(r"\b(slower|faster|noisy)\??$", out, re.M)
    assert "The machines' facts are the same in every file." in out


def test_another_night_of_the_same_machine_is_not_flagged(data):
    res = compare([load_file(data["base"]), load_file(data["night2"])])
    v = verdicts(res)
    assert "slower" not in v.values() and "faster" not in v.values(), [k for k, x in v.items() if x != "same"]
    assert all(r.versus[1].tested for r in res.rows if r.cells[0].n)


def test_slowed_run_is_flagged_exactly_where_it_is_slower(data, capsys):
    res = compare([load_file(data["base"]), load_file(data["slow"])])
    v = verdicts(res)
    slowed = {k for k in v if SLOW_RX.search(k)}
    assert slowed and all(v[k] == "slower" for k in slowed)
    assert all(v[k] == "same" for k in v if k not in slowed)
    for r in res.rows:
        if r.key.startswith("Transfer/dir:h2d/mem:pinned"):
            assert r.metric == "gbps" and r.unit == "GB/s"
            assert r.versus[1].ratio == pytest.approx(0.9, rel=0.02)
            assert r.versus[1].slowdown_pct == pytest.approx(10, abs=2)
            assert r.versus[1].p_value < 0.05
        if r.key.startswith("SmallCopy/dir:d2h"):
            assert r.metric == "real_time" and r.versus[1].ratio == pytest.approx(1.4, rel=0.02)
    fam = {f.family: f for f in res.families}
    assert fam["SmallCopy"].geomean_speed[1] < 0.9 < fam["Overlap"].geomean_speed[1]
    assert fam["Transfer"].counts[1]["slower"] == 7

    code, out, err = run_cli(cli_compare.main, ["--one-round", data["base"], data["slow"], "--fail-on-regression", "5"], capsys)
    assert code == 1
    assert "17 regression(s) beyond 5%" in err and "Transfer/dir:h2d/mem:pinned/bytes:1024" in err
    code, _, _ = run_cli(cli_compare.main, ["--one-round", data["base"], data["slow"], "--fail-on-regression", "50"], capsys)
    assert code == 0


def test_reversed_order_says_faster(data):
    res = compare([load_file(data["slow"]), load_file(data["base"])])
    v = verdicts(res)
    assert {v[k] for k in v if SLOW_RX.search(k)} == {"faster"}


def test_noisy_when_the_test_cannot_tell():
    key = "Transfer/dir:h2d/mem:pinned/bytes:1048576"
    a = benchmark_file_from_doc("a.json", synth.doc_from_values({key: [10, 12, 8, 11, 9]}))
    b = benchmark_file_from_doc("b.json", synth.doc_from_values({key: [9, 13, 7, 10, 7.5]}))
    r = compare([a, b]).rows[0]
    assert r.versus[1].verdict == "noisy" and r.versus[1].p_value > 0.05
    c = benchmark_file_from_doc("c.json", synth.doc_from_values({key: [10.05, 12, 8, 11, 9]}))
    assert compare([a, c]).rows[0].versus[1].verdict == "same"


def test_without_repetitions_only_ratio_and_a_warning(data, capsys):
    code, out, err = run_cli(cli_compare.main, ["--one-round", data["single"], data["single_slow"], "--fail-on-regression", "5"],
                             capsys)
    assert code == 0  # a ratio alone is not a test, so it does not fail the run
    assert "too few samples on a side for a test to reach p < 0.05" in out
    assert re.search(r"Transfer/dir:h2d/mem:pinned/bytes:268435456 .* slower\?", out)
    res = compare([load_file(data["single"]), load_file(data["single_slow"])])
    assert not any(r.versus[1].tested for r in res.rows)


def test_header_names_what_differs(data, capsys):
    code, out, _ = run_cli(cli_compare.main, ["--one-round", data["base"], data["h200"], "--filter", "^Transfer/dir:h2d"], capsys)
    assert code == 0
    files, answer, head = out.split("\n\n")[:3]  # the files, the answer, then what differs
    assert answer.startswith("How [2] compares with [1]")
    assert "What differs between the files:" in head
    assert re.search(r"GPU\s+NVIDIA H100 80GB HBM3\s+NVIDIA H200", head)
    assert re.search(r"driver\s+580.159.04\s+570.86.15", head)
    assert "GPU memory" in head and "80.0 GiB" in head
    assert "PCIe" not in head and "host CPU" not in head  # the same on both
    assert "[2] H200, driver 570.86.15" in files


def test_cases_only_in_some_files_are_listed(data, capsys):
    code, out, _ = run_cli(cli_compare.main, ["--one-round", data["base"], data["fewer"]], capsys)
    assert code == 0
    part = out.split("Cases not in every file")[1]
    assert "Transfer/dir:h2d/mem:pinned/bytes:1024  only in [1]" in part
    assert "SmallCopy/dir:h2d/mem:pinned/bytes:1024  only in [1]" in part


def test_three_files(data, capsys):
    code, out, _ = run_cli(cli_compare.main, ["--one-round", data["base"], data["night2"], data["slow"], "--format", "json"], capsys)
    d = json.loads(out)
    assert len(d["files"]) == 3
    row = next(r for r in d["rows"] if r["case"] == "Transfer/dir:h2d/mem:pinned/bytes:268435456")
    assert row["versus"][0] is None
    assert row["versus"][1]["verdict"] == "same" and row["versus"][2]["verdict"] == "slower"


def test_metric_option_and_unknown_metric(data, capsys):
    code, out, _ = run_cli(cli_compare.main, ["--one-round", data["base"], data["slow"], "--metric", "host_blocked_us",
                                              "--filter", "HostBlocking", "--format", "csv"], capsys)
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert rows and all(r["metric"] == "host_blocked_us" and r["unit"] == "us" for r in rows)
    code, _, err = run_cli(cli_compare.main, ["--one-round", data["base"], data["slow"], "--metric", "furlongs"], capsys)
    assert code == 2 and "no case has a 'furlongs' counter" in err and len(err.strip().splitlines()) == 1


def test_filter_and_bad_regex(data, capsys):
    code, out, _ = run_cli(cli_compare.main, ["--one-round", data["base"], data["slow"], "--filter", "Overlap/.*streams:8"], capsys)
    assert code == 0
    body = [ln for ln in out.splitlines() if ln.startswith(("Transfer/", "Overlap/", "SmallCopy/"))]
    assert body and all("streams:8" in ln for ln in body)
    code, _, err = run_cli(cli_compare.main, ["--one-round", data["base"], data["slow"], "--filter", "(["], capsys)
    assert code == 2 and "bad regular expression" in err
    code, _, err = run_cli(cli_compare.main, ["--one-round", data["base"], data["slow"], "--filter", "NoSuchFamily"], capsys)
    assert code == 2 and "no case matches" in err


def test_markdown_csv_and_json_formats(data, capsys):
    _, md, _ = run_cli(cli_compare.main, ["--one-round", data["base"], data["slow"], "--format", "markdown"], capsys)
    assert "| case | unit | [1] | [2] | [2]/[1] | verdict [2] |" in md
    assert re.search(r"\| `Transfer/dir:h2d/mem:pinned/bytes:1024` \| GB/s \| .* \| slower \(p=", md)
    _, text, _ = run_cli(cli_compare.main, ["--one-round", data["base"], data["slow"], "--format", "csv"], capsys)
    rows = list(csv.DictReader(io.StringIO(text)))
    assert {r["verdict_2"] for r in rows} == {"same", "slower"}
    r = next(r for r in rows if r["case"] == "Transfer/dir:h2d/mem:pinned/bytes:268435456")
    assert float(r["ratio_2"]) == pytest.approx(0.9, rel=0.02) and r["tested_2"] == "1" and r["n_1"] == "5"
    _, js, _ = run_cli(cli_compare.main, ["--one-round", data["base"], data["slow"], "--format", "json"], capsys)
    d = json.loads(js)
    assert {f["family"] for f in d["families"]} == {"Transfer", "Overlap", "SyncPlacement", "SmallCopy", "HostBlocking"}


def test_colour_only_when_asked_or_on_a_terminal(data, capsys, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    _, out, _ = run_cli(cli_compare.main, ["--one-round", data["base"], data["slow"]], capsys)
    assert "\033[" not in out  # captured output is not a terminal
    _, out, _ = run_cli(cli_compare.main, ["--one-round", data["base"], data["slow"], "--color", "always"], capsys)
    assert "\033[31m" in out


def test_plain_google_benchmark_json_is_accepted_with_one_note(data, capsys):
    code, out, _ = run_cli(cli_compare.main, ["--one-round", data["plain"], data["base"]], capsys)
    assert code == 0
    notes = [ln for ln in out.splitlines() if "plain Google Benchmark JSON" in ln]
    assert len(notes) == 1 and data["plain"] in notes[0]


def test_benchmark_1_7_and_1_8_files_compare(data, capsys):
    code, out, _ = run_cli(cli_compare.main, ["--one-round", data["gb171"], data["base"]], capsys)
    assert code == 0 and "Google Benchmark" in out  # the version differs and is shown


def test_errored_cases_are_shown_not_dropped():
    a = synth.make_run(families=("Transfer",), full=True, reps=5, seed=1)
    b = synth.make_run(families=("Transfer",), full=True, reps=5, seed=2)
    fa, fb = benchmark_file_from_doc("a.json", a), benchmark_file_from_doc("b.json", b)
    res = compare([fa, fb])
    errs = [r for r in res.rows if r.versus[1].verdict == "error"]
    assert errs and all("registered" in r.key for r in errs)
    from gpu_bench_tools.compare.render import render_table
    assert "Cases without a figure" in render_table(res) and "cannot allocate" in render_table(res)


def test_a_case_whose_link_errors_rose_is_marked_in_words_and_its_gpus_readings_are_not_judged(tmp_path):
    """link_errors_rose (docs/json.md) marks the case in every form of the comparison; power, temperature and
    clocks at a case's start and end, however they differ, change no verdict."""
    import gatefiles as gf
    from gpu_bench_tools.compare.render import render_json, render_markdown, render_table

    a = gf.read(gf.GATE_H100)
    b = gf.read(gf.GATE_H100)
    for e in b["benchmarks"]:
        e.update(power_w_start=650.0, power_w_end=700.0, temp_c_start=85.0, temp_c_end=90.0,
                 sm_clock_mhz_start=345.0, sm_clock_mhz_end=345.0, mem_clock_mhz_start=1593.0,
                 mem_clock_mhz_end=1593.0)
    gf.entry(b, "Transfer/dir:h2d/mem:pinned/")["link_errors_rose"] = 3.0
    fa = benchmark_file_from_doc(gf.write(tmp_path / "a.json", a), a)
    fb = benchmark_file_from_doc(gf.write(tmp_path / "b.json", b), b)
    res = compare([fa, fb])
    assert verdicts(res) == verdicts(compare([fa, benchmark_file_from_doc("a2.json", gf.read(gf.GATE_H100))]))
    key = "Transfer/dir:h2d/mem:pinned/bytes:268435456"
    assert res.case_notes == [(key, 1, "link error counters rose during this case (by 3)")]
    assert f"Notes on cases (1):\n  [2] {key}: link error counters rose during this case (by 3)\n" in render_table(res)
    assert f"- [2] `{key}`: link error counters rose during this case (by 3)" in render_markdown(res)
    assert json.loads(render_json(res))["case_notes"] == [
        {"case": key, "file": 1, "note": "link error counters rose during this case (by 3)"}]
    assert "Notes on cases" not in render_table(compare([fb, fa], case_filter="d2h"))


@pytest.mark.cpu_time
def test_two_full_matrix_files_compare_in_under_two_seconds(tmp_path, capsys):
    a = synth.write(tmp_path / "a.json", synth.make_run(full=True, seed=1))
    b = synth.write(tmp_path / "b.json", synth.make_run(full=True, seed=2, slow=SLOW))
    importlib.import_module("scipy.stats")  # the interpreter's one-off import, not the comparison

    # The comparison's own CPU time: a wall clock also counts whatever else shares the 2 cores, and the
    # collector would also walk every object the suite's earlier tests left alive (frozen here).
    gc.collect()
    gc.freeze()
    try:
        t0 = time.process_time()
        code, out, _ = run_cli(cli_compare.main, ["--one-round", a, b], capsys)
        took = time.process_time() - t0
    finally:
        gc.unfreeze()
    assert code == 0 and out.count("\n") > 1800
    assert took < 2.0, f"comparison took {took:.2f} s of CPU"


def test_a_two_node_run_compares_case_for_case_with_a_one_node_run(tmp_path, capsys):
    # On a host with several NUMA nodes Transfer adds numa:remote twins and keeps every other name, so a
    # one-node and a two-node machine compare on the shared cases and the twins are listed, not mismatched.
    one = RESULTS / "numa" / "numa_probe_h100.json"
    doc = json.loads(one.read_text())
    twins = []
    for b in doc["benchmarks"]:
        if "/mem:pinned/" in b["name"]:
            t = dict(b, name=b["name"].replace("/mem:pinned/", "/mem:pinned/numa:remote/"))
            t["run_name"] = t["name"]
            twins.append(t)
    assert twins
    doc["benchmarks"] += twins
    doc["context"].update({"host.numa_nodes": "2", "host.numa_binding": "node 0", "host.numa_thread": "node 0"})
    two = tmp_path / "two_nodes.json"
    two.write_text(json.dumps(doc))
    code, out, err = run_cli(cli_compare.main, ["--one-round", str(one), str(two)], capsys)
    assert code == 0, err
    res = compare([load_file(str(one)), load_file(str(two))])
    assert len(res.rows) == len(doc["benchmarks"]) - len(twins)
    part = out.split("Cases not in every file")[1]
    for t in twins:
        assert f"{t['name'].removesuffix('/manual_time')}  only in [2]" in part
    assert "host NUMA nodes" in out and "host memory bound to" in out


@pytest.mark.floors
def test_default_runs_say_which_cases_are_widened_and_why(capsys):
    """Two default runs of three rounds: HostBlocking's headline is the last round's alone, which its rounds do
    not record, so those cases are judged on the floor; the note names them and says so, not 'one round'."""
    run = REPO / "results" / "aa" / "h200_default_f799a91"
    code, out, err = run_cli(cli_compare.main, [str(run / "default_h200_run1.json.gz"),
                                                str(run / "default_h200_run2.json.gz"),
                                                "--filter", "HostBlocking/mem:pinned|Transfer/dir:h2d/mem:pinned"], capsys)
    assert code == 0, err
    notes = [ln for ln in out.splitlines() if "between-run floor" in ln]
    assert len(notes) == 1, out
    assert notes[0].startswith("warning: 12 comparison(s) (all 12 HostBlocking cases, e.g. HostBlocking/mem:pinned/")
    assert "judge host_blocked_us, which each run reports from its last round alone" in notes[0]
    assert "one round on a side" not in out


def _slowed_doc(path, case_rx, pct):
    """Run `path` (JSON, gzip or not) with the cases matching `case_rx` made `pct` percent slower: times, round
    times and time counters up, rates down."""
    import gzip
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as fh:
        doc = json.load(fh)
    k = 1.0 + pct / 100.0
    for b in doc["benchmarks"]:
        if not re.search(case_rx, b["name"]):
            continue
        b["real_time"] *= k
        b["cpu_time"] *= k
        b["round_times_s"] = [t * k for t in b.get("round_times_s", [])]
        for name in list(b):
            if name in ("gbps", "bytes_per_second") or name.startswith("gbps_"):
                b[name] /= k
            elif name.endswith(("_us", "_ms", "_ns")) and isinstance(b[name], float):
                b[name] *= k
    return doc


def test_two_runs_of_one_build_do_not_fail_the_gate_but_a_regression_of_a_few_cases_does(tmp_path, capsys):
    """Two default runs of one build on one H200: 8 of 565 cases come out slower by more than 5% at p < 0.05,
    as chance gives among so many. --fail-on-regression holds their p-values over every case and so passes, and
    says which it set aside. Four pinned copies 8% slower in the second run still fail it, by name."""
    run = RESULTS / "aa" / "h200_default_38703f5"
    first, second = str(run / "default_h200_run1.json.gz"), str(run / "default_h200_run2.json.gz")
    code, out, err = run_cli(cli_compare.main, [first, second, "--fail-on-regression", "5"], capsys)
    assert code == 0, err
    note = re.search(r"note: (\d+) case\(s\) called slower by more than 5% are not counted as regressions", err)
    assert note and int(note[1]) == 8, err
    assert "Transfer/dir:d2h/mem:managed_prefetch/bytes:268435456 36.5%" in err or "and 5 more" in err

    slow_rx = r"^Transfer/dir:h2d/mem:pinned/bytes:(16777216|67108864|268435456|1073741824)/"
    slow = synth.write(tmp_path / "slow.json", _slowed_doc(second, slow_rx, 8))
    code, out, err = run_cli(cli_compare.main, [first, slow, "--fail-on-regression", "5"], capsys)
    assert code == 1, err
    named = re.findall(r"\[2\] (Transfer/dir:h2d/mem:pinned/bytes:\d+): [\d.]+% slower \(p=\S+, q=\S+ over every case\)",
                       err)
    assert sorted(named) == sorted(f"Transfer/dir:h2d/mem:pinned/bytes:{n}"
                                   for n in (16777216, 67108864, 268435456, 1073741824)), err


def test_a_side_of_one_round_names_its_cases(tmp_path, capsys):
    a = synth.write(tmp_path / "a.json", synth.make_run(schema="2", reps=3, families=("Transfer",)))
    b = synth.write(tmp_path / "b.json", synth.make_run(schema="2", reps=3, families=("Transfer",), seed=2))
    floors = tmp_path / "floors.toml"
    floors.write_text('measured_on = "test"\n[floor_pct]\nTransfer = 2.0\n')
    code, out, err = run_cli(cli_compare.main, ["--one-round", a, b, a, "--floors", str(floors)], capsys)
    assert code == 0, err
    notes = [ln for ln in out.splitlines() if "between-run floor" in ln]
    said = re.match(r"warning: (\d+) comparison\(s\) have one round on a side \(all (\d+) Transfer cases, e.g. "
                    r"Transfer/", notes[0]) if len(notes) == 1 else None
    assert said and int(said[1]) == 2 * int(said[2]), out  # two files against the first, each case named once


# ---------------------------------------------------------------------------------------------
# The answer first: per family, memory kind, direction and size band, from the cases' verdicts

BIG = r"bytes:(4194304|33554432|268435456)\b"  # synth's sizes of 1 MiB and more (the large band)


def test_the_answer_opens_the_output_with_large_copies_apart_from_small_ones(tmp_path, capsys):
    base = synth.write(tmp_path / "a.json", synth.make_run(seed=1, families=("Transfer",)))
    other = synth.write(tmp_path / "b.json", synth.make_run(gpu="H200", seed=2, families=("Transfer",), slow={
        f"Transfer/dir:bidir/mem:pinned/{BIG}": 1.15, r"Transfer/dir:h2d/mem:pinned/bytes:(1024|8192)\b": 0.5}))
    code, out, _ = run_cli(cli_compare.main, ["--one-round", base, other, "--filter", "mem:pinned"], capsys)
    assert code == 0
    files, answer, facts = out.split("\n\n")[:3]  # before the machines' facts and the table
    assert files.startswith("[1] H100") and facts.startswith("What differs between the files:")
    assert answer.startswith("How [2] compares with [1]")
    # Each memory kind, direction and size band says where [2] differs, by how much, and where it is the same.
    assert re.search(r"^  Transfer bidir pinned +4 MiB-256 MiB +3 cases +3 faster 1\.1[4-6](-1\.1[4-6])?x$", answer, re.M)
    assert re.search(r"^  Transfer h2d pinned +4 MiB-256 MiB +3 cases +3 same \(within 0\.\d+%\)$", answer, re.M)
    assert re.search(r"^  Transfer h2d pinned +1 KiB-8 KiB +2 cases +2 slower 0\.50x$", answer, re.M)
    assert re.search(r"^  Transfer bidir pinned +1 KiB-8 KiB +2 cases +2 same \(within 0\.\d+%\)$", answer, re.M)
    # No family line that averages the small copies' fixed costs with the large copies' bandwidth.
    assert "Geometric mean" not in out and not re.search(r"^ *Transfer \(\d+ cases\)", out, re.M)
    _, md, _ = run_cli(cli_compare.main, ["--one-round", base, other, "--format", "markdown"], capsys)
    assert md.index("How [2] compares with [1]") < md.index("| fact |") < md.index("| case |")
    assert re.search(r"^\| Transfer bidir pinned \| 4 MiB-256 MiB \| 3 \| 3 faster 1\.1", md, re.M)
    _, js, _ = run_cli(cli_compare.main, ["--one-round", base, other, "--format", "json"], capsys)
    group, = [g for g in json.loads(js)["groups"]
              if g["axes"] == {"dir": "bidir", "mem": "pinned"} and g["size_band"] == "large"]
    assert group["sizes"] == [1 << 22, 1 << 28] and group["verdicts"] == [None, {"faster": 3}]
    assert group["speeds"][1]["faster"][0] == pytest.approx(1.15, rel=0.02)


def test_a_node_total_is_compared_per_gpu_with_a_node_of_fewer_gpus(capsys):
    one = benchmark_file_from_doc("one.json", synth.make_multi_run(gpus=1, seed=1, families=("AllHost",)))
    four = benchmark_file_from_doc("four.json", synth.make_multi_run(gpus=4, seed=2, families=("AllHost",)))
    res = compare([one, four])
    assert res.rows and all(r.unit == "GB/s per GPU" for r in res.rows)
    for r in res.rows:
        total = four.cases[r.key].center("gbps")
        assert r.cells[1].center == pytest.approx(total / 4)
        # Four GPUs share the host's 150 GB/s: each gets 37.5, against one GPU's 55 (h2d) or 53 (d2h) alone.
        assert r.versus[1].ratio == pytest.approx(37.5 / (55.0 if "h2d" in r.key else 55.0 * 0.97), rel=0.02)
        assert r.versus[1].verdict == "slower"
    assert any("compared per GPU" in w and "[1] 1, [2] 4" in w for w in res.warnings)
    # The same files, the other way round, and two nodes of one size are compared as they are.
    assert all(r.unit == "GB/s per GPU" and r.versus[1].verdict == "faster" for r in compare([four, one]).rows)
    assert all(r.unit == "GB/s" for r in compare([four, four]).rows)


def test_what_differs_puts_the_gpus_of_a_node_that_agree_on_one_row(data, capsys):
    from gpu_bench_tools.compare.render import render_table

    res = compare([load_file(data["multi2"]), load_file(data["multi4"])])
    facts = render_table(res).split("What differs between the files:")[1].split("\n\n")[0]
    assert re.search(r"^  GPU 2, 3 +- +NVIDIA H100 80GB HBM3$", facts, re.M)
    assert re.search(r"^  GPU 2, 3 PCIe link \(now / max\) +- +gen5 x16 / gen5 x16$", facts, re.M)
    assert re.search(r"^  10 GPU pairs \(0->2, 0->3, 1->2, \.\.\.\) +- +nvlink, p2p yes, rank 0, atomics yes$", facts, re.M)
    assert "GPU 2 -> 3" not in facts and "GPU 3 PCI bus" in facts  # one bus per GPU
