"""The PLD accountant's ε for Private-FedLinUCB's theorem σ (σ² = 8κ(log(2/δ)+ε)/ε²), one user's
data entering one Gaussian node per tree level with replace-one-user sensitivity √6, and the σ that
would meet the claimed ε exactly (searched in [σ/4, σ]; a ratio of 4.00 means "below σ/4").
Run from the repository root: PYTHONPATH=. python results/fedlinucb/accountant_vs_theorem.py"""

import math

import dp_accounting
from scipy.optimize import brentq

from pgc.fedlinucb.privacy import private_fedlinucb_sigma, tree_levels


def eps(sig, count, delta):
    acc = dp_accounting.pld.PLDAccountant()
    acc.compose(dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(sig / math.sqrt(6)), count))
    return acc.get_epsilon(delta)


for e, dl, T, B in ((1, 0.1, 32, 4), (0.2, 0.1, 10000, 10), (1, 0.1, 10000, 10), (5, 0.1, 10000, 10)):
    s = private_fedlinucb_sigma(e, dl, T, B)
    L = tree_levels(T // B)
    lo = s / 4
    need = lo if eps(lo, L, dl) < e else brentq(lambda x, L=L, dl=dl, e=e: eps(x, L, dl) - e, lo, s, xtol=1e-2)
    print(
        f"eps={e} delta={dl} T={T} B={B}: theorem sigma={s:.2f}, nodes={L}, accountant eps={eps(s, L, dl):.3f}, "
        f"sigma for exactly eps: {need:.2f} (theorem/needed = {s / need:.2f})",
        flush=True,
    )
