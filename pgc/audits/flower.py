"""The one-run audit of a real Flower simulation (``pgc audit --flower-one-run``): canary clients beside
real ones in one federated run (:mod:`pgc.flower.simulation`), and what each observer saw audited in that
one run (:func:`audit.one_run.one_run_scores_audit`) against the promise it is held to."""

from __future__ import annotations

import dataclasses
import time

import pgc.schemas as schemas


def flower_one_run(setup, progress: bool = False) -> schemas.FlowerOneRunResult:
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
    for k, ((observer, scores), promise) in enumerate(
        zip(observer_scores(setup, records, directions).items(), promises(setup).values(), strict=False)
    ):
        sim, sim_coins = simulated_scores(
            setup, promise, setup.canaries, np.random.default_rng(np.random.SeedSequence([setup.seed, 2, k]))
        )
        row = one_run_scores_audit(
            scores,
            coins,
            sim,
            sim_coins,
            centre=centre,
            claimed_epsilon=promise["epsilon"],
            claimed_delta=promise["delta"],
            claimed_mu=promise["mu"],
            confidence=setup.confidence,
            scope=observer,
        )
        rows.append(schemas.ObserverOneRunRow.of(row, note=promise["basis"]))
    return schemas.FlowerOneRunResult(
        setup=schemas.FlowerOneRunSetup(**dataclasses.asdict(setup)),
        rows=rows,
        simulation_s=simulated_s,
        dimension=int(directions.shape[1]),
    )
