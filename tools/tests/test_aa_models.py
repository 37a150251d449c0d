"""gpu-bench-aa models: candidate models re-read on committed A/A runs, with and without their extra rounds."""

from __future__ import annotations

from conftest import aa_set, run_cli

from gpu_bench_tools.aa import models
from gpu_bench_tools.cli.aa import main
from gpu_bench_tools.reading.load import load_files

SET = "h200x4_default_471714a"


def _run1():
    return load_files([str(aa_set(SET) / "default_h200x4_run1.json.gz")])[0]


def test_dropping_extra_rounds_keeps_the_rounds_before_them_and_the_last():
    f = _run1()
    planned = int(f.fact("gpu_bench.link_rounds"))
    before = {k: list(c.samples[0].round_times_s) for k, c in f.cases.items()
              if c.samples and c.samples[0].round_times_s}
    extra = [k for k, t in before.items() if len(t) > planned]
    assert extra, "the set's link-bound cases took extra rounds"
    models.drop_extra_rounds(f)
    for key, times in before.items():
        now = f.cases[key].samples[0].round_times_s
        if len(times) > planned:
            assert now == times[:planned - 1] + [times[-1]]
        else:
            assert now == times


def test_models_without_extra_rounds_says_so_and_judges_every_model(capsys):
    code, out, err = run_cli(main, ["models", str(aa_set(SET)), "--without-extra-rounds"], capsys)
    assert code == 0, err
    assert "extra rounds dropped" in out
    for m in models.MODELS:
        assert f"  {m.name} " in out
