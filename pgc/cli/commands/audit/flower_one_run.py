"""``pgc audit --flower-one-run MODE``: canary clients inside a real Flower simulation, audited in one run."""

from __future__ import annotations

import dataclasses
import time

from pgc.errors import UserError
def flower_one_run(setup, progress: bool = False) -> dict:
    """Simulate the run (pgc.flower.simulation), then audit what each observer saw (audit.one_run)."""
    import numpy as np

    from audit.one_run import one_run_scores_audit
    from pgc.flower.simulation import canary_plan, observer_scores, promises, simulate, simulated_scores

    start = time.perf_counter()
    records = simulate(setup, verbose=progress)
    simulated_s = time.perf_counter() - start
    directions, _, coins = canary_plan(setup)
    centre = setup.clipping_norm * setup.rounds / 2.0  # halfway between the summed score's means under the coins
    rows = []
    for k, ((observer, scores), promise) in enumerate(zip(observer_scores(setup, records, directions).items(),
                                                           promises(setup).values())):
        sim, sim_coins = simulated_scores(setup, promise, setup.canaries,
                                          np.random.default_rng(np.random.SeedSequence([setup.seed, 2, k])))
        row = one_run_scores_audit(scores, coins, sim, sim_coins, centre=centre, claimed_epsilon=promise["epsilon"],
                                   claimed_delta=promise["delta"], claimed_mu=promise["mu"],
                                   confidence=setup.confidence, scope=observer)
        rows.append(dataclasses.replace(row, note=promise["basis"]))
    from dataclasses import asdict

    return {"setup": asdict(setup), "rows": rows, "simulation_s": simulated_s, "wall_time_s": time.perf_counter() - start,
            "dimension": int(directions.shape[1])}


def audit_flower_one_run(args, report: dict, progress: bool) -> int:
    try:
        from pgc.flower.simulation import OneRunSetup
    except ImportError as exc:
        raise UserError(f"--flower-one-run needs Flower: pip install -e '.[flower]' (scripts/setup.sh installs it): "
                       f"{exc}") from None
    try:
        setup = OneRunSetup(canaries=args.canaries, real_clients=args.real_clients, rounds=args.rounds,
                            mode=args.flower_one_run, epsilon=args.epsilon or 1.0, delta=args.delta or 1e-5,
                            noise_multiplier=args.noise_multiplier, seed=args.seed, confidence=args.confidence)
    except ValueError as exc:
        raise UserError(f"--flower-one-run: {exc}") from None
    print(f"one federated run on Flower's simulation engine: {setup.canaries:,} canary clients beside "
          f"{setup.real_clients} real ones, {setup.rounds} round(s), {setup.mode}", flush=True)
    result = flower_one_run(setup, progress)
    for row in result["rows"]:
        print(f"  {row.scope:<26} promised ε {row.claimed_epsilon:.3g}: ε_LB {row.epsilon_lower_bound:.3f} "
              f"(Steinke {row.extra['steinke_epsilon_lower_bound']:.3f}; f-DP μ_LB {row.mu_lower_bound:.3f}"
              + ("" if row.claimed_mu is None else f" vs μ {row.claimed_mu:.3f}")
              + f"); {row.correct}/{row.guesses} right of M={row.canaries} -> {row.verdict}")
        print(f"      {row.verdict}: {row.verdict_reason}")
    command = report["command"]
    report.clear()
    report.update({"kind": "flower-one-run", "command": command, **result,
                   "rows": [row.to_dict() for row in result["rows"]]})
    return 0
