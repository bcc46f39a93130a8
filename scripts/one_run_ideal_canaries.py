"""The one-run audit's bound on ideal canaries: what ``pgc audit opacus-one-run`` certifies when the canaries'
observations are exactly the promised configuration's (sampled count plus Gaussian noise, no data drift).

The real audit (``pgc audit opacus-one-run``) trains the client with Opacus and reads each canary off the model's
steps, where the data's own gradients drift on the canary's coordinate. Here the observations of the M canaries are
drawn from the promise itself (:func:`pgc.opacus.one_run.simulate_promise`) and judged by the same rows
(:func:`pgc.audits.opacus.one_run_rows`: the same choice of r on simulated canaries, Steinke et al.'s bound and the
f-DP bound at α/2 each). The gap between the two is the cost of the drift; this bound is the most the audit's
procedure certifies with M canaries in the client's configuration. Usage, from the repository root:

    python scripts/one_run_ideal_canaries.py examples/opacus/mlp_client.py:make --canaries 1000 5000 --seeds 0-8

``--setting KEY=VALUE`` (repeatable) passes keywords to the factory, as ``pgc audit opacus-one-run`` does.
"""

from __future__ import annotations

import argparse
import statistics
import sys

import numpy as np

from pgc.options import positive_int, seed_range


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("factory", help="MODULE:FACTORY returning a pgc.opacus.OpacusClient")
    parser.add_argument("--canaries", type=positive_int, nargs="+", default=[1000, 5000])
    parser.add_argument("--seeds", type=seed_range, default=seed_range("0-8"), help="a range, e.g. 0-8")
    parser.add_argument(
        "--setting", action="append", metavar="KEY=VALUE", help="a keyword for the factory (repeatable)"
    )
    args = parser.parse_args(argv)
    from pgc.cli.main import report_exception

    try:
        return _run(args)
    except Exception as exc:  # bad input, or the user's factory: one line (exit 2); a bug: the traceback (exit 3)
        return report_exception(exc, "one_run_ideal_canaries.py")


def _run(args: argparse.Namespace) -> int:
    from pgc.audits.opacus import one_run_rows
    from pgc.cli.commands.audit.opacus import _client
    from pgc.opacus.claims import opacus_epsilon
    from pgc.opacus.one_run import OneRunObservation, simulate_promise

    # the factory as pgc audit opacus-one-run loads it: the user's exceptions are theirs, a non-client refused
    client = _client(argparse.Namespace(opacus=args.factory, setting=args.setting), "opacus-one-run")
    claimed = opacus_epsilon(
        client.accountant, client.sample_rate, client.noise_multiplier, client.local_steps, client.delta
    )
    print(
        f"{args.factory}: {client.local_steps} steps at sample rate {client.sample_rate:g}, σ = "
        f"{client.noise_multiplier:g}, Opacus ε = {claimed:.3f} at δ = {client.delta:g}; ideal canaries, "
        f"seeds {args.seeds[0]}–{args.seeds[-1]}"
    )
    print("| canaries | observer | ε_LB per seed | median |")
    print("|---|---|---|---|")
    for m in args.canaries:
        bounds: dict[str, list[float]] = {}
        for seed in args.seeds:
            rng = np.random.default_rng(np.random.SeedSequence([seed, 99, m]))
            per_step, coins = simulate_promise(client, m, rng)
            seen = OneRunObservation(per_step=per_step, coins=coins, coordinates=list(range(m)), training_s=0.0)
            for row in one_run_rows(client, seen, seed, 0.95):
                bounds.setdefault(str(row.scope), []).append(float(row.epsilon_lower_bound))
        for observer, values in bounds.items():
            shown = ", ".join(f"{v:.3f}" for v in values)
            print(f"| {m:,} | {observer} | {shown} | **{statistics.median(values):.3f}** |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
