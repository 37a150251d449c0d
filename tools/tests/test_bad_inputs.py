"""Each bad input the tools met in use: one line on stderr, exit status 2, nothing drawn, no traceback."""

import gzip
import json
import os
import subprocess
import sys
import threading

import pytest

import synth
from conftest import run_cli, subprocess_env
from gpu_bench_tools.cli import compare as cli_compare, history as cli_history, plot as cli_plot, report as cli_report


def one_line_exit_2(code, err, expected):
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert expected in lines[0], lines[0]


def good(tmp_path):
    return synth.write(tmp_path / "good.json", synth.make_run(families=("Transfer",), reps=2))


def every_tool(tmp_path, bad):
    g = good(tmp_path)
    return [(cli_compare.main, [g, bad]), (cli_plot.main, [bad, "--out", str(tmp_path / "plots")]),
            (cli_report.main, [bad, "--out", str(tmp_path / "r.html")]),
            (cli_history.main, ["--db", str(tmp_path / "h.sqlite"), "ingest", bad])]


def assert_refused_everywhere(tmp_path, bad, expected, capsys):
    for main, argv in every_tool(tmp_path, bad):
        code, _, err = run_cli(main, argv, capsys)
        one_line_exit_2(code, err, expected)
    assert not (tmp_path / "r.html").exists() and not (tmp_path / "h.sqlite").exists()
    assert not (tmp_path / "plots").exists() or not any((tmp_path / "plots").iterdir())


def test_a_negative_real_time(tmp_path, capsys):
    doc = synth.make_run(families=("Transfer",), reps=2)
    doc["benchmarks"][1]["real_time"] = -12.5  # a repetition
    doc["benchmarks"][4]["real_time"] = -3.0  # an aggregate
    assert_refused_everywhere(tmp_path, synth.write(tmp_path / "neg.json", doc), "'real_time' is negative", capsys)


def test_dev_zero_is_not_read(tmp_path, capsys):
    assert_refused_everywhere(tmp_path, "/dev/zero", "a device, not a JSON file", capsys)


def test_a_fifo_is_not_opened(tmp_path, capsys):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    done = threading.Event()
    result = {}

    def go():
        result["code"] = cli_compare.main([good(tmp_path), str(fifo)])
        done.set()

    t = threading.Thread(target=go, daemon=True)
    t.start()
    assert done.wait(10), "gpu-bench-compare hung on a FIFO"
    err = capsys.readouterr().err
    one_line_exit_2(result["code"], err, "a FIFO, not a JSON file")
    assert_refused_everywhere(tmp_path, str(fifo), "a FIFO, not a JSON file", capsys)


def test_a_gzip_file_reads_as_its_json_and_a_damaged_one_is_refused(tmp_path, capsys):
    plain = good(tmp_path)
    packed = tmp_path / "run.json.gz"
    packed.write_bytes(gzip.compress(open(plain, "rb").read()))
    code, out, err = run_cli(cli_compare.main, ["--one-round", plain, str(packed), "--format", "json"], capsys)
    assert code == 0, err
    rows = json.loads(out)["rows"]
    assert rows and all(r["versus"][1]["verdict"] == "same" for r in rows)
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(packed.read_bytes()[: len(packed.read_bytes()) // 2])
    assert_refused_everywhere(tmp_path, str(cut), "a damaged gzip file", capsys)


def test_trailing_junk_is_not_called_truncated(tmp_path, capsys):
    p = tmp_path / "junk.json"
    p.write_text(json.dumps(synth.make_run(families=("Transfer",), reps=2)) + "\nSegmentation fault\n")
    assert_refused_everywhere(tmp_path, str(p), "not one JSON document: text after its end", capsys)


def test_two_runs_concatenated_in_one_file(tmp_path, capsys):
    a, b = (json.dumps(synth.make_run(families=("Transfer",), reps=2, seed=s)) for s in (1, 2))
    p = tmp_path / "two.json"
    p.write_text(a + "\n" + b)
    assert_refused_everywhere(tmp_path, str(p), "a second JSON document after its end", capsys)
    # The same two runs' benchmarks joined in one list: a second repetition 0 of the first case.
    doc = synth.make_run(families=("Transfer",), reps=2, seed=1)
    doc["benchmarks"] += synth.make_run(families=("Transfer",), reps=2, seed=2)["benchmarks"]
    assert_refused_everywhere(tmp_path, synth.write(tmp_path / "joined.json", doc),
                              "a second repetition 0 of Transfer/dir:h2d/mem:pageable/bytes:1024/manual_time", capsys)


def test_a_file_with_nothing_usable(tmp_path, capsys):
    doc = synth.make_run(families=("Transfer",), reps=1)
    for e in doc["benchmarks"]:
        e.update(error_occurred=True, error_message="CUDA error: no CUDA-capable device is detected")
    p = synth.write(tmp_path / "nothing.json", doc)
    for main, argv in every_tool(tmp_path, p)[:3]:
        code, _, err = run_cli(main, argv, capsys)
        one_line_exit_2(code, err, "no case has a figure")
    # History records such a night: its cases are newly failing.
    code, out, _ = run_cli(cli_history.main, ["--db", str(tmp_path / "h.sqlite"), "ingest", p], capsys)
    assert code == 0 and "1 run(s) added" in out


def test_nan_timestamps_in_a_timeline(tmp_path, capsys):
    doc = synth.make_timeline()
    doc["traceEvents"][3]["ts"] = float("nan")
    p = tmp_path / "nan_trace.json"
    p.write_text(json.dumps(doc))  # json writes NaN, which Python's reader accepts
    for main, argv in ((cli_plot.main, ["--timeline", str(p), "--out", str(tmp_path / "plots")]),
                       (cli_plot.main, [str(p), "--out", str(tmp_path / "plots")]),
                       (cli_report.main, ["--timeline", str(p), "--out", str(tmp_path / "r.html")])):
        code, _, err = run_cli(main, argv, capsys)
        one_line_exit_2(code, err, "traceEvents[3]: 'ts' is not a finite number")
    assert not (tmp_path / "plots").exists() or not any((tmp_path / "plots").iterdir())


def test_a_chrome_trace_from_another_program(tmp_path, capsys):
    doc = synth.make_timeline()
    doc["otherData"] = {"source": "chrome://tracing"}
    p = tmp_path / "browser_trace.json"
    p.write_text(json.dumps(doc))
    for main, argv in ((cli_plot.main, ["--timeline", str(p), "--out", str(tmp_path / "plots")]),
                       (cli_plot.main, [str(p), "--out", str(tmp_path / "plots")]),
                       (cli_report.main, [str(p), "--out", str(tmp_path / "r.html")])):
        code, _, err = run_cli(main, argv, capsys)
        one_line_exit_2(code, err, "a Chrome trace from another program")
    assert not (tmp_path / "plots").exists() or not any((tmp_path / "plots").iterdir())
    code, _, err = run_cli(cli_compare.main, [good(tmp_path), str(p)], capsys)
    one_line_exit_2(code, err, "a Chrome trace (such as a --timeline file), not benchmark results")


@pytest.mark.parametrize("argv,expected", [
    (["--alpha", "2"], "--alpha: must be between 0 and 1"),
    (["--alpha", "0"], "--alpha: must be between 0 and 1"),
    (["--alpha", "nan"], "--alpha: must be between 0 and 1"),
])
def test_alpha_outside_0_1_is_a_usage_error(tmp_path, capsys, argv, expected):
    g = good(tmp_path)
    code, _, err = run_cli(cli_compare.main, [g, g, *argv], capsys)
    assert code == 2 and expected in err and "Traceback" not in err


@pytest.mark.parametrize("dpi", ["0", "-5", "ten"])
def test_dpi_of_zero_or_less_is_a_usage_error(tmp_path, capsys, dpi):
    code, _, err = run_cli(cli_plot.main, [good(tmp_path), "--out", str(tmp_path / "p"), "--dpi", dpi], capsys)
    assert code == 2 and "--dpi" in err and "Traceback" not in err
    assert not (tmp_path / "p").exists()


def test_a_real_process_on_dev_zero_prints_one_line(tmp_path):
    p = subprocess.run([sys.executable, "-m", "gpu_bench_tools.cli.compare", "/dev/zero", "/dev/zero"],
                       capture_output=True, text=True, env=subprocess_env(), timeout=60)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "a device" in p.stderr
