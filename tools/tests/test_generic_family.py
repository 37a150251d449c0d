"""A family the tools have no code for goes through every tool by its descriptor alone (docs/json.md)."""

import copy
import json
import re
import xml.etree.ElementTree as ET

import pytest

import synth
from conftest import REPO, aa_set, run_cli
from gpu_bench_tools.cli import compare as cli_compare, plot as cli_plot, report as cli_report
from gpu_bench_tools import plot
from gpu_bench_tools.compare.verdicts import compare
from gpu_bench_tools.reading.load import InputError, benchmark_file_from_doc, load_file
from gpu_bench_tools.reading.families import link_bound_oracle
from gpu_bench_tools.reading.files import read_text
from gpu_bench_tools.report.headlines import headlines


def svg_text(path):
    return " ".join(ET.parse(path).getroot().itertext())


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    d = tmp_path_factory.mktemp("probe")
    base = synth.make_run(schema="2", families=("Probe",), seed=21)
    slow = synth.make_run(schema="2", families=("Probe",), seed=22, slow={"Probe/mode:loud": 0.8})
    return synth.write(d / "probe_a.json", base), synth.write(d / "probe_b.json", slow)


def test_the_descriptor_is_read_from_the_context(probe):
    f = load_file(probe[0])
    d = f.descriptor("Probe")
    assert (d.headline, d.unit, d.better, d.headline_kind, d.plot) == (
        "probe_score", "pt", "higher", "rate", {"x": "depth", "panel": "mode"})
    assert not d.inferred and d.axes == ("mode", "depth") and d.kind == "probe"
    # Families compiled in but not run are known too, and do not become cases.
    assert f.descriptor("Transfer").host_link == "dir:h2d|dir:d2h|dir:bidir"
    assert {c.family for c in f.cases.values()} == {"Probe"}


def test_a_case_is_link_bound_by_its_familys_rule_from_one_mib_and_by_the_oracle_without_one(tmp_path):
    """docs/json.md: link_bound is 'yes', 'no' or key:value tokens, and speaks only of cases of 1 MiB and more.
    A file without the key is read as the tools read every file before it: link_bound_oracle."""
    doc = synth.make_run(schema="2", families=("Transfer",), reps=1)
    doc["context"]["family.transfer.link_bound"] = "mem:pageable"
    f = benchmark_file_from_doc("with_rule", doc)
    d = f.descriptor("Transfer")
    assert d.link_bound == "mem:pageable"
    bound = {c.key for c in f.cases.values() if d.is_link_bound(c)}
    mib = {c.key for c in f.cases.values() if c.axis_int("bytes") >= 1 << 20}
    assert bound and bound == {k for k in mib if "/mem:pageable/" in k} and mib - bound
    for rule, expected in (("yes", mib), ("no", set())):
        doc["context"]["family.transfer.link_bound"] = rule
        d = benchmark_file_from_doc(rule, doc).descriptor("Transfer")
        assert {c.key for c in f.cases.values() if d.is_link_bound(c)} == expected
    del doc["context"]["family.transfer.link_bound"]
    d = benchmark_file_from_doc("without", doc).descriptor("Transfer")
    assert d.link_bound is None
    assert [d.is_link_bound(c) for c in f.cases.values()] == [link_bound_oracle(c) for c in f.cases.values()]
    assert any(link_bound_oracle(c) for c in f.cases.values())


def test_committed_runs_carry_the_link_bound_rule_and_the_oracle_agrees_on_transfer():
    """Real files written since the rule was: Transfer's pinned and registered copies of 1 MiB and more, as the
    oracle has them, and AllHost's copies, which the oracle never knew."""
    for name in ("h200_default_f799a91", "h200x4_default_64ce113"):
        f = load_file(next(aa_set(name).glob("*run1.json.gz")))
        assert f.fact("family.transfer.link_bound") == "mem:pinned|mem:registered"
        transfer = [c for c in f.cases.values() if c.family == "Transfer"]
        bound = {c.key for c in transfer if f.descriptor("Transfer").is_link_bound(c)}
        assert len(bound) == 48 and bound == {c.key for c in transfer if link_bound_oracle(c)}
        allhost = [c for c in f.cases.values() if c.family == "AllHost"]
        assert allhost and all(f.descriptor("AllHost").is_link_bound(c) for c in allhost)


def test_compare_uses_the_headline_its_unit_and_its_direction(probe, capsys):
    res = compare([load_file(p) for p in probe])
    assert {r.metric for r in res.rows} == {"probe_score"} and {r.unit for r in res.rows} == {"pt"}
    v = {r.key: r.versus[1] for r in res.rows}
    loud = {k for k in v if "mode:loud" in k}
    assert all(v[k].verdict == "slower" and v[k].ratio == pytest.approx(0.8, rel=0.03) for k in loud)
    assert {v[k].verdict for k in v if k not in loud} <= {"same", "noisy"}
    code, out, err = run_cli(cli_compare.main, ["--one-round", *probe, "--fail-on-regression", "10"], capsys)
    assert code == 1 and "4 regression(s) beyond 10%" in err
    assert re.search(r"^Probe/mode:loud/depth:8\s+pt\s", out, re.M)


def test_plot_draws_the_hinted_layout(probe, tmp_path, capsys):
    code, out, err = run_cli(cli_plot.main, [*probe, "--out", str(tmp_path), "--format", "svg"], capsys)
    assert code == 0, err
    assert out.split()[0] == "probe" and len(out.splitlines()) == 1
    text = svg_text(tmp_path / "probe.svg")
    for s in ("Probe probe_score vs. depth", "probe_score (pt), higher is better", "mode: loud", "mode: quiet",
              "a family the tools were never taught", "depth"):
        assert s in text, s


def test_report_has_its_headline_and_its_figure(probe, tmp_path, capsys):
    out = tmp_path / "r.html"
    code, _, err = run_cli(cli_report.main, [*probe, "--out", str(out)], capsys)
    assert code == 0, err
    page = out.read_text()
    assert ">Probe: a family the tools were never taught</h2>" in page
    assert "Probe: best probe_score (higher is better" in page
    h = dict(headlines([load_file(p) for p in probe])[0].rows)
    assert set(h) == {"loud", "quiet"} and all(c.endswith("pt at depth: 1") for c in h["quiet"])


def test_a_bar_chart_where_the_descriptor_has_no_plot_hint(tmp_path):
    doc = synth.make_run(schema="2", families=("Probe",))
    doc["context"]["family.probe.plot"] = ""
    made = plot.make_plots([benchmark_file_from_doc("p.json", doc)], tmp_path, formats=("svg",))
    assert [p.stem for p in made] == ["probe"]
    assert "Probe: probe_score per case" in svg_text(made[0].paths[0])


@pytest.mark.parametrize("key,value,message", [
    ("better", "sideways", "family.probe.better is 'sideways', not 'higher' or 'lower'"),
    ("headline", "", "family.probe.headline is missing"),
    ("headline_kind", "log", "family.probe.headline_kind is 'log'"),
    ("plot", "x:depth", "plot hint 'x:depth' is not KEY=AXIS"),
])
def test_a_broken_descriptor_is_one_line(key, value, message):
    doc = synth.make_run(schema="2", families=("Probe",))
    doc["context"][f"family.probe.{key}"] = value
    with pytest.raises(InputError, match=re.escape(message)):
        benchmark_file_from_doc("p.json", doc)


def test_schema_1_and_2_are_read_and_another_is_refused(tmp_path, capsys):
    one = synth.make_run(families=("Transfer",))
    two = synth.make_run(schema="2", families=("Transfer",))
    assert benchmark_file_from_doc("1.json", one).schema == "1"
    assert benchmark_file_from_doc("2.json", two).schema == "2"
    three = copy.deepcopy(two)
    three["context"]["gpu_bench.schema"] = "3"
    p = tmp_path / "three.json"
    p.write_text(json.dumps(three))
    for main, argv in ((cli_compare.main, ["--one-round", str(p), str(p)]), (cli_plot.main, [str(p), "--out", str(tmp_path)]),
                       (cli_report.main, [str(p), "--out", str(tmp_path / "r.html")])):
        code, _, err = run_cli(main, argv, capsys)
        assert code == 2 and len(err.strip().splitlines()) == 1
        assert "gpu_bench.schema '3' is unknown (these tools read 1, 2)" in err


def test_a_schema_1_file_compares_with_a_schema_2_file(tmp_path):
    one = benchmark_file_from_doc("1.json", synth.make_run(families=("Transfer",), seed=3))
    two = benchmark_file_from_doc("2.json", synth.make_run(schema="2", families=("Transfer",), seed=4))
    res = compare([one, two])
    assert res.rows and {r.metric for r in res.rows} == {"gbps"}
    assert dict(res.context_diff)["host link"] == ["-", "PCIe gen5 x16"]


def test_a_series_of_several_axes_puts_twins_side_by_side(tmp_path, capsys):
    """series=mem,engine: a kind's copy-engine and SM lines share the panel of their direction."""
    doc = json.loads(read_text(REPO / "results/sampled/default_h100.json.gz"))
    doc["context"]["family.transfer.plot"] = "x=bytes;series=mem,engine;panel=dir"
    keep = [b for b in doc["benchmarks"] if re.match(r"Transfer/dir:h2d/mem:pinned/bytes:\d+/", b["name"])]
    twins = copy.deepcopy(keep)
    for b in twins:
        for k in ("name", "run_name"):
            b[k] = b[k].replace("mem:pinned/", "mem:pinned/engine:sm/")
        b["gbps"] *= 0.9
    doc["benchmarks"] = keep + twins
    path = synth.write(tmp_path / "engines.json", doc)
    code, out, err = run_cli(cli_plot.main, [str(path), "--out", str(tmp_path / "p"), "--format", "svg"], capsys)
    assert code == 0, err
    figures = [line.split()[0] for line in out.splitlines()]
    assert len(figures) == 1, out  # not one figure per engine
    text = svg_text(tmp_path / "p" / f"{figures[0]}.svg")
    assert "mem: pinned, engine: sm" in text and "mem: pinned" in text.replace("mem: pinned, engine: sm", "")
