"""``pgc bench attack``: the Laplace likelihood attacker's vectorised kernel (torch.cdist + logsumexp,
chunked) against a straightforward per-submission numpy loop, measured in the same run on the same
data; prints both times, the ratio, and checks that both give the same log-likelihoods."""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from pgc.errors import UserError
from pgc.options import add_seed

from . import goals_exit

help = "Laplace likelihood attacker: vectorised kernel vs a per-submission numpy loop"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--submissions", type=int, default=600, help="attacked submissions (default 600)")
    p.add_argument("--budget", type=int, default=500, help="shadow episodes per ψ (default 500)")
    p.add_argument("--candidates", type=int, default=3, help="|Ψ| (default 3)")
    add_seed(p, default=0)


def _reference(x: np.ndarray, centers: np.ndarray, scale: float) -> np.ndarray:
    p, j, _ = centers.shape
    out = np.empty((len(x), p))
    for i in range(len(x)):
        for q in range(p):
            logits = -np.abs(x[i] - centers[q]).sum(axis=1) / scale
            m = logits.max()
            out[i, q] = m + math.log(np.exp(logits - m).sum()) - math.log(j)
    return out


def run(args: argparse.Namespace) -> int:
    from attacks.a3c.likelihood import kernel_loglik
    from attacks.a3c.runner import torch_threads

    if min(args.submissions, args.budget, args.candidates) < 1:
        raise UserError("--submissions, --budget and --candidates must be >= 1")
    rng = np.random.default_rng(np.random.SeedSequence(args.seed))
    d, scale = 112, 0.01
    centers = rng.normal(scale=0.001, size=(args.candidates, args.budget, d))
    x = centers[0, : min(args.budget, args.submissions)].repeat(-(-args.submissions // args.budget), axis=0)[
        : args.submissions
    ]
    x = x + rng.laplace(scale=scale, size=x.shape)
    with torch_threads(1):
        t0 = time.perf_counter()
        fast = kernel_loglik(x, centers, scale)
        t_fast = time.perf_counter() - t0
    t0 = time.perf_counter()
    ref = _reference(x, centers, scale)
    t_ref = time.perf_counter() - t0
    err = float(np.max(np.abs(fast - ref)))
    pairs = args.submissions * args.candidates * args.budget
    print(
        f"likelihood kernel: {args.submissions} submissions x {args.candidates} ψ x {args.budget} "
        f"shadow episodes, d={d}"
    )
    print(f"  vectorised (torch.cdist, 1 thread): {t_fast:.3f}s  ({pairs / t_fast:.3g} pairs/s)")
    print(f"  reference (numpy loop):             {t_ref:.3f}s  ({pairs / t_ref:.3g} pairs/s)")
    print(f"  speed-up {t_ref / t_fast:.1f}x; max |Δ log-likelihood| = {err:.2e}")
    return goals_exit(
        [f"the vectorised log-likelihood differs from the reference by {err:.2e} (goal < 1e-8)"]
        if not err < 1e-8
        else []
    )
