"""The one-run audit of one real Opacus training with gradient canaries (``pgc audit opacus-one-run``): the
training and the canaries' observations come from :mod:`pgc.opacus.one_run`, the bounds from :mod:`audit.one_run`
(Steinke, Nasr & Jagielski 2023; the f-DP bound of Mahloujifar, Melis & Chaudhuri 2025)."""

from __future__ import annotations

import math

import numpy as np

from pgc.opacus.claims import opacus_epsilon
from pgc.opacus.client import OpacusClient
from pgc.opacus.one_run import SIMULATED_CANARIES, OneRunObservation, simulate_promise, step_scores


def one_run_rows(client: OpacusClient, seen: OneRunObservation, seed: int, confidence: float) -> list:
    """The two observers' rows (every step; the final model), each at half of the audit's α."""
    from audit.one_run import one_run_scores_audit

    q, sigma, steps, delta = client.sample_rate, client.noise_multiplier, client.local_steps, client.delta
    claimed = opacus_epsilon(client.accountant, q, sigma, steps, delta)
    mu = math.sqrt(steps) / sigma if q == 1.0 and sigma > 0 else None
    row_confidence = 1.0 - (1.0 - confidence) / 2.0
    sim, sim_coins = simulate_promise(
        client, SIMULATED_CANARIES, np.random.default_rng(np.random.SeedSequence([seed, 7]))
    )
    rows = []
    for observer, scope in (("steps", "every step (white-box)"), ("final", "the final model")):
        simulated = step_scores(sim, client, observer)
        centre = 0.5 * (np.median(simulated[sim_coins == 1]) + np.median(simulated[sim_coins == 0]))
        row = one_run_scores_audit(
            step_scores(seen.every_step() if observer == "steps" else seen.per_step, client, observer),
            seen.coins,
            simulated,
            sim_coins,
            centre=float(centre),
            claimed_epsilon=claimed,
            claimed_delta=delta,
            claimed_mu=mu,
            confidence=row_confidence,
            channel="update",
            scope=scope,
        )
        rows.append(row)
    return rows
