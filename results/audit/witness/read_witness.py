import json

import numpy as np

from audit import scorer_from_witness

row = json.load(open("scale.json"))["rows"][0]
score = scorer_from_witness(row["witness"])  # the certified statistic, rebuilt from the result file
rng = np.random.default_rng(0)
for scale in (1.0, 1.1):  # releases as the row's encoding says the audit read them: here (n, 1020) as released
    hits = np.mean(score(scale * rng.standard_normal((10_000, 1020))) >= row["threshold"])
    print(f"noise scale {scale}: {row['event']} holds for {hits:.1%} of fresh releases")
