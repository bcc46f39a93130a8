"""Recertify committed adversarial audits at their saved crafted models, every channel, and compare.

    .venv/bin/python scripts/recertify_adversarial.py --out results/audit/recertified-at-saved-models.txt

For each committed file, each audited pair is certified again with :func:`pgc.audits.adversarial_audit` at
the θ files saved beside it (no search), on the pair's seed and sample size, and every channel row
(ε_LB, counts, fp share, statistic, verdict, samples) and the noise-free bound is compared with the file;
one line per row goes to ``--out`` (text). Exit 0 when everything is identical.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

COMPARED = (
    "epsilon_lower_bound",
    "false_positives",
    "false_negatives",
    "fp_share",
    "discordant_pairs",
    "statistic",
    "verdict",
    "samples_per_side",
)


def _jobs() -> list[tuple[str, object, dict]]:
    """(committed file, mechanism, adversarial_audit options the file's run used)."""
    from pgc.a3c.rollout import A3CHyperparams
    from pgc.mechanisms import Laplace, ProjectedRandomSign

    mitigations = "results/mitigations/adversarial-laplace-eps1.json"
    hyper = A3CHyperparams(**json.loads(Path(mitigations).read_text())["run_config"]["hyper"])
    return [
        ("results/audit/adversarial/laplace-eps1.json", Laplace(1.0), {}),
        ("results/audit/adversarial/prs-eps1.json", ProjectedRandomSign(1.0, clip=1.0), {}),
        (
            mitigations,
            Laplace(0.9, clip=0.01),
            dict(
                protect=("score", "timing", "order"),
                score_epsilon=0.1,
                workers=9,
                population=(9.7, 9.8, 9.9),
                hyper=hyper,
            ),
        ),
    ]


def _theta_files(path: str, audit: dict) -> dict[str, str]:
    if "theta_files" in audit:
        return {k: str(Path(path).parent / v) for k, v in audit["theta_files"].items()}
    return {k: f"{path[:-5]}-theta-{audit['psi']:g}-{audit['psi_prime']:g}-{k}.pt" for k in ("gradient", "score")}


def recertify(path: str, mechanism, options: dict) -> list[dict]:
    from pgc.a3c.model import load_checkpoint
    from pgc.audits.adversarial import adversarial_audit

    committed = json.loads(Path(path).read_text())
    audits = committed["adversarial_audits"]
    seeds = [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(committed["seed"]).spawn(len(audits))]
    out = []
    for audit, seed in zip(audits, seeds, strict=True):
        start = time.perf_counter()
        thetas = {k: load_checkpoint(v) for k, v in _theta_files(path, audit).items()}
        res = adversarial_audit(
            mechanism,
            audit["psi"],
            audit["psi_prime"],
            samples=audit["channels"][0]["samples_per_side"],
            seed=seed,
            channels=tuple(c["channel"] for c in audit["channels"]),
            thetas=thetas,
            noise_free=audit.get("noise_free_epsilon_lower_bound") is not None,
            **options,
        )
        got = {c["channel"]: c for c in res.to_dict()["channels"]}
        for c in audit["channels"]:
            differ = [k for k in COMPARED if k in c and got[c["channel"]].get(k) != c[k]]
            out.append(
                {
                    "file": path,
                    "pair": [audit["psi"], audit["psi_prime"]],
                    "channel": c["channel"],
                    "identical": not differ,
                    "differ": differ,
                }
            )
        noise_free = audit.get("noise_free_epsilon_lower_bound")
        out.append(
            {
                "file": path,
                "pair": [audit["psi"], audit["psi_prime"]],
                "channel": "noise-free gradient",
                "identical": noise_free == res.noise_free_epsilon_lower_bound,
                "differ": [] if noise_free == res.noise_free_epsilon_lower_bound else ["epsilon_lower_bound"],
            }
        )
        pair = [audit["psi"], audit["psi_prime"]]
        print(
            f"{path} {audit['psi']:g} vs {audit['psi_prime']:g}: "
            f"{sum(r['identical'] for r in out if r['pair'] == pair and r['file'] == path)}"
            f" rows identical ({time.perf_counter() - start:.0f} s)",
            flush=True,
        )
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="text result file")
    args = parser.parse_args()
    rows = [row for path, mechanism, options in _jobs() for row in recertify(path, mechanism, options)]
    lines = [f"# .venv/bin/python scripts/recertify_adversarial.py --out {args.out}"]
    lines += [
        f"{r['file']} {r['pair'][0]:g} vs {r['pair'][1]:g} {r['channel']}: "
        + ("identical" if r["identical"] else "DIFFERS in " + ", ".join(r["differ"]))
        for r in rows
    ]
    lines.append(f"{sum(r['identical'] for r in rows)}/{len(rows)} rows identical")
    out = Path(args.out)
    partial = out.with_name(out.name + ".partial")
    partial.write_text("\n".join(lines) + "\n", encoding="utf-8")
    partial.replace(out)
    print(lines[-1])
    return 0 if all(r["identical"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
