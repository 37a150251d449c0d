"""The rounds' model (stats/rounds.py): the figures gpu_bench's C++ must reproduce, sharp intervals for steady
cases among noisy ones, the comparison's moderated test and detectable_pct, and floors chosen by machine."""

import copy
import json
import math
import random

import pytest

import round_model_vectors
from gpu_bench_tools.compare.verdicts import compare
from gpu_bench_tools.reading.benchmark_json import benchmark_file_from_doc
from gpu_bench_tools.stats import rounds as model
from gpu_bench_tools.stats.floors import SPREAD_TO_HALF_WIDTH, load_floors


def test_the_shared_vectors_are_what_the_tools_compute():
    # tests/data/round_model.json is also what gpu_bench's unit test Rounds.TheModelMatchesTheTools checks.
    on_disk = json.loads(round_model_vectors.VECTORS.read_text())
    now = round_model_vectors.expected(on_disk["cases"])
    for want, got in zip(on_disk["expected"], now["expected"]):
        assert want["group"] == got["group"]
        for key in ("prior_sd", "prior_dof", "center", "half_width", "detectable"):
            assert got[key] == pytest.approx(want[key], rel=1e-9, abs=1e-15), (want["name"], key)


def _family(rng, groups, cases=6, rounds=4):
    """Each group's cases drawn with that group's spread between rounds (lognormal around 1 ms)."""
    return {f"F/dir:{g}/mem:pinned/bytes:{(1 << 20) << k}": [1e-3 * math.exp(rng.gauss(0, sd)) for _ in range(rounds)]
            for g, sd in groups.items() for k in range(cases)}


def test_a_steady_case_among_noisy_ones_gets_its_own_groups_narrow_interval():
    rng = random.Random(7)
    fam = _family(rng, {"d2h": 0.0005, "h2d": 0.03})
    priors = model.fit_file_priors(fam)
    steady = priors["F/dir:d2h/mem:pinned/bytes:1048576"]
    noisy = priors["F/dir:h2d/mem:pinned/bytes:1048576"]
    assert steady.rel_sd < 0.002 < 0.01 < noisy.rel_sd
    rounds = [1e-3, 1.0004e-3, 0.9996e-3, 1.0001e-3, 0.9999e-3]
    assert model.combine(rounds, 0.0, steady).half_width < 0.003
    # The same rounds in the noisy group agreed by chance: the interval is the group's.
    assert model.combine(rounds, 0.0, noisy).half_width > 0.02
    # With the family's cases pooled into one group (what gpu_bench did before), the steady case is blunt.
    pooled = model.fit_file_priors({k.replace("dir:h2d", "dir:d2h"): v for k, v in fam.items()})
    assert model.combine(rounds, 0.0, pooled["F/dir:d2h/mem:pinned/bytes:1048576"]).half_width > 0.01


def test_the_center_is_the_fastest_half_of_five_rounds_or_more_and_the_median_below():
    assert model.center_of([333e-6, 336e-6, 1333e-6, 333e-6, 333e-6]) == pytest.approx(333e-6)
    assert model.center_of([334e-6, 336e-6, 1333e-6, 1400e-6, 333e-6]) == pytest.approx((333e-6 + 334e-6 + 336e-6) / 3)
    assert model.center_of([1.0, 9.0, 1.0, 9.0, 1.0, 9.0, 1.0, 9.0]) == 1.0
    assert model.center_of([1.0, 3.0, 2.0]) == 2.0
    assert model.center_of([1.0, 2.0]) == 1.5
    assert model.center_of([1.0, 2.0], "trimmed25") == 1.5  # older files keep their own center


def _steady_run(rng, step=1.0, n_cases=12, rounds=5, sd=0.002):
    """A gpu_bench file of link-bound copies whose rounds spread by `sd`, made `step` times slower."""
    benchmarks = []
    for k in range(n_cases):
        name = f"Transfer/dir:d2h/mem:pinned/bytes:{(1 << 20) << (k % 6)}" + ("" if k < 6 else "/numa:remote")
        times = [1e-3 * step * math.exp(rng.gauss(0, sd)) for _ in range(rounds)]
        center = model.center_of(times)
        benchmarks.append({"name": name + "/manual_time", "run_name": name + "/manual_time", "run_type": "iteration",
                           "repetitions": 1, "repetition_index": 0, "iterations": 1, "real_time": center * 1e6,
                           "cpu_time": 1.0, "time_unit": "us", "gbps": 1.0 / center, "noise_pct": 0.5,
                           "round_times_s": times})
    return {"context": {"gpu_bench.schema": "2", "gpu.name": "NVIDIA H200", "gpu_bench.round_center": "trimmed",
                        "family.transfer.name": "Transfer", "family.transfer.headline": "gbps",
                        "family.transfer.unit": "GB/s", "family.transfer.better": "higher",
                        "family.transfer.headline_kind": "rate", "family.transfer.axes": "dir,mem,bytes,numa"},
            "benchmarks": benchmarks}


def test_a_two_percent_step_in_steady_copies_is_called_and_identical_runs_are_not():
    rng = random.Random(11)
    a = benchmark_file_from_doc("a", _steady_run(rng))
    same = benchmark_file_from_doc("b", _steady_run(rng))
    slower = benchmark_file_from_doc("c", _steady_run(rng, step=1.02))
    assert not [r for r in compare([a, same]).rows if r.versus[1].verdict in ("faster", "slower")]
    verdicts = [r.versus[1] for r in compare([a, slower]).rows]
    assert all(v.verdict == "slower" and v.method == "moderated-rounds" for v in verdicts), verdicts
    assert all(v.detectable_pct == pytest.approx(model.MIN_EFFECT_PCT) for v in verdicts)


def test_a_change_below_a_sides_detectable_pct_is_not_called():
    rng = random.Random(12)
    a_doc, b_doc = _steady_run(rng), _steady_run(rng, step=1.03)
    for b in a_doc["benchmarks"]:
        b["detectable_pct"] = 4.0  # what gpu_bench wrote: this run cannot show less than 4%
    verdicts = [r.versus[1] for r in compare([benchmark_file_from_doc("a", a_doc),
                                               benchmark_file_from_doc("b", b_doc)]).rows]
    assert all(v.verdict == "noisy" and v.detectable_pct == 4.0 for v in verdicts), verdicts


def test_a_written_prior_is_the_one_the_test_uses():
    rng = random.Random(13)
    a_doc, b_doc = _steady_run(rng, n_cases=2), _steady_run(rng, n_cases=2, step=1.02)
    for doc in (a_doc, b_doc):
        for b in doc["benchmarks"]:
            b["round_prior_sd"], b["round_prior_dof"] = 0.05, 40.0  # a group that spreads 5% between rounds
    f = benchmark_file_from_doc("a", a_doc)
    assert f.cases["Transfer/dir:d2h/mem:pinned/bytes:1048576"].round_prior() == (0.05, 40.0)
    verdicts = [r.versus[1].verdict for r in compare([f, benchmark_file_from_doc("b", b_doc)]).rows]
    assert set(verdicts) <= {"noisy", "same"}, verdicts  # 2% is inside a 5% spread
    bad = copy.deepcopy(a_doc)
    bad["benchmarks"][0]["round_prior_dof"] = "many"
    with pytest.raises(Exception, match="round_prior_sd' and 'round_prior_dof"):
        benchmark_file_from_doc("bad", bad)


def test_floors_are_chosen_by_the_files_gpu_model(tmp_path):
    floors = tmp_path / "floors.toml"
    floors.write_text('measured_on = "test"\n[floor_pct]\nTransfer = 5.0\n"Transfer/mem:pinned" = 4.0\n'
                      '[machine."H200".floor_pct]\nTransfer = 3.0\n"Transfer/dir:d2h/mem:pinned/size:large" = 0.5\n')
    f = load_floors(floors)
    group = "Transfer/dir:d2h/mem:pinned/size:large"
    assert f.half_width_pct("Transfer", "pinned", group, "H200") == pytest.approx(0.5 * SPREAD_TO_HALF_WIDTH)
    assert f.half_width_pct("Transfer", "pinned", "Transfer/dir:h2d/mem:pinned/size:large", "H200") == \
        pytest.approx(3.0 * SPREAD_TO_HALF_WIDTH)
    # A GPU model no A/A measured gets the larger floors of every model.
    assert f.half_width_pct("Transfer", "pinned", group, "B200") == pytest.approx(4.0 * SPREAD_TO_HALF_WIDTH)
    # One-round files of an H200 made 10% slower: called slower on the H200's floors.
    rng = random.Random(14)
    docs = [_steady_run(rng, rounds=1), _steady_run(rng, rounds=1, step=1.1)]
    for doc in docs:
        for b in doc["benchmarks"]:
            del b["round_times_s"]
    files = [benchmark_file_from_doc(n, d) for n, d in zip("ab", docs)]
    assert {r.versus[1].verdict for r in compare(files, floors=f).rows} == {"slower"}
    for doc in docs:
        doc["context"]["gpu.name"] = "NVIDIA B200"
    files = [benchmark_file_from_doc(n, d) for n, d in zip("ab", docs)]
    assert "slower" not in {r.versus[1].verdict for r in compare(files, floors=f).rows}
