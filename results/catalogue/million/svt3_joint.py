"""SVT3's release as the pair (position of its one answer above the threshold, that answer's noisy value): a
histogram likelihood ratio over positions × value bins (BINS quantile bins of the values), fitted on 105,500
releases per side, its threshold chosen on 105,500 more (audit.statistics.selection.choose_threshold) and certified
on 529,101 fresh releases per side (the bench's sizes at 10⁶ in total), one line per seed. Usage, from the
repository root:

    python results/catalogue/million/svt3_joint.py "all above" 4 40
"""

import sys

import numpy as np

from audit.certification.bounds import epsilon_lower_bound
from audit.engine.releases import AuditTarget
from audit.statistics.selection import choose_threshold
from pgc.catalogue import CHANNEL, catalogue_system

pairname = sys.argv[1]
seeds = int(sys.argv[2])
BINS = int(sys.argv[3]) if len(sys.argv) > 3 else 40
system = catalogue_system("SVT3")
a, b = system.canaries()[pairname]
t = AuditTarget(system, a, b, (CHANNEL,), False)


def cells(y, edges):
    present = ~np.isnan(y)
    pos = np.where(present.any(1), present.argmax(1), y.shape[1])  # first present column, or none
    val = np.where(present.any(1), np.nanmax(np.where(present, y, -np.inf), 1), 0.0)
    vb = np.clip(np.searchsorted(edges, val), 0, len(edges))
    return pos * (len(edges) + 1) + np.where(pos == y.shape[1], 0, vb)


out = []
for s in range(seeds):
    pos, neg = t.release_pair(211_000, np.random.SeedSequence(50 + s), None, [CHANNEL])
    p, q = pos[CHANNEL], neg[CHANNEL]
    fp, fq, sp, sq = p[:105_500], q[:105_500], p[105_500:], q[105_500:]
    vals = np.concatenate([fp, fq])
    vals = vals[~np.isnan(vals)]
    edges = np.quantile(vals, np.linspace(0, 1, BINS + 1)[1:-1])
    k = (p.shape[1] + 1) * (len(edges) + 1)
    cp_ = np.bincount(cells(fp, edges), minlength=k) + 0.5
    cq_ = np.bincount(cells(fq, edges), minlength=k) + 0.5
    llr = np.log(cp_ / cp_.sum()) - np.log(cq_ / cq_.sum())
    s_pos, s_neg = llr[cells(sp, edges)], llr[cells(sq, edges)]
    thr, share, proj = choose_threshold(s_pos, s_neg, 529_101, 0.05, 0.0, True)
    cpos, cneg = t.release_pair(529_101, np.random.SeedSequence(900 + s), None, [CHANNEL])
    c_pos, c_neg = llr[cells(cpos[CHANNEL], edges)], llr[cells(cneg[CHANNEL], edges)]
    fpn = int(np.count_nonzero(c_neg >= thr))
    fnn = int(np.count_nonzero(c_pos < thr))
    e = float(epsilon_lower_bound(fpn, 529_101, fnn, 529_101, 0.05, 0.0, share))
    out.append(e)
    print(s, round(proj, 3), round(e, 3), fpn, fnn, flush=True)
print(pairname, "median", round(float(np.median(out)), 3))
