"""Compare says where a file's host-driven cases moved one way together while the copies at the host link's
rate held: a host slower for a whole run, or a change in the driver's host path. Read on committed default
pairs: run 2 of 3c7e54b's pair met a host that slowed, 0ef4775's node runs did not."""

from __future__ import annotations

import gzip
import json

from conftest import REPO, run_cli
from gpu_bench_tools.cli import compare as cli_compare
from gpu_bench_tools.reading.load import load_file

SLOWED = [REPO / "results/aa/h200_default_3c7e54b" / f"default_h200_run{i}.json.gz" for i in (1, 2)]
STEADY = [REPO / "results/aa/h200x2_gpu0_default_0ef4775" / f"default_h200x2_gpu0_run{i}.json.gz" for i in (1, 2)]


def _notes(capsys, paths) -> list[str]:
    code, out, err = run_cli(cli_compare.main, [str(p) for p in paths], capsys)
    assert code == 0, err
    return [line for line in (out + err).splitlines() if "host-driven cases moved together" in line]


def test_a_run_whose_host_slowed_is_said_to_have_moved_its_host_driven_cases_together(capsys):
    notes = _notes(capsys, SLOWED)
    assert len(notes) == 1, notes
    assert notes[0].startswith("warning: [2]'s host-driven cases moved together: 215 of the 250 whose descriptor "
                               "names the machine's cause read slower than [1]'s (median +4.61%, + slower), while "
                               "the 53 copies at the host link's rate held (median +0.06%). 21 of the 33 slower "
                               "verdicts are among them ("), notes[0]
    assert notes[0].endswith("rerun both to tell them apart")


def test_runs_whose_host_held_get_no_such_note(capsys):
    assert _notes(capsys, STEADY) == []


def test_no_note_where_the_copies_at_the_link_rate_moved_as_well(tmp_path, capsys):
    """The slowed pair with run 2's link-bound copies 3% slower too: the whole machine moved, not its host alone."""
    f = load_file(str(SLOWED[1]))
    link = {k for k, c in f.cases.items() if f.descriptor(c.family).is_link_bound(c)}
    doc = json.loads(gzip.decompress(SLOWED[1].read_bytes()))
    moved = 0
    for e in doc["benchmarks"]:
        if e["name"].removesuffix("/manual_time") not in link:
            continue
        moved += 1
        for key in ("real_time", "cpu_time"):
            e[key] *= 1.03
        e["round_times_s"] = [t * 1.03 for t in e["round_times_s"]]
        for key in ("gbps", "bytes_per_second"):
            if key in e:
                e[key] /= 1.03
    assert moved == 53
    run2 = tmp_path / "run2.json"
    run2.write_text(json.dumps(doc))
    assert _notes(capsys, [SLOWED[0], run2]) == []


HOST_LOAD = REPO / "results/aa/host_load_h200"


def _busy_notes(capsys, paths) -> list[str]:
    code, out, err = run_cli(cli_compare.main, [str(p) for p in paths], capsys)
    assert code == 0, err
    return [line for line in (out + err).splitlines() if "busy host" in line]


def test_a_run_beside_busy_loops_is_said_to_have_run_on_a_busy_host(capsys):
    """Real runs on one H200: quiet, then beside eight busy loops on its 16 CPUs (gpu_bench.round_host)."""
    notes = _busy_notes(capsys, [HOST_LOAD / "hogs0_1.json.gz", HOST_LOAD / "hogs8_1.json.gz"])
    assert notes == ["warning: [2] ran on a busy host: other processes used 10% or more of its CPU time in the "
                     "median round (gpu_bench.round_host; [1] 0.9%; [2] 49.9%). Host-driven figures read slower and "
                     "noisier there, so a change in them may be the host's: rerun on a quiet host"], notes
    assert _busy_notes(capsys, [HOST_LOAD / "hogs0_1.json.gz", HOST_LOAD / "hogs0_2.json.gz"]) == []


def test_a_file_without_the_record_is_named_so_beside_a_busy_one(tmp_path, capsys):
    # The default pair predates gpu_bench.round_host.
    older = REPO / "results/aa/h200x2_gpu0_default_0ef4775" / "default_h200x2_gpu0_run1.json.gz"
    notes = _busy_notes(capsys, [HOST_LOAD / "hogs8_2.json.gz", older])
    assert len(notes) == 1 and "round_host; [1] 49.9%; [2] not recorded)" in notes[0] and notes[0].startswith(
        "warning: [1] ran on a busy host"), notes
    assert _busy_notes(capsys, [older, older]) == []
