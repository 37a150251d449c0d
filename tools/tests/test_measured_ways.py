"""A case gpu_bench measures in a later way than an earlier version did (family.*.revisions): compare calls no
change on it between files of different ways, and says why. Two real default runs of one H200 on each side of
af69a7f, which times a bidirectional copy by its slower direction: the pinned one of 4 B read 8.4 us before and
3.7 us after, and compare called it 2.2 times faster."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from conftest import REPO, run_cli
from gpu_bench_tools.cli import compare as cli_compare
from gpu_bench_tools.cli import history as cli_history

BEFORE = REPO / "results/aa/h200_default_e085eef/default_h200_run2.json.gz"
AFTER = [REPO / "results/aa/h200_default_af69a7f" / f"default_h200_run{i}.json.gz" for i in (1, 2)]
KEPT = re.compile(r"^Transfer/dir:(bidir|h2d)/mem:pinned/bytes:(4|1048576|268435456)/")
BIDIR_4B = "Transfer/dir:bidir/mem:pinned/bytes:4"


def cut(path: Path, dest: Path, revisions: bool, machine_of: Path | None = None) -> str:
    """The run's pinned h2d and bidir copies of 4 B, 1 MiB and 256 MiB; with `revisions`, the descriptors'
    revisions keys as gpu_bench writes them since af69a7f (its files of that commit predate the key); with
    `machine_of`, that run's GPU and host facts, so history takes both runs for one machine's nights."""
    doc = json.loads(gzip.decompress(path.read_bytes()))
    doc["benchmarks"] = [e for e in doc["benchmarks"] if KEPT.search(e["name"])]
    if revisions:
        doc["context"]["family.transfer.revisions"] = "2=dir:bidir"
        doc["context"]["family.allhost.revisions"] = "2=dir:bidir"
    if machine_of is not None:
        other = json.loads(gzip.decompress(machine_of.read_bytes()))["context"]
        doc["context"].update({k: v for k, v in other.items() if k.startswith(("gpu.", "host", "profile."))})
    dest.write_text(json.dumps(doc))
    return str(dest)


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, str]:
    tmp = tmp_path_factory.mktemp("ways")
    return {"before": cut(BEFORE, tmp / "before.json", False),
            "after1": cut(AFTER[0], tmp / "after1.json", True),
            "after2": cut(AFTER[1], tmp / "after2.json", True),
            "after_here": cut(AFTER[0], tmp / "after_here.json", True, machine_of=BEFORE)}


def verdicts(out: str) -> dict[str, dict]:
    return {r["case"]: r["versus"][1] for r in json.loads(out)["rows"]}


def test_no_change_is_called_across_ways(files, capsys):
    code, out, err = run_cli(cli_compare.main, [files["before"], files["after1"], "--format", "json"], capsys)
    assert code == 0, err
    v = verdicts(out)
    bidir = {k: x for k, x in v.items() if "/dir:bidir/" in k}
    assert len(bidir) == 3
    for case, x in bidir.items():
        assert x["measured_differently"] == "way 1 in [1], way 2 in [2]", case
        assert x["verdict"] not in ("faster", "slower"), case
    assert v[BIDIR_4B]["speed"] > 2.0  # what compare called faster before it knew the ways
    # The one-way copies are of way 1 in both files, and compared as ever.
    assert all(x["measured_differently"] is None for k, x in v.items() if "/dir:h2d/" in k)


def test_the_table_and_the_notes_say_why(files, capsys):
    code, out, err = run_cli(cli_compare.main, [files["before"], files["after1"]], capsys)
    assert code == 0, err
    text = out + err
    assert "Transfer bidir pinned" in text and "measured differently" in text
    assert re.search(r"measured differently: 3 case\(s\) \(all 3 Transfer bidir|measured differently: 3 case\(s\)",
                     text)
    assert "CHANGELOG.md" in text


def test_a_slower_figure_of_another_way_is_no_regression(files, capsys):
    # The later file first: the earlier one reads the bidir copies of 4 B and 1 MiB 55.6% and 5.4% slower, which
    # --fail-on-regression 5 called two regressions before compare knew the ways.
    code, out, err = run_cli(cli_compare.main, [files["after1"], files["before"], "--fail-on-regression", "5"],
                             capsys)
    assert code == 0, err
    assert "regression" not in err
    assert "too few samples" not in err  # a case measured differently is not an untested one


def test_files_of_one_way_are_compared(files, capsys):
    code, out, err = run_cli(cli_compare.main, [files["after1"], files["after2"], "--format", "json"], capsys)
    assert code == 0, err
    v = verdicts(out)
    assert all(x["measured_differently"] is None for x in v.values())
    assert v[BIDIR_4B]["verdict"] in ("same", "noisy", "faster", "slower")


def test_history_judges_a_case_only_against_nights_of_its_way(files, tmp_path, capsys):
    # Three nights before the upgrade and one after, on one machine: the check called the bidir copies of 4 B
    # and 1 MiB improvements of 124.2% and 5.9% before it knew the ways.
    earlier = [cut(BEFORE.with_name(f"default_h200_run{i}.json.gz"), tmp_path / f"night{i}.json", False)
               for i in (1, 2)]
    doc = json.loads(Path(earlier[0]).read_text())
    doc["context"]["date"] = "2026-11-29T10:00:00+00:00"  # a third night, before the other two
    (tmp_path / "night0.json").write_text(json.dumps(doc))
    db = str(tmp_path / "h.db")
    for path in [str(tmp_path / "night0.json"), *earlier, files["after_here"]]:
        code, _, err = run_cli(cli_history.main, ["--db", db, "ingest", path], capsys)
        assert code == 0, err
    code, out, err = run_cli(cli_history.main, ["--db", db, "check"], capsys)
    assert code == 0, out + err
    assert "0 regression(s), 0 improvement(s)" in out, out
    assert "3 case(s) not checked" in out and "measured them in another way" in out


def test_fleet_judges_a_case_beside_gpus_that_measured_it_the_same_way(tmp_path, capsys):
    # Three GPUs after the upgrade and one before: the one before read the bidir copies under 1 MiB 1.2 to 2.4
    # times slower, and the fleet flagged it for them before it knew the ways.
    from gpu_bench_tools.cli import fleet as cli_fleet

    every_size = re.compile(r"^Transfer/dir:(bidir|h2d)/mem:pinned/bytes:\d+/")
    paths = []
    for n, (src, revisions) in enumerate([(AFTER[0], True), (AFTER[1], True), (AFTER[0], True), (BEFORE, False)]):
        doc = json.loads(gzip.decompress(src.read_bytes()))
        doc["benchmarks"] = [e for e in doc["benchmarks"] if every_size.search(e["name"])]
        ctx = doc["context"]
        if revisions:
            ctx["family.transfer.revisions"] = "2=dir:bidir"
        ctx["host_name"] = f"node{n}"
        ctx["gpu.uuid"] = f"GPU-0000000{n}-0000-0000-0000-000000000000"
        ctx.pop("gpu.0.uuid", None)
        path = tmp_path / f"node{n}.json"
        path.write_text(json.dumps(doc))
        paths.append(str(path))
    code, out, err = run_cli(cli_fleet.main, ["--min-cohort", "3", "--format", "json", *paths], capsys)
    assert code == 0, err
    report = json.loads(out)
    assert not report["gpus_flagged"] and not report["flags"] and not report["lone_outliers"], report["summary"]
    # The 15 one-way copies, of one way in all four files, are judged over four GPUs, the 15 bidir ones over the
    # three of way 2; the one GPU of way 1 is too few for its bidir copies.
    cohort = report["cohorts"][0]
    assert (cohort["gpus"], cohort["cases_judged"], cohort["cases_too_few"]) == (4, 30, 15)


def test_a_size_token_holds_from_its_number_up():
    # Alloc's way 2 is its cases of 1 GiB and more: a --sizes run's 4 GiB case is measured as its 1 GiB one.
    from gpu_bench_tools.reading.families import parse_revisions, way_of

    revisions = parse_revisions("2=bytes>=1073741824", "family.alloc.revisions")
    assert way_of(revisions, "Alloc/op:malloc_host/bytes:1073741824") == 2
    assert way_of(revisions, "Alloc/op:malloc_host/bytes:4294967296") == 2
    assert way_of(revisions, "Alloc/op:malloc_host/bytes:67108864") == 1
    assert way_of(revisions, "Alloc/op:malloc_async/pool:warm") == 1  # no size to judge by
    old = parse_revisions("2=bytes:1073741824", "family.alloc.revisions")  # as earlier files write it
    assert way_of(old, "Alloc/op:malloc_host/bytes:1073741824") == 2
    assert way_of(old, "Alloc/op:malloc_host/bytes:4294967296") == 1
