import numpy as np

from audit.certification import bounds
from audit.statistics import selection as S

A = 0.05


def current(sp, sn, nc):
    t, share, _ = S.choose_threshold(sp, sn, nc, A, 0.0, True)
    return t, share


def scan_argmax(sp, sn, nc):
    grid, table, fp, fn, (r, c) = S._scan(sp, sn, nc, A, 0.0, True)
    return grid[c], S.FP_SHARES[r]


def table_p(sp, sn, grid, nc, pess, two=True):
    spp, snn = np.sort(sp), np.sort(sn)
    tp = spp.size - np.searchsorted(spp, grid, side="left")
    fp = snn.size - np.searchsorted(snn, grid, side="left")
    fn = spp.size - tp
    fpr, fnr = S.rate_upper(fp, snn.size, pess, two), S.rate_upper(fn, spp.size, pess, two)
    tab = np.stack(
        [
            bounds.epsilon_from_rates(
                S.rate_upper(fpr * nc, nc, sh * A, two), S.rate_upper(fnr * nc, nc, (1 - sh) * A, two), 0.0
            )
            for sh in S.FP_SHARES
        ]
    )
    return tab, fp, fn


def pess_argmax(pess, window=S.SMOOTHING_WINDOW):
    def f(sp, sn, nc):
        grid = S._threshold_grid(np.concatenate([sp, sn]))
        tab, _, _ = table_p(sp, sn, grid, nc, pess)
        tab = np.stack([S.moving_average(e, window) for e in tab])
        r, c = S._argmax(tab)
        return grid[c], S.FP_SHARES[r]

    return f


def bagged(pess=0.25, B=25, window=S.SMOOTHING_WINDOW, seed=0):
    """bootstrap the selection split, argmax of the smoothed scan each time; take the median chosen threshold
    expressed as the pooled-sample quantile, and the modal share."""

    def f(sp, sn, nc):
        rng = np.random.default_rng(seed)
        pooled = np.sort(np.concatenate([sp, sn]))
        grid = S._threshold_grid(pooled)
        qs, shares = [], []
        for _ in range(B):
            bp = sp[rng.integers(0, sp.size, sp.size)]
            bn = sn[rng.integers(0, sn.size, sn.size)]
            tab, _, _ = table_p(bp, bn, grid, nc, pess)
            tab = np.stack([S.moving_average(e, window) for e in tab])
            r, c = S._argmax(tab)
            qs.append(np.searchsorted(pooled, grid[c]) / pooled.size)
            shares.append(S.FP_SHARES[r])
        # median in log tail-mass (upper tail mass 1-q)
        tail = np.median(np.log(np.maximum(1 - np.array(qs), 1e-9)))
        t = pooled[min(pooled.size - 1, int(round((1 - np.exp(tail)) * pooled.size)))]
        vals, cnt = np.unique(shares, return_counts=True)
        return t, float(vals[np.argmax(cnt)])

    return f


def bagged_mean_table(pess=0.25, B=25, window=S.SMOOTHING_WINDOW, seed=0):
    """bootstrap-averaged (smoothed) projection table, argmax of the average (bagging the curve, not the argmax)."""

    def f(sp, sn, nc):
        rng = np.random.default_rng(seed)
        grid = S._threshold_grid(np.concatenate([sp, sn]))
        acc = 0
        for _ in range(B):
            bp = sp[rng.integers(0, sp.size, sp.size)]
            bn = sn[rng.integers(0, sn.size, sn.size)]
            tab, _, _ = table_p(bp, bn, grid, nc, pess)
            acc = acc + np.stack([S.moving_average(np.where(np.isfinite(e), e, 0), window) for e in tab])
        r, c = S._argmax(acc / B)
        return grid[c], S.FP_SHARES[r]

    return f


def cv_table(pess=0.5, K=5, window=S.SMOOTHING_WINDOW):
    """K-fold honest curve: fold k's threshold curve is chosen... here: each threshold's projection is
    evaluated on each fold's counts (scaled), and the folds' projections averaged (a noisier, less curse-prone
    curve); argmax."""

    def f(sp, sn, nc):
        grid = S._threshold_grid(np.concatenate([sp, sn]))
        acc = 0
        for k in range(K):
            tab, _, _ = table_p(sp[k::K], sn[k::K], grid, nc, pess)
            acc = acc + np.stack([S.moving_average(np.where(np.isfinite(e), e, 0), window) for e in tab])
        r, c = S._argmax(acc / K)
        return grid[c], S.FP_SHARES[r]

    return f


def fixed_tail(q):
    """reference: the pooled training quantile with upper-tail mass q, even split (knows the answer)."""

    def f(sp, sn, nc):
        return np.quantile(sp, 1 - q), 0.5

    return f


def cur_heldout_pess(p):
    """current rule, but held_out_rules' comparison of the two rules at one-sided level p (the held-out half is not
    subject to the winner's curse, so p = 0.5 estimates each rule's bound without a variance penalty)."""

    def f(sp, sn, nc):
        old = S.HELD_OUT_PESSIMISM
        S.HELD_OUT_PESSIMISM = p
        try:
            t, share, _ = S.choose_threshold(sp, sn, nc, A, 0.0, True)
        finally:
            S.HELD_OUT_PESSIMISM = old
        return t, share

    return f


def diag(sp, sn, nc):
    grid, table, fp, fn, best = S._scan(sp, sn, nc, A, 0.0, True)
    central = S._central_choice(table, best, fp, fn, float(sp.size), float(sn.size), nc, A, 0.0, True)
    out = {"best_t": grid[best[1]], "central_t": grid[central[1]], "trig": central != best}
    if central != best:
        out["rules"] = S.held_out_rules(sp, sn, nc, A, 0.0, True)
    return out


def cur_rule(p=None, strict=False):
    """current choose_threshold's threshold logic, with held_out_rules at level p (None: as is) and, with strict,
    the central test only when it projects strictly more held out (a tie, both 0 included, keeps the largest)."""

    def f(sp, sn, nc):
        grid, table, fp, fn, (row, col) = S._scan(sp, sn, nc, A, 0.0, True)
        if not table[row, col] > 0:
            return float(grid[0]), 0.5
        central = S._central_choice(table, (row, col), fp, fn, float(sp.size), float(sn.size), nc, A, 0.0, True)
        if central == (row, col):
            return float(grid[col]), S.FP_SHARES[row]
        old = S.HELD_OUT_PESSIMISM
        if p is not None:
            S.HELD_OUT_PESSIMISM = p
        try:
            largest, most_central = S.held_out_rules(sp, sn, nc, A, 0.0, True)
        finally:
            S.HELD_OUT_PESSIMISM = old
        if (largest < most_central) if strict else (largest <= most_central):
            row, col = central
        return float(grid[col]), S.FP_SHARES[row]

    return f


def patched(rule, **consts):
    def f(sp, sn, nc):
        old = {k: getattr(S, k) for k in consts}
        for k, v in consts.items():
            setattr(S, k, v)
        try:
            return rule(sp, sn, nc)
        finally:
            for k, v in old.items():
                setattr(S, k, v)

    return f


def lex_rule(levels=(0.05, 0.5)):
    """current rule; the held-out comparison of the two rules is made at levels[0] and, where tied there (both 0
    included), at the next level; a full tie keeps the central test (as now)."""

    def f(sp, sn, nc):
        grid, table, fp, fn, (row, col) = S._scan(sp, sn, nc, A, 0.0, True)
        if not table[row, col] > 0:
            return float(grid[0]), 0.5
        central = S._central_choice(table, (row, col), fp, fn, float(sp.size), float(sn.size), nc, A, 0.0, True)
        if central == (row, col):
            return float(grid[col]), S.FP_SHARES[row]
        old = S.HELD_OUT_PESSIMISM
        take_central = True
        try:
            for p in levels:
                S.HELD_OUT_PESSIMISM = p
                largest, most_central = S.held_out_rules(sp, sn, nc, A, 0.0, True)
                if largest != most_central:
                    take_central = largest < most_central
                    break
        finally:
            S.HELD_OUT_PESSIMISM = old
        if take_central:
            row, col = central
        return float(grid[col]), S.FP_SHARES[row]

    return f


def rep_rule(R=3, levels=(0.05,), strict=True, seed=12345):
    """held-out rule comparison averaged over R two-fold splits (the first the alternate samples, as now; the others
    random permutations, seeded from the data size so the choice is reproducible); compare at levels lexicographically;
    strict: a full tie keeps the largest, else the central."""

    def f(sp, sn, nc):
        grid, table, fp, fn, (row, col) = S._scan(sp, sn, nc, A, 0.0, True)
        if not table[row, col] > 0:
            return float(grid[0]), 0.5
        central = S._central_choice(table, (row, col), fp, fn, float(sp.size), float(sn.size), nc, A, 0.0, True)
        if central == (row, col):
            return float(grid[col]), S.FP_SHARES[row]
        rng = np.random.default_rng(seed)
        perms = [(np.arange(sp.size), np.arange(sn.size))] + [
            (rng.permutation(sp.size), rng.permutation(sn.size)) for _ in range(R - 1)
        ]
        old = S.HELD_OUT_PESSIMISM
        tot = {p: np.zeros(2) for p in levels}
        try:
            for pp, pn in perms:
                for p in levels:
                    S.HELD_OUT_PESSIMISM = p
                    tot[p] += S.held_out_rules(sp[pp], sn[pn], nc, A, 0.0, True)
        finally:
            S.HELD_OUT_PESSIMISM = old
        take_central = not strict
        for p in levels:
            if tot[p][0] != tot[p][1]:
                take_central = tot[p][0] < tot[p][1]
                break
        if take_central:
            row, col = central
        return float(grid[col]), S.FP_SHARES[row]

    return f
