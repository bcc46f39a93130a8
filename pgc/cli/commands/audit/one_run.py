"""``pgc audit one-run RUN``: the one-run audit of a run trained with canary agents; each canary
submission is guessed with a statistic fitted on releases the auditor simulates itself, and ε_LB follows
from the one-run theorem (:mod:`audit.one_run`, docs/README-one-run.md) per channel
(:func:`pgc.audits.run.one_run_canary_audit`)."""

from __future__ import annotations

from pgc.errors import UserError

from .common import fmt, header


def audit_one_run(args, progress: bool):
    import pgc.schemas as schemas
    from pgc.audits.run import canary_trial, one_run_canary_audit

    trial, canaries, transcript = canary_trial(args.one_run, args.trial)
    channels = _channels(args)
    rows, simulated = one_run_canary_audit(
        trial,
        canaries,
        transcript,
        channels=channels,
        samples=args.samples,
        seed=args.seed,
        confidence=args.confidence,
        log=lambda line: print(f"one-run audit of {args.one_run} trial {args.trial}: {line}", flush=True),
    )
    for r in rows:
        _print_row(r)
    config = trial.config
    return schemas.OneRunAudit(
        **header(args),
        channels=list(rows),
        audited_run=schemas.AuditedRun(run=str(args.one_run), trial=args.trial, config=config.to_dict()),
        canary_setup=schemas.CanarySetup(**canaries.setup),
        canary_submissions=int(canaries.positions.size),
        simulated_models=simulated,
        protection=_protection(config.protection()) if config.protect else None,
    )


def _protection(record: dict):
    """A run's protection record (:meth:`pgc.a3c.config.TrainConfig.protection`) as the result records it."""
    import pgc.schemas as schemas

    numbers = {k: schemas.number(record[k]) for k in ("claimed_epsilon_total", "gradient_epsilon", "score_epsilon")}
    return schemas.Protection(
        protect=list(record["protect"]),
        claim_covers=list(record["claim_covers"]),
        metrics_from=record["metrics_from"],
        **numbers,
    )


def _channels(args) -> tuple[str, ...]:
    from audit.one_run import ONE_RUN_CHANNELS

    channels = (
        ONE_RUN_CHANNELS if args.channels is None else tuple(c.strip() for c in args.channels.split(",") if c.strip())
    )
    bad = [c for c in channels if c not in ONE_RUN_CHANNELS]
    if bad or not channels:
        raise UserError(
            f"--channels: unknown {bad or list(channels)}; the one-run audit has {', '.join(ONE_RUN_CHANNELS)}"
        )
    return channels


def _print_row(r) -> None:
    print(
        f"  {r.channel:<9} claim {fmt(r.claimed_epsilon)}  ε_LB {r.epsilon_lower_bound:.3f} "
        f"(ε_LB/ε {r.epsilon_lower_bound / r.claimed_epsilon:.3f})  {r.correct:,}/{r.guesses:,} "
        f"right of M={r.canaries:,}  max {r.max_certifiable_epsilon:.3f}  [{r.statistic}]  {r.verdict}"
    )
    if r.mu_lower_bound is not None and r.claimed_mu is not None:
        print(
            f"            f-DP: μ_LB {r.mu_lower_bound:.3f} vs claimed μ {r.claimed_mu:.3f}, ε_LB "
            f"{r.fdp_epsilon_lower_bound or 0.0:.3f} through the (ε, δ) curve; Steinke ε_LB "
            f"{r.steinke_epsilon_lower_bound or r.epsilon_lower_bound:.3f}; {r.bounds or ''}"
        )
    print(f"            {r.verdict}: {r.verdict_reason}")
