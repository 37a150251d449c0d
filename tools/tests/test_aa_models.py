"""gpu-bench-aa models: candidate models re-read on committed A/A runs, with and without their extra rounds."""

from __future__ import annotations

import pytest
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


def test_the_quarter_candidate_drops_and_winsorizes_two_of_eight_rounds():
    from gpu_bench_tools.reading.cases import round_center
    from gpu_bench_tools.stats import rounds

    times = [1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 1.9, 1.8]  # two rounds a burst slowed
    assert round_center(times, "trimmed") == pytest.approx(sum(sorted(times)[1:-1]) / 6)
    assert round_center(times, "trimmed25") == pytest.approx(sum(sorted(times)[2:-2]) / 4)
    fifth, _ = rounds.own_spread(times, True, "trimmed")
    quarter, dof = rounds.own_spread(times, True, "trimmed25")
    assert quarter < fifth / 10  # the second slow round no longer widens it
    assert dof == rounds.winsorized_dof(8, "trimmed25")
    # Up to seven rounds the two trim alike.
    seven = times[:7]
    assert round_center(seven, "trimmed") == round_center(seven, "trimmed25")
    assert rounds.own_spread(seven, True, "trimmed")[0] == rounds.own_spread(seven, True, "trimmed25")[0]


def test_the_fastest_rounds_centers_ignore_the_rounds_a_burst_slowed():
    times = [1.0, 1.02, 0.98, 1.9, 1.8]
    assert models.center_value(times, "fastest") == 0.98
    assert models.center_value(times, "fastest_half") == pytest.approx((0.98 + 1.0 + 1.02) / 3)
    assert models.center_value(times[:4], "fastest_half") == pytest.approx((1.0 + 1.02) / 2)  # the median
    assert models.center_value(times, "median") == 1.02


def test_centers_say_how_far_each_moves_between_consecutive_runs(capsys):
    code, out, err = run_cli(main, ["models", "--centers", str(aa_set(SET))], capsys)
    assert code == 0, err
    for name, _ in models.CENTERS:
        assert f"  {name} " in out
    files = load_files(sorted(str(p) for p in aa_set(SET).glob("*.json.gz")))
    agreement = {a.center: a for a in models.center_agreement(files)}
    assert len(agreement["fastest"].moves_pct) == 48  # the pinned and registered copies of 1 MiB and more
    moves = agreement["trimmed25"].moves_pct
    assert agreement["trimmed25"].quantile(1.0) == max(moves)
    assert agreement["trimmed25"].quantile(0.5) == sorted(moves)[len(moves) // 2]


def test_the_fastest_half_tables_match_a_simulation():
    """Its variance factor and degrees of freedom, against 2e5 draws of eight and of thirteen rounds."""
    import numpy as np

    from gpu_bench_tools.stats import rounds

    rng = np.random.default_rng(8)
    for n in (8, 13):
        h = (n + 1) // 2
        x = np.sort(rng.standard_normal((200_000, n)), axis=1)
        factor = float(x[:, :h].mean(axis=1).var())
        assert rounds.variance_factor(n, "fastest_half") == pytest.approx(factor, rel=0.02)
        w = np.concatenate([x[:, :h], np.repeat(x[:, h - 1:h], n - h, axis=1)], axis=1)
        est = (n - 1) * w.var(axis=1, ddof=1) / (h * (h - 1)) / factor
        assert float(est.mean()) == pytest.approx(1.0, abs=0.02)
        assert rounds.winsorized_dof(n, "fastest_half") == pytest.approx(2 * est.mean() ** 2 / est.var(), rel=0.05)


def test_the_fastest_half_spread_ignores_the_slower_half():
    from gpu_bench_tools.stats import rounds

    steady = [1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 1.0, 1.01]
    burst = steady[:4] + [1.9, 1.8, 2.5, 1.01]  # three rounds of eight a burst slowed
    assert rounds.own_spread(burst, True, "fastest_half")[0] < 2 * rounds.own_spread(steady, True, "fastest_half")[0]
    assert rounds.own_spread(burst, True, "trimmed25")[0] > 100 * rounds.own_spread(steady, True, "trimmed25")[0]


def test_the_shipped_model_calls_a_slowed_run_as_compare_does():
    """`models` re-reads the model gpu_bench ships; on a pair whose copies it judges it must call the same
    copies slower as gpu-bench-compare, whose change is |speed - 1| on the headline (a rate's fall, not the
    time's rise). The bidirectional registered 256 MiB copy of this set sits between the two measures."""
    from gpu_bench_tools.aa.altered import slowed
    from gpu_bench_tools.aa.figures import is_detection_copy
    from gpu_bench_tools.compare.verdicts import compare

    files = load_files([str(p) for p in sorted(aa_set("h100_default_c774a23").glob("*.json.gz"))])
    shipped = next(m for m in models.MODELS if m.name == "groups-fastest-half")
    judged = [models.judge_run(f, shipped) for f in files]
    cmp = compare([files[0], slowed(files[1], 3.0)])
    verdicts = {row.key: row.versus[1].verdict for row in cmp.rows if row.versus[1] is not None}
    keys = [k for k in judged[0] if is_detection_copy(files[0], files[0].cases[k]) and k in judged[1]]
    assert "Transfer/dir:bidir/mem:registered/bytes:268435456" in keys
    for key in keys:
        assert (models._called(shipped, judged[0][key], judged[1][key], 3.0) == 1) == (verdicts[key] == "slower"), key
