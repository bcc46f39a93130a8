"""SVT3's release as the pair (position of its one answer above the threshold, that answer's noisy value): a
histogram likelihood ratio over positions × value bins (BINS quantile bins of the values), fitted on 105,500
releases per side, its threshold chosen on 105,500 more (audit.statistics.selection.choose_threshold) and certified
on 529,101 fresh releases per side (the bench's sizes at 10⁶ in total), one line per seed. Usage, from the
repository root:

    python results/catalogue/million/svt3_joint.py "all above" 4 40
"""

import argparse
import sys

import numpy as np

from audit.certification.bounds import epsilon_lower_bound
from audit.engine.releases import AuditTarget
from audit.statistics.selection import choose_threshold
from pgc.catalogue import CHANNEL, catalogue_system
from pgc.options import positive_int

FIT, CERT = 105_500, 529_101  # releases per side: the histogram's fit (and as many to choose its threshold), certified


def cells(y, edges):
    """Each release's cell: its first present column (or none) × its value's bin among ``edges``."""
    present = ~np.isnan(y)
    pos = np.where(present.any(1), present.argmax(1), y.shape[1])  # first present column, or none
    val = np.where(present.any(1), np.nanmax(np.where(present, y, -np.inf), 1), 0.0)
    vb = np.clip(np.searchsorted(edges, val), 0, len(edges))
    return pos * (len(edges) + 1) + np.where(pos == y.shape[1], 0, vb)


def certified(target: AuditTarget, seed: int, bins: int) -> tuple[float, float, int, int]:
    """(projected ε on the selection half, certified ε_LB, false positives, false negatives) of one seed."""
    pos, neg = target.release_pair(2 * FIT, np.random.SeedSequence(50 + seed), None, [CHANNEL])
    p, q = pos[CHANNEL], neg[CHANNEL]
    fp, fq, sp, sq = p[:FIT], q[:FIT], p[FIT:], q[FIT:]
    vals = np.concatenate([fp, fq])
    vals = vals[~np.isnan(vals)]
    edges = np.quantile(vals, np.linspace(0, 1, bins + 1)[1:-1])
    k = (p.shape[1] + 1) * (len(edges) + 1)
    cp_ = np.bincount(cells(fp, edges), minlength=k) + 0.5
    cq_ = np.bincount(cells(fq, edges), minlength=k) + 0.5
    llr = np.log(cp_ / cp_.sum()) - np.log(cq_ / cq_.sum())
    s_pos, s_neg = llr[cells(sp, edges)], llr[cells(sq, edges)]
    thr, share, proj = choose_threshold(s_pos, s_neg, CERT, 0.05, 0.0, True)
    cpos, cneg = target.release_pair(CERT, np.random.SeedSequence(900 + seed), None, [CHANNEL])
    c_pos, c_neg = llr[cells(cpos[CHANNEL], edges)], llr[cells(cneg[CHANNEL], edges)]
    fpn = int(np.count_nonzero(c_neg >= thr))
    fnn = int(np.count_nonzero(c_pos < thr))
    return proj, float(epsilon_lower_bound(fpn, CERT, fnn, CERT, 0.05, 0.0, share)), fpn, fnn


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pair", help="one of SVT3's named pairs, e.g. 'all above'")
    parser.add_argument("seeds", type=positive_int, help="seeds 0 .. SEEDS − 1")
    parser.add_argument("bins", type=positive_int, nargs="?", default=40, help="value bins (default 40)")
    args = parser.parse_args()
    from pgc.cli.main import report_exception
    from pgc.errors import UserError

    try:
        system = catalogue_system("SVT3")
        pairs = system.canaries()
        if args.pair not in pairs:
            raise UserError(f"SVT3 names no pair {args.pair!r}; its pairs: {'; '.join(pairs)}")
        target = AuditTarget(system, *pairs[args.pair], (CHANNEL,), False)
        out = []
        for seed in range(args.seeds):
            proj, bound, fpn, fnn = certified(target, seed, args.bins)
            out.append(bound)
            print(seed, round(proj, 3), round(bound, 3), fpn, fnn, flush=True)
    except Exception as exc:  # bad input: one line (exit 2); a bug: the traceback (exit 3)
        return report_exception(exc, "svt3_joint.py")
    print(args.pair, "median", round(float(np.median(out)), 3))
    return 0


if __name__ == "__main__":
    sys.exit(main())
