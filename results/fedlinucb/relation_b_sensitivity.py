"""Relation (b) against the per-user sensitivity: the norm of the difference of Private-FedLinUCB's first
tree node between the two streams of a canary pair, with the noise switched off and the system's λ
kept, against √6 (replace-one-user sensitivity of relation (a)). Run from the repository root:
PYTHONPATH=. python results/fedlinucb/relation_b_sensitivity.py"""

import numpy as np

from pgc.fedlinucb.algorithms import stat_width
from pgc.fedlinucb.systems import NODE_SENSITIVITY, BanditSystem

for B, T in ((4, 32), (8, 64), (16, 64), (32, 64)):
    s = BanditSystem("private-fedlinucb", horizon=T, batch=B)
    s.sigma = 0.0  # the noise switched off, λ kept (the system passes its own λ): the exact first node
    w = stat_width(s.config.dim)
    for name in ("a-first-user-swap", "b-steering-user", "b-first-user"):
        pos, neg = s.canaries()[name]
        d = (
            s.release(pos, 1, np.random.default_rng(0))["messages"][0, :w]
            - s.release(neg, 1, np.random.default_rng(0))["messages"][0, :w]
        )
        print(
            f"B={B:2d} {name:18s} ||first-node difference|| = {np.linalg.norm(d):.3f}  "
            f"(sqrt6 = {NODE_SENSITIVITY:.3f}); ratio {np.linalg.norm(d) / NODE_SENSITIVITY:.2f}"
        )
