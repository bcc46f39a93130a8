import json
import sys

import numpy as np

d = json.load(open(sys.argv[1]))
ref = sys.argv[2] if len(sys.argv) > 2 else "cur"
thr = float(sys.argv[3]) if len(sys.argv) > 3 else None
r = np.array(d[ref])
for n, v in d.items():
    v = np.array(v)
    extra = f" P(>{thr})={np.mean(v > thr):.3f}" if thr is not None else ""
    print(
        f"{n:8s} mean {v.mean():.4f} med {np.median(v):.4f} q25 {np.quantile(v, 0.25):.3f} "
        f"P(>0.1)={np.mean(v > 0.1):.2f} win/loss vs {ref}: {np.sum(v > r + 1e-9)}/{np.sum(v < r - 1e-9)} "
        f"paired-diff mean {np.mean(v - r):+.4f} se {np.std(v - r) / np.sqrt(v.size):.4f}{extra}"
    )
