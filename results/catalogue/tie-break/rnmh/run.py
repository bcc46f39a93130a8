import sys
import time

import numpy as np

from rnmh import variants as V
from rnmh.common import ALGS, certify

alg = sys.argv[1]
seeds = range(int(sys.argv[2]))
names = sys.argv[3].split(",")
nsel, ncert = int(sys.argv[4]) if len(sys.argv) > 4 else 23000, 35000
VAR = {
    "cur": V.current,
    "scan": V.scan_argmax,
    "p50": V.pess_argmax(0.5),
    "p25": V.pess_argmax(0.25),
    "p50w81": V.pess_argmax(0.5, 81),
    "p50w121": V.pess_argmax(0.5, 121),
    "bag": V.bagged(),
    "bag50": V.bagged(0.5),
    "bagT": V.bagged_mean_table(),
    "bagT50": V.bagged_mean_table(0.5),
    "cv5": V.cv_table(),
    "fix01": V.fixed_tail(0.01),
    "fix05": V.fixed_tail(0.005),
    "fix02": V.fixed_tail(0.02),
    "hp50": V.cur_heldout_pess(0.5),
    "hp25": V.cur_heldout_pess(0.25),
    "strict": V.cur_rule(None, True),
    "hp50s": V.cur_rule(0.5, True),
    "hp25s": V.cur_rule(0.25, True),
    "hp50s_w81": V.patched(V.cur_rule(0.5, True), SMOOTHING_WINDOW=81),
    "hp50s_w121": V.patched(V.cur_rule(0.5, True), SMOOTHING_WINDOW=121),
    "hp50s_sp50": V.patched(V.cur_rule(0.5, True), SELECTION_PESSIMISM_TWO_SIDED=0.5),
    "hp50s_sp50w121": V.patched(V.cur_rule(0.5, True), SELECTION_PESSIMISM_TWO_SIDED=0.5, SMOOTHING_WINDOW=121),
    "scan_w121": V.patched(V.scan_argmax, SMOOTHING_WINDOW=121),
    "lex": V.lex_rule(),
    "lex25": V.lex_rule((0.05, 0.25, 0.5)),
    "lex5only": V.lex_rule((0.5,)),
    "rep3s": V.rep_rule(3, (0.05,), True),
    "rep3lex": V.rep_rule(3, (0.05, 0.5), False),
    "rep3p50s": V.rep_rule(3, (0.5,), True),
    "rep5lex": V.rep_rule(5, (0.05, 0.5), False),
    "nocentral": V.patched(V.cur_rule(None, False), NOISY_SELECTION=1e9),
}
res = {n: [] for n in names}
for seed in seeds:
    rng = np.random.default_rng(1000 + seed)
    sp, sn = ALGS[alg][0](nsel, rng)
    cp, cn = ALGS[alg][0](ncert, rng)
    row = []
    for n in names:
        t0 = time.time()
        t, sh = VAR[n](sp, sn, ncert)
        e = certify(t, sh, cp, cn)
        res[n].append(e)
        row.append(f"{n}={e:.3f}(tail{np.mean(cp >= t):.3f},{time.time() - t0:.1f}s)")
    print(alg, seed, " ".join(row), flush=True)
print(alg, "MEAN", " ".join(f"{n}={np.mean(v):.3f}/med{np.median(v):.3f}" for n, v in res.items()))
with open(f"results/catalogue/tie-break/out_{alg}_{nsel}_{len(seeds)}_{'_'.join(names)}.tsv", "w") as out:
    out.write("seed\t" + "\t".join(names) + "\n")
    for i, seed in enumerate(seeds):
        out.write(f"{seed}\t" + "\t".join(f"{res[n][i]:.6f}" for n in names) + "\n")
