"""The figures gpu_bench's C++ (harness/measure/stats.cpp) and the tools (gpu_bench_tools/stats/rounds.py) must
both give for one made-up family: tests/data/round_model.json. `python3 tools/tests/round_model_vectors.py
--write` writes it anew from the tools' implementation; test_round_model.py checks the tools still give it, and
the C++ unit test Rounds.TheModelMatchesTheTools that gpu_bench does."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VECTORS = ROOT / "tests" / "data" / "round_model.json"
sys.path.insert(0, str(ROOT / "tools"))


def made_up_family() -> list[dict]:
    """Cases of one family in four spread groups, each case's rounds drawn around 1 ms by its group's
    spread, some with five rounds, some with twelve (two trimmed and winsorized at each end), one with a round
    a millisecond slow."""
    rng = random.Random(20261127)
    cases = []
    for dir_, mem, sd, rounds in (("d2h", "pinned", 0.001, 5), ("h2d", "pinned", 0.01, 5),
                                  ("bidir", "pinned", 0.04, 3), ("bidir", "registered", 0.03, 12)):
        for k, nbytes in enumerate((1 << 20, 4 << 20, 16 << 20, 64 << 20, 256 << 20)):
            scale = sd * (0.5 + k / 4)  # the group's cases vary a little in their own spread too
            times = [1e-3 * (1 + rng.gauss(0, scale)) for _ in range(rounds)]
            cases.append({"name": f"F/dir:{dir_}/mem:{mem}/bytes:{nbytes}", "rounds": times,
                          "floor": 32e-9 / times[-1]})
    cases[2]["rounds"][1] += 1e-3  # one round a millisecond slow
    cases.append({"name": "F/dir:d2h/mem:pinned/bytes:4", "rounds": [5e-6, 5.2e-6, 4.9e-6], "floor": 0.0064})
    return cases


def expected(cases: list[dict]) -> dict:
    from gpu_bench_tools.stats import rounds as model

    priors = model.fit_file_priors({c["name"]: c["rounds"] for c in cases}, tick_s=32e-9)
    out = []
    for c in cases:
        p = priors[c["name"]]
        fig = model.combine(c["rounds"], c["floor"], p)
        out.append({"name": c["name"], "group": model.spread_group(c["name"]), "prior_sd": p.rel_sd,
                    "prior_dof": p.dof, "center": fig.center, "half_width": fig.half_width,
                    "detectable": fig.detectable})
    return {"tick_s": 32e-9, "cases": cases, "expected": out}


def main(argv: list[str]) -> int:
    doc = expected(made_up_family())
    if argv[1:] == ["--write"]:
        VECTORS.write_text(json.dumps(doc, indent=1) + "\n")
        return 0
    print(json.dumps(doc, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
