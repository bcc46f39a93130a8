"""Every committed one-run row that records both bounds: its f-DP ε_LB recomputed from its counts (canaries, guesses,
correct) through the (ε, δ) curve's own recursion (audit.one_run.bounds.fdp_epsilon_lower_bound), beside the ε the
row recorded, and the headline ε_LB max(Steinke, f-DP) with each verdict it would give against the row's claimed ε.
From the repository root:
.venv/bin/python results/audit/one-run/fdp_epsilon_recheck.py > results/audit/one-run/fdp-epsilon-recheck.txt"""

import glob
import json
import math

from audit.one_run.bounds import fdp_epsilon_lower_bound


def rows(x):
    if isinstance(x, dict):
        if "steinke_epsilon_lower_bound" in x:
            yield x
        for v in x.values():
            yield from rows(v)
    elif isinstance(x, list):
        for v in x:
            yield from rows(v)


def main() -> None:
    print(
        "file | channel | claim (ε, δ) | μ claimed | M, r, v | Steinke | f-DP recorded | "
        "f-DP (ε, δ) curve | headline recorded → now | verdict recorded → above the claim now?"
    )
    changed_verdicts = 0
    for path in sorted(glob.glob("results/**/*.json", recursive=True)):
        try:
            data = json.load(open(path))
        except (OSError, ValueError):
            continue
        for row in rows(data):
            alpha = 1.0 - row["test_confidence"]  # each bound's own level (a curve row: its μ test and ε test split it)
            if row.get("claimed_mu") is not None:
                alpha /= 2.0
            m, r, v = row["canaries"], row["guesses"], row["correct"]
            delta = row.get("claimed_delta") or 0.0
            new_fdp = fdp_epsilon_lower_bound(m, r, v, alpha=alpha, delta=delta)
            headline = max(row["steinke_epsilon_lower_bound"], new_fdp)
            eps = row.get("claimed_epsilon")
            eps = float(eps) if eps is not None else None  # JSON writes ∞ as "inf"
            above = eps is not None and math.isfinite(eps) and headline > eps
            changed_verdicts += above != (row.get("verdict") == "violated")
            print(
                f"{path} | {row.get('channel')} | ({eps:g}, {delta:g}) | {row.get('claimed_mu')} | {m}, {r}, {v} | "
                f"{row['steinke_epsilon_lower_bound']:.3f} | {row.get('fdp_epsilon_lower_bound') or 0:.3f} | "
                f"{new_fdp:.3f} | {row['epsilon_lower_bound']:.3f} → {headline:.3f} | {row.get('verdict')} → "
                f"{'above' if above else 'not above'}"
            )
    print(f"rows whose violated / not violated reading changes: {changed_verdicts}")


if __name__ == "__main__":
    main()
