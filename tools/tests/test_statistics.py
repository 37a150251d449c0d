"""Per-case statistics: a case's p-value is its own, the exact method where samples are few, noise from the JSON."""

import itertools
import json
import random
import re
import statistics
from pathlib import Path

import pytest

import synth
from conftest import REPO, run_cli
from gpu_bench_tools.cli import compare as cli_compare
from gpu_bench_tools.stats import nonparametric
from gpu_bench_tools.compare.verdicts import compare
from gpu_bench_tools.reading.load import benchmark_file_from_doc, load_file

H100 = REPO / "results" / "transfer_h100_reps5.json"
H200 = REPO / "results" / "transfer_h200_reps5.json"


def subset(path, keys, tmp_path, name):
    doc = json.loads(Path(path).read_text())
    doc["benchmarks"] = [e for e in doc["benchmarks"] if e["run_name"].removesuffix("/manual_time") in keys]
    p = tmp_path / name
    p.write_text(json.dumps(doc))
    return load_file(p)


def test_a_cases_p_value_does_not_depend_on_the_other_cases(tmp_path):
    full = compare([load_file(H100), load_file(H200)])
    tested = [r for r in full.rows if r.versus[1].tested]
    # Among them, cases whose repetitions tie (which switched every row of a batch to another method).
    assert any(nonparametric._method(r.cells[0].values, r.cells[1].values) != "exact" for r in tested)
    sample = random.Random(7).sample(tested, 10)
    for r in sample:
        alone = compare([subset(H100, {r.key}, tmp_path, "a.json"), subset(H200, {r.key}, tmp_path, "b.json")])
        assert alone.rows[0].versus[1].p_value == r.versus[1].p_value, r.key
        assert alone.rows[0].versus[1].verdict == r.versus[1].verdict


def test_tied_and_untied_rows_in_one_batch_keep_their_own_method():
    untied = ([1.0, 2.0, 3.0, 4.0, 5.0], [6.0, 7.0, 8.0, 9.0, 10.0])
    tied = ([1.0, 2.0, 2.0, 4.0, 5.0], [6.0, 7.0, 8.0, 8.0, 10.0])
    alone = nonparametric.u_test_pvalues([untied])[0]
    together = nonparametric.u_test_pvalues([tied, untied, tied])[1]
    assert alone == together == (pytest.approx(2 / 252), "exact")
    assert nonparametric.u_test_pvalues([tied])[0] == (pytest.approx(2 / 252), "permutation")


def test_five_against_five_can_be_significant_at_alpha_001(capsys, tmp_path):
    key = "Transfer/dir:h2d/mem:pinned/bytes:1048576"
    a = synth.write(tmp_path / "a.json", synth.doc_from_values({key: [50.0, 50.1, 50.2, 50.3, 50.4]}))
    b = synth.write(tmp_path / "b.json", synth.doc_from_values({key: [40.0, 40.1, 40.2, 40.3, 40.4]}))
    res = compare([load_file(a), load_file(b)], alpha=0.01)
    v = res.rows[0].versus[1]
    assert v.tested and v.method == "exact" and v.p_value == pytest.approx(2 / 252) and v.verdict == "slower"
    code, _, err = run_cli(cli_compare.main, ["--one-round", a, b, "--alpha", "0.01", "--fail-on-regression", "5"], capsys)
    assert code == 1 and "19.9% slower (p=0.0079)" in err


def test_three_against_three_cannot_reach_005_so_it_is_not_called_tested(tmp_path):
    key = "Transfer/dir:h2d/mem:pinned/bytes:1048576"
    a = benchmark_file_from_doc("a.json", synth.doc_from_values({key: [50.0, 50.1, 50.2]}))
    b = benchmark_file_from_doc("b.json", synth.doc_from_values({key: [40.0, 40.1, 40.2]}))
    v = compare([a, b]).rows[0].versus[1]
    assert nonparametric.smallest_p(3, 3) == pytest.approx(0.1)
    assert not v.tested and v.verdict == "slower"  # shown as 'slower?': the ratio and the noise alone


def test_a_change_inside_the_noise_gpu_bench_wrote_is_not_a_verdict():
    key = "Transfer/dir:h2d/mem:pinned/bytes:1048576"
    docs = [synth.doc_from_values({key: v}) for v in ([50.0, 50.1, 50.2, 50.3, 50.4], [46.0, 46.1, 46.2, 46.3, 46.4])]
    for doc, noise in zip(docs, (3.0, 9.0)):  # the second run said its figures were good to 9%
        for e in doc["benchmarks"]:
            e.update(samples=11, noise_pct=noise)
        doc["context"]["gpu_bench.schema"] = "2"
    a, b = (benchmark_file_from_doc(f"{n}.json", d) for n, d in zip("ab", docs))
    v = compare([a, b]).rows[0].versus[1]
    assert v.tested and v.p_value < 0.05 and v.noise_pct == 9.0 and v.verdict == "noisy"
    assert compare([a, b]).rows[0].cells[1].noise_from == "gpu_bench"


def test_per_sample_values_are_the_test_where_both_files_have_them():
    a = benchmark_file_from_doc("a.json", synth.make_run(schema="2", families=("Probe",), reps=1, samples=15,
                                                        sample_times=True, seed=1))
    b = benchmark_file_from_doc("b.json", synth.make_run(schema="2", families=("Probe",), reps=1, samples=15,
                                                        sample_times=True, seed=2, slow={"mode:loud": 0.9}))
    res = compare([a, b])
    for r in res.rows:
        assert r.cells[0].samples and len(r.cells[0].values) == 15 and r.cells[0].n == 1
        assert r.versus[1].tested  # one repetition a side, but 15 samples each
    assert {r.versus[1].verdict for r in res.rows if "loud" in r.key} == {"slower"}
    assert {r.versus[1].verdict for r in res.rows if "quiet" in r.key} <= {"same", "noisy"}


def test_noise_is_the_confidence_interval_of_the_median():
    from scipy.stats import quantile_test

    vals = [random.Random(3).gauss(100, 2) for _ in range(40)]
    ci = quantile_test(vals, q=100, p=0.5).confidence_interval(0.95)
    expected = (ci.high - ci.low) / 2 / sorted(vals)[19:21][0] * 100
    assert nonparametric.noise_pct(vals) == pytest.approx(expected, rel=0.05)
    assert nonparametric.noise_pct([100.0, 102.0, 98.0]) == pytest.approx(2.0)  # under six values: the full range
    assert nonparametric.noise_pct([100.0]) is None


def test_the_median_interval_keeps_its_asymmetry():
    # The GPU tests judge a ratio by its factors' interval ends: a symmetric half-width around the median
    # would put the interval of [1200, 4000, 4100] above its own smallest value.
    assert nonparametric.median_ci([4000.0, 1200.0, 4100.0]) == (1200.0, 4100.0)
    vals = [float(v) for v in range(20)]
    lo, hi = nonparametric.median_ci(vals)
    assert lo < statistics.median(vals) < hi and (lo, hi) != (0.0, 19.0)
    assert nonparametric.median_ci([1.0, float("nan")]) is None


@pytest.mark.parametrize("n1,n2", list(itertools.product((2, 3, 5, 8), (2, 5, 9))))
def test_smallest_p_is_what_the_exact_test_gives_for_complete_separation(n1, n2):
    a, b = [float(i) for i in range(n1)], [float(100 + i) for i in range(n2)]
    assert nonparametric.u_test_pvalues([(a, b)])[0][0] == pytest.approx(nonparametric.smallest_p(n1, n2))


def test_the_smallest_p_of_many_samples_is_zero_not_an_overflow():
    # 600 against 600 samples: C(1200, 600) is far beyond the largest float.
    assert nonparametric.smallest_p(600, 600) == 0.0
    assert nonparametric.smallest_p(2, 2) == pytest.approx(1 / 3)


def test_two_sampled_default_runs_compare(capsys):
    # The committed default matrices with every sample (--samples=on): cases with hundreds of samples a side.
    h100, h200 = (REPO / "results" / "sampled" / f"default_{g}.json.gz" for g in ("h100", "h200"))
    code, out, err = run_cli(cli_compare.main, ["--one-round", str(h100), str(h200)], capsys)
    assert code == 0 and "Traceback" not in err, err
    assert re.search(r"^  Transfer h2d pinned +1 MiB-1 GiB ", out, re.M) and "Batch" not in out
