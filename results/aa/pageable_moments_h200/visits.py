"""What a round made of several moments would spread, from the probe's own moments. Each probe process stands
for a round; a round of V visits is the median of V of its 12 moments, drawn without replacement. Prints, per
set and case, the sd (of the log, in percent) of such a round between processes, for V of 1, 2, 4, 8 and 12,
over 2,000 draws. The probe's moments lie 0.2 to about 2 s apart; visits spread over a round's process would
lie further apart. Run as `python3 visits.py` in this folder (numpy)."""
import collections
import gzip
import json
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
CASES = ["h2d_4B", "d2h_4B", "h2d_1MiB", "d2h_1MiB", "h2d_16MiB", "d2h_16MiB", "h2d_256MiB", "d2h_256MiB"]
VISITS = [1, 2, 4, 8, 12]
DRAWS = 2000


def moments(folder, mode):
    """{case: [one array of log times per process]} of the "same" buffer's moments."""
    out = collections.defaultdict(list)
    for path in sorted((HERE / folder).glob(f"{mode}_*.jsonl.gz")):
        by_case = collections.defaultdict(list)
        with gzip.open(path, "rt") as f:
            for line in f:
                r = json.loads(line)
                if r["phase"] == "same":
                    by_case[r["case"]].append(np.log(r["us"]))
        for case, v in by_case.items():
            out[case].append(np.array(v))
    return out


def round_sd_pct(per_process, visits, rng):
    """The sd between processes of a round that is the median of `visits` moments, averaged over draws."""
    sds = []
    for _ in range(DRAWS):
        rounds = [np.median(rng.choice(m, size=visits, replace=False)) for m in per_process]
        sds.append(np.std(rounds, ddof=1))
    return 100 * float(np.sqrt(np.mean(np.square(sds))))


def main():
    rng = np.random.default_rng(57)
    print("sd between processes of a round of V moments (percent of the log); each process one round")
    for folder, mode in [("first", "renew"), ("second", "renew"), ("second", "held"), ("third", "renew"),
                         ("third", "held")]:
        gpu = (HERE / folder / "gpus.txt").read_text().strip().splitlines()[-1].split(",")[0]
        data = moments(folder, mode)
        print(f"\n{folder}/{mode} ({'held' if mode == 'held' else 'free'}), {gpu}, {len(data[CASES[0]])} processes")
        print(f"  {'case':12}" + "".join(f"{f'V={v}':>8}" for v in VISITS))
        for case in CASES:
            print(f"  {case:12}" + "".join(f"{round_sd_pct(data[case], v, rng):7.2f}%" for v in VISITS))


if __name__ == "__main__":
    main()
