"""What an auditor who knows each broken algorithm's exact likelihood and its best pair certifies at a total of
``--total`` releases per side, when it must still choose its threshold on a training split of that total.

The statistic is the exact privacy loss ln p_x(o) − ln p_x′(o) (:mod:`pgc.catalogue.likelihood`), the most powerful
statistic there is (Neyman–Pearson): nothing is fitted. The pair is the oracle bench's best pair at 10⁵ per side
(``../oracle/oracle.json``), given in advance: no race. The threshold and α split are chosen on the training split
by two rules, each certified on the rest of the total, the same fresh releases:

* ``audit``: the audit's own rule (:func:`audit.statistics.selection.choose_threshold`, two-sided rates, as a
  System audit chooses) and certificate (the paired one where it projects more,
  :func:`audit.certification.paired.projected_certificates`);
* ``plug-in``: the threshold whose paired certificate projects most from the training rates read as they are
  (no pessimism; 200 quantiles of the training scores), certified by the paired certificate.

A black-box audit must also learn the statistic and find the pair from the same total, so per algorithm this is a
reference it can at best approach. Usage, from the repository root:

    .venv/bin/python results/catalogue/white-box/white_box.py --total 100000 --seeds 16 --fractions 0.1,0.25,0.4
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np

from audit.certification.paired import (
    certified_epsilon,
    discordant_pairs,
    expected_discordant,
    paired_epsilon_lower_bound,
    projected_certificates,
)
from audit.statistics.selection import choose_threshold
from pgc.catalogue import catalogue_system
from pgc.catalogue.likelihood import log_likelihood
from pgc.catalogue.registry import BY_NAME

ALPHA = 0.05
HERE = Path(__file__).resolve().parent


def best_pairs() -> dict[str, str]:
    """Each broken algorithm's best pair at 10⁵ per side in the oracle bench."""
    oracle = json.loads((HERE.parent / "oracle" / "oracle.json").read_text())
    return {row["algorithm"]: row["best_pair"]["100000"] for row in oracle["algorithms"]}


def one_audit(name: str, pair: str, total: int, fraction: float, seed: int) -> dict:
    """One audit: a training split of ``fraction`` of ``total`` chooses the threshold, the rest certifies."""
    system = catalogue_system(name)
    x, x_prime = (np.asarray(v, np.float64) for v in system.canaries()[pair])
    loss = log_likelihood(name, BY_NAME[name].parameters)

    def score(outputs: np.ndarray) -> np.ndarray:
        return loss(x, outputs) - loss(x_prime, outputs)

    rng = np.random.default_rng(np.random.SeedSequence([seed, 41]))
    n_train = int(total * fraction)
    n_cert = total - n_train
    draw = {
        side: system.release(secret, n_train + n_cert, rng)["output"] for side, secret in (("x", x), ("x'", x_prime))
    }
    train_pos, train_neg = score(draw["x"][:n_train]), score(draw["x'"][:n_train])
    threshold, share, projected = choose_threshold(train_pos, train_neg, n_cert, ALPHA, 0.0, two_sided=True)
    split, paired = projected_certificates(train_pos, train_neg, threshold, share, n_cert, ALPHA, two_sided=True)
    cert_pos, cert_neg = score(draw["x"][n_train:]), score(draw["x'"][n_train:])
    hits_pos, hits_neg = cert_pos >= threshold, cert_neg >= threshold
    fp, fn = int(hits_neg.sum()), int(n_cert - hits_pos.sum())
    pairs = discordant_pairs(hits_pos, hits_neg) if paired > split else None
    bound = certified_epsilon(fp, fn, n_cert, ALPHA, 0.0, share, pairs)
    plug_in = plug_in_threshold(train_pos, train_neg, n_cert)
    plug_pos, plug_neg = cert_pos >= plug_in, cert_neg >= plug_in
    plug_bound = float(
        paired_epsilon_lower_bound(*discordant_pairs(plug_pos, plug_neg), int(plug_neg.sum()), n_cert, ALPHA)
    )
    return {
        "seed": seed,
        "train": n_train,
        "certify": n_cert,
        "threshold": float(threshold),
        "false_positives": fp,
        "false_negatives": fn,
        "paired": pairs is not None,
        "epsilon_lower_bound": bound,
        "plug_in_threshold": float(plug_in),
        "plug_in_epsilon_lower_bound": plug_bound,
    }


def plug_in_threshold(train_pos: np.ndarray, train_neg: np.ndarray, n_cert: int) -> float:
    """The threshold, among 200 quantiles of the training scores, whose paired certificate projects most at n_cert
    fresh releases per side from the training rates as they are (expected discordant pairs)."""
    grid = np.unique(np.quantile(np.concatenate([train_pos, train_neg]), np.linspace(0.0, 1.0, 200)))
    best, chosen = -np.inf, float(grid[0])
    for threshold in grid:
        tpr, fpr = float(np.mean(train_pos >= threshold)), float(np.mean(train_neg >= threshold))
        only_pos, only_neg = expected_discordant(tpr * n_cert, fpr * n_cert, n_cert)
        projected = float(paired_epsilon_lower_bound(only_pos, only_neg, fpr * n_cert, n_cert, ALPHA))
        if projected > best:
            best, chosen = projected, float(threshold)
    return chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--total", type=int, default=100_000)
    parser.add_argument("--seeds", type=int, default=16)
    parser.add_argument("--fractions", default="0.1,0.25,0.4")
    parser.add_argument("--algorithms", default=None, help="comma-separated; default every broken one")
    parser.add_argument("--out", default=str(HERE / "white-box.jsonl"), help="one JSON line per cell")
    args = parser.parse_args()
    pairs = best_pairs()
    names = args.algorithms.split(",") if args.algorithms else list(pairs)
    fractions = [float(f) for f in args.fractions.split(",")]
    rows = []
    print(
        "| algorithm | pair | training fraction | audit's rule: median ε_LB | above the claim | plug-in rule: median "
        "ε_LB | above the claim |"
    )
    print("|---|---|---|---|---|---|---|")
    for name in names:
        claim = BY_NAME[name].claimed_epsilon
        for fraction in fractions:
            start = time.perf_counter()
            audits = [one_audit(name, pairs[name], args.total, fraction, seed) for seed in range(args.seeds)]
            bounds = [a["epsilon_lower_bound"] for a in audits]
            plug = [a["plug_in_epsilon_lower_bound"] for a in audits]
            above, plug_above = sum(b > claim for b in bounds), sum(b > claim for b in plug)
            rows.append(
                {
                    "algorithm": name,
                    "pair": pairs[name],
                    "claim": claim,
                    "train_fraction": fraction,
                    "median": statistics.median(bounds),
                    "above": above,
                    "plug_in_median": statistics.median(plug),
                    "plug_in_above": plug_above,
                    "audits": audits,
                    "wall_s": round(time.perf_counter() - start, 1),
                }
            )
            print(
                f"| {name} | {pairs[name]} | {fraction:g} | {statistics.median(bounds):.3f} | {above} of {len(bounds)} "
                f"| {statistics.median(plug):.3f} | {plug_above} of {len(plug)} |",
                flush=True,
            )
    command = (
        f"results/catalogue/white-box/white_box.py --total {args.total} --seeds {args.seeds} "
        f"--fractions {args.fractions}" + (f" --algorithms {args.algorithms}" if args.algorithms else "")
    )
    header = {"command": command, "total": args.total, "alpha": ALPHA}
    lines = [json.dumps(header)] + [json.dumps(row) for row in rows]
    temporary = Path(args.out).with_suffix(".tmp")
    temporary.write_text("\n".join(lines) + "\n")
    temporary.replace(args.out)


if __name__ == "__main__":
    main()
