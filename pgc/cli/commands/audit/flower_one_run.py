"""``pgc audit flower-one-run MODE``: canary clients inside a real Flower simulation, audited in one run
(:func:`pgc.audits.flower.flower_one_run`)."""

from __future__ import annotations

from pgc.errors import UserError


def audit_flower_one_run(args, progress: bool):
    try:
        from pgc.flower.simulation import OneRunSetup
    except ImportError as exc:
        raise UserError(
            f"--flower-one-run needs Flower: pip install -e '.[flower]' (scripts/setup.sh installs it): {exc}"
        ) from None
    try:
        setup = OneRunSetup(
            canaries=args.canaries,
            real_clients=args.real_clients,
            rounds=args.rounds,
            mode=args.flower_one_run,
            epsilon=args.epsilon,
            delta=args.delta,
            noise_multiplier=args.noise_multiplier,
            seed=args.seed,
            confidence=args.confidence,
        )
    except ValueError as exc:
        raise UserError(f"--flower-one-run: {exc}") from None
    print(
        f"one federated run on Flower's simulation engine: {setup.canaries:,} canary clients beside "
        f"{setup.real_clients} real ones, {setup.rounds} round(s), {setup.mode}",
        flush=True,
    )
    from pgc.audits.flower import flower_one_run

    result = flower_one_run(setup, progress)
    for row in result.rows:
        print(
            f"  {row.scope:<26} promised ε {row.claimed_epsilon:.3g}: ε_LB {row.epsilon_lower_bound:.3f} "
            f"(Steinke {row.steinke_epsilon_lower_bound:.3f}; f-DP μ_LB {row.mu_lower_bound:.3f}"
            + ("" if row.claimed_mu is None else f" vs μ {row.claimed_mu:.3f}")
            + f"); {row.correct}/{row.guesses} right of M={row.canaries} -> {row.verdict}"
        )
        print(f"      {row.verdict}: {row.verdict_reason}")
    return result
