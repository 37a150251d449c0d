"""A case whose descriptor names the machine's own cause of its spread (family.*.machine_variance): compare, the
report and the A/A report say the cause in words where its spread passes 25%, and keep the percentage
elsewhere. Planted in two real default runs of one H200."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from conftest import REPO, run_cli
from gpu_bench_tools.cli import aa as cli_aa
from gpu_bench_tools.cli import compare as cli_compare

RUNS = [REPO / "results/aa/h200_default_f799a91" / f"default_h200_run{i}.json.gz" for i in (1, 2)]
# Two machines, for the report (which takes runs of one machine together): an H200 and an H100 of one build.
MACHINES = [RUNS[0], REPO / "results/aa/h100_default_f799a91/default_h100_run1.json.gz"]
# What gpu_bench writes since its descriptors carry the rule (harness/run/registry.hpp, the families' files).
HOST_CPU = "the host CPU's state, which a virtual machine changes between processes (host.clock_read_ns)"
TRANSFER_CAUSE = ("the host CPU's state and the host's memory, which a virtual machine changes between processes, "
                  "and for managed memory the latency the driver's page migration settles on in each process")
RULES = {"syncplacement": "yes", "events": "yes", "launch": "yes", "hostblocking": "yes", "alloc": "yes",
         "smallcopy": "yes", "batch": "yes", "transfer": "mem:pageable|mem:managed_prefetch|mem:managed_fault"}
# The planted cases: each run's second round twelve times the first's, the second run's 20% slower; one case
# whose family names a cause and one whose family names none.
WILD = ("SyncPlacement/op:add/sync:events", "Streams/kind:blocking")
KEPT = re.compile(r"^(SyncPlacement/|Streams/kind:|Transfer/dir:h2d/mem:(pinned|pageable)/bytes:(1048576|268435456)/)")
SYNC_EVENTS = "SyncPlacement/op:add/sync:events"
STREAMS = "Streams/kind:blocking"


def _spread_wildly(e: dict, slower: float) -> None:
    """The case's rounds spread wildly and `slower` times as long, with noise_pct, detectable_pct and its time as
    gpu_bench's model makes them from the rounds (stats/rounds.py, as combine_rounds)."""
    from gpu_bench_tools.stats import rounds as model

    times = [t * slower for t in e["round_times_s"]]
    times[1] = times[0] * 12.0
    fig = model.combine(times, 0.0, model.Prior(e["round_prior_sd"], e["round_prior_dof"]))
    e["round_times_s"] = times
    e["real_time"] = fig.center * {"ns": 1e9, "us": 1e6, "ms": 1e3}[e["time_unit"]]
    e["noise_pct"], e["detectable_pct"] = 100.0 * fig.half_width, 100.0 * fig.detectable


def planted(tmp: Path, with_rule: bool, runs: list[Path] = RUNS) -> list[str]:
    """The runs cut to a few families' cases, the planted cases spread wildly, and with `with_rule` the
    descriptors' machine_variance keys as gpu_bench now writes them."""
    out = []
    for run, path in enumerate(runs):
        doc = json.loads(gzip.decompress(path.read_bytes()))
        doc["benchmarks"] = [e for e in doc["benchmarks"] if KEPT.search(e["name"])]
        for e in doc["benchmarks"]:
            if e["name"].startswith(WILD):
                _spread_wildly(e, 1.2 if run else 1.0)  # a change within the spread: noisy, not same
        if with_rule:
            ctx = doc["context"]
            for slug in [k.split(".")[1] for k in ctx if k.startswith("family.") and k.endswith(".name")]:
                rule = RULES.get(slug, "no")
                ctx[f"family.{slug}.machine_variance"] = rule
                if rule != "no":
                    ctx[f"family.{slug}.machine_variance_cause"] = TRANSFER_CAUSE if slug == "transfer" else HOST_CPU
        dest = tmp / f"{'new' if with_rule else 'old'}_{path.name.removesuffix('.gz')}"
        dest.write_text(json.dumps(doc))
        out.append(str(dest))
    return out


@pytest.fixture(scope="module")
def new_pair(tmp_path_factory) -> list[str]:
    return planted(tmp_path_factory.mktemp("machine_variance"), with_rule=True)


@pytest.fixture(scope="module")
def old_pair(tmp_path_factory) -> list[str]:
    return planted(tmp_path_factory.mktemp("machine_variance_old"), with_rule=False)


def _report(tmp: Path, with_rule: bool) -> tuple[str, str]:
    """The report's headline and comparison sections of the planted H200 and H100."""
    from gpu_bench_tools.reading.load import load_file
    from gpu_bench_tools.report.page import build_report

    page = build_report([load_file(p) for p in planted(tmp, with_rule, MACHINES)], with_plots=False)
    heads = page.split(">Headline numbers</h2>")[1].split("<h2")[0]
    full = page.split(">Comparison against [1]</h2>")[1].split("<h2")[0]
    return heads, full


def _row(text: str, case: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(case + " "))


def test_the_descriptor_names_which_cases_vary_with_the_machine(new_pair):
    from gpu_bench_tools.reading.load import load_file

    f = load_file(new_pair[0])
    assert f.descriptor("SyncPlacement").machine_cause(SYNC_EVENTS) == HOST_CPU
    transfer = f.descriptor("Transfer")
    assert transfer.machine_cause("Transfer/dir:h2d/mem:pageable/bytes:1048576") == TRANSFER_CAUSE
    assert transfer.machine_cause("Transfer/dir:d2h/mem:managed_fault/bytes:4096") == TRANSFER_CAUSE
    assert transfer.machine_cause("Transfer/dir:h2d/mem:pinned/bytes:1048576") is None
    assert f.descriptor("Streams").machine_cause(STREAMS) is None


def test_compare_says_the_machines_own_variance_in_words_where_the_descriptor_names_it(new_pair, old_pair, capsys):
    code, text, _ = run_cli(cli_compare.main, new_pair, capsys)
    assert code == 0
    assert _row(text, SYNC_EVENTS).endswith("the machine's own variance")
    assert _row(text, STREAMS).endswith("noisy")  # no cause named: as before
    note = next(line for line in text.splitlines() if line.startswith("warning: the machine's own variance: "))
    assert f"spread beyond 25% and vary with {HOST_CPU}; gpu_bench cannot remove that" in note
    assert "of the 10 SyncPlacement cases" in note
    assert "within the machine's own variance" in next(
        line for line in text.splitlines() if line.strip().startswith("SyncPlacement "))
    _, js, _ = run_cli(cli_compare.main, [*new_pair, "--format", "json"], capsys)
    rows = {r["case"]: r for r in json.loads(js)["rows"]}
    assert rows[SYNC_EVENTS]["cells"][1]["machine_variance"] == HOST_CPU
    assert rows[SYNC_EVENTS]["versus"][1]["machine_variance"] is True
    assert rows[STREAMS]["cells"][1]["machine_variance"] is None and rows[STREAMS]["versus"][1]["verdict"] == "noisy"
    # Files without the key read as before.
    code, text, _ = run_cli(cli_compare.main, old_pair, capsys)
    assert code == 0
    assert _row(text, SYNC_EVENTS).endswith("noisy") and "machine's own" not in text


def _comparison_row(full: str, case: str) -> list[str]:
    row = re.search(rf"<code>{re.escape(case)}</code></td><td>us</td>(.*?)</tr>", full).group(1)
    return re.findall(r"<td[^>]*>([^<]*)</td>", row)


def _copy_row(heads: str) -> list[str]:
    """SyncPlacement's best copy in each machine's column (sync:none in both)."""
    row = re.search(r"<tr><td>copy</td>(.*?)</tr>", heads.split("SyncPlacement: ")[1]).group(1)
    return re.findall(r"<td[^>]*>([^<]*)</td>", row)


def test_the_report_shows_the_cause_in_place_of_the_percentage(tmp_path):
    heads, full = _report(tmp_path, with_rule=True)
    cause = HOST_CPU.replace("'", "&#x27;")
    # The H200's best copy spread past 100% (not repeatable): its cause in words. The H100's, at 20%, keeps its
    # interval and the change it can show.
    h200, h100 = _copy_row(heads)[0], _copy_row(heads)[1]
    assert h200 == f"2.1 us at sync: none, varies with {cause}"
    assert h100 == "2.40 ± 0.47 us (detects 14%) at sync: none"
    first, second, _ratio, verdict, detects = _comparison_row(full, SYNC_EVENTS)
    assert first.endswith(f", varies with {cause}") and second.endswith(f", varies with {cause}")
    assert "±" not in first + second and verdict == "the machine&#x27;s own variance" and detects == "-"
    assert "the case&#x27;s spread between processes passes 25% and is the machine&#x27;s own" in full
    # A case whose descriptor names no cause keeps its interval and the change it can show.
    first, second, _ratio, verdict, detects = _comparison_row(full, STREAMS)
    assert "varies with" not in first + second and ("±" in first or "not repeatable" in first)
    assert verdict.startswith("noisy") and detects.endswith("%")
    # Files without the key show the percentage, as before.
    heads, full = _report(tmp_path, with_rule=False)
    assert _copy_row(heads)[0] == "2.1 us, not repeatable at sync: none" and "varies with" not in heads + full
    first, _, _, verdict, detects = _comparison_row(full, SYNC_EVENTS)
    assert "±" in first or "not repeatable" in first
    assert verdict.startswith("noisy") and detects.endswith("%")


def test_the_aa_report_counts_the_cases_above_25_pct_by_whether_they_name_the_machines_cause(
        new_pair, old_pair, tmp_path, capsys):
    from gpu_bench_tools.reading.load import load_file

    out = tmp_path / "aa.json"
    code, text, _ = run_cli(cli_aa.main, ["report", *new_pair, "--json", str(out)], capsys)
    assert code == 0
    doc = json.loads(out.read_text())["above_machine_variance_pct"]
    files = [load_file(p) for p in new_pair]
    wide = [k for k in files[0].cases if any(
        max(f.cases[k].written_noise_pct() or 0, f.cases[k].written_detectable_pct() or 0) > 25 for f in files)]
    named = [k for k in wide if not k.startswith(("Streams/", "Transfer/dir:h2d/mem:pinned/"))]
    assert SYNC_EVENTS in named and STREAMS in doc["no_cause_cases"]
    assert (doc["named_cause"], doc["no_cause"]) == (len(named), len(wide) - len(named))
    assert doc["cases"] == len(files[0].cases)
    line = next(x for x in text.splitlines() if x.startswith("  above 25% "))
    assert f"{len(named)} case(s) whose descriptor names the machine's own cause" in line
    assert f"{len(wide) - len(named)} that name none (target 0: " in line and STREAMS in line
    # Files without the key name no cause: every such case counts as one that names none.
    run_cli(cli_aa.main, ["report", *old_pair, "--json", str(out)], capsys)
    assert json.loads(out.read_text())["above_machine_variance_pct"]["named_cause"] == 0


def test_compare_words_a_cause_once_when_its_files_word_it_differently(new_pair, tmp_path, capsys):
    # The first file from a gpu_bench that worded SyncPlacement's cause otherwise: one warning, in the last
    # file's words.
    doc = json.loads(Path(new_pair[0]).read_text())
    doc["context"]["family.syncplacement.machine_variance_cause"] = "an older wording of the host's state"
    older = tmp_path / "older_wording.json"
    older.write_text(json.dumps(doc))
    code, text, _ = run_cli(cli_compare.main, [str(older), new_pair[1]], capsys)
    assert code == 0
    notes = [line for line in text.splitlines() if line.startswith("warning: the machine's own variance: ")]
    syncplacement = [line for line in notes if "SyncPlacement" in line]
    assert len(syncplacement) == 1, notes
    assert f"vary with {HOST_CPU};" in syncplacement[0] and "older wording" not in syncplacement[0]
