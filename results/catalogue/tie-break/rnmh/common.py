"""Harness: draw selection + certification releases for a catalogue algorithm/pair, choose a threshold with the
current rule and with variants, certify each on the same fresh releases."""

import numpy as np

from audit.certification.bounds import epsilon_lower_bound
from pgc.catalogue.algorithms import laplace, report_noisy_max3, report_noisy_max4

ALPHA = 0.05


def _rnm4(n, rng):  # all below: pos a = 0s (small values likelier), s = -x
    return -report_noisy_max4(np.zeros(5), n, rng)[:, 0], -report_noisy_max4(np.ones(5), n, rng)[:, 0]


def _rnm3(n, rng):  # all above: pos a = 2s, s = +x
    return report_noisy_max3(np.full(5, 2.0), n, rng)[:, 0], report_noisy_max3(np.ones(5), n, rng)[:, 0]


def _lap(n, rng):  # correct, eps 0.1: pos a = 0, s = -x
    return -laplace(np.zeros(1), n, rng)[:, 0], -laplace(np.ones(1), n, rng)[:, 0]


def _rnm4null(n, rng):  # identical pair, true eps 0: tail-shaped null
    return -report_noisy_max4(np.zeros(5), n, rng)[:, 0], -report_noisy_max4(np.zeros(5), n, rng)[:, 0]


def _rnm4_correct(
    n, rng
):  # RNM4 value with noise calibrated for eps/... : exp noise scale 1/eps on a pair differing by 1 in ONE
    # entry only changes max by <=1 => density ratio <= e^{0.1}? (max of shifted exp noise) -- one entry differs
    a = np.zeros(5)
    b = np.zeros(5)
    b[0] = 1.0
    return -report_noisy_max4(a, n, rng)[:, 0], -report_noisy_max4(b, n, rng)[:, 0]


ALGS = {
    "rnm4": (_rnm4, None),
    "rnm3": (_rnm3, None),
    "laplace": (_lap, 0.1),
    "rnm4null": (_rnm4null, 0.0),
    "rnm4one": (_rnm4_correct, None),
}


def certify(t, share, cp, cn):
    n = cp.size
    fp, fn = int(np.sum(cn >= t)), int(np.sum(cp < t))
    return float(epsilon_lower_bound(fp, n, fn, n, ALPHA, 0.0, share))
