"""``pgc audit --one-run RUN``: the one-run audit of a run trained with canary agents; each canary
submission is guessed with a statistic fitted on releases the auditor simulates itself, and ε_LB follows
from the one-run theorem (:mod:`audit.one_run`, docs/README-one-run.md) per channel."""

from __future__ import annotations

from pgc.errors import UserError
from .common import fmt, row_record


def audit_one_run(args, report: dict, progress: bool) -> int:
    from audit.one_run import MAX_SIMULATED_BROADCASTS, one_run_audit
    from pgc.a3c.transcript import transcript_releases

    trial, canaries, transcript = _canary_trial(args)
    channels = _channels(args)
    config = trial.config
    secret, secret_prime = config.canary_pair
    positions = canaries.positions
    # the coins: evaluation-only, read to count correct guesses after every choice is made
    truth = (trial.ground_truth().psi[positions] == secret_prime).astype("int64")
    broadcasts = trial.canary_broadcasts(canaries, transcript, MAX_SIMULATED_BROADCASTS)
    system = trial.system(broadcasts[0])
    print(f"one-run audit of {args.one_run} trial {args.trial}: {positions.size:,} {canaries.setup['canary_model']} "
          f"canaries, {secret:g} vs {secret_prime:g}, claim ε = {fmt(float(system.claim.epsilon))}; simulating at "
          f"{len(broadcasts)} model(s)", flush=True)
    scope = f"one-run {canaries.setup['canary_model']} {secret:g} vs {secret_prime:g}"
    rows = one_run_audit(system, secret, secret_prime, transcript_releases(transcript, positions), truth,
                         broadcasts, channels=channels, samples=args.samples, seed=args.seed,
                         confidence=args.confidence, scope=scope)
    for r in rows:
        _print_row(r)
        report["channels"].append(row_record(r))
    report.update(run=str(args.one_run), trial=args.trial, canary_setup=canaries.setup,
                  canary_submissions=int(positions.size), simulated_models=len(broadcasts),
                  protection=config.protection() if config.protect else None)
    return 0


def _canary_trial(args):
    from pgc.a3c.rundir import load_run

    _, trials = load_run(args.one_run)
    if not 0 <= args.trial < len(trials):
        raise UserError(f"{args.one_run} has {len(trials)} trial(s); no trial {args.trial}")
    trial = trials[args.trial]
    if not trial.config.canaries:
        raise UserError(f"{args.one_run} was trained without canaries (pgc train --canaries M --canary-pair A:B)")
    try:
        return trial, trial.canaries(), trial.transcript()
    except FileNotFoundError as exc:
        raise UserError(f"{args.one_run}: {exc}") from None


def _channels(args) -> tuple[str, ...]:
    from audit.one_run import ONE_RUN_CHANNELS

    channels = ONE_RUN_CHANNELS if args.channels is None else tuple(
        c.strip() for c in args.channels.split(",") if c.strip())
    bad = [c for c in channels if c not in ONE_RUN_CHANNELS]
    if bad or not channels:
        raise UserError(f"--channels: unknown {bad or list(channels)}; the one-run audit has "
                       f"{', '.join(ONE_RUN_CHANNELS)}")
    return channels


def _print_row(r) -> None:
    print(f"  {r.channel:<9} claim {fmt(r.claimed_epsilon)}  ε_LB {r.epsilon_lower_bound:.3f} "
          f"(ε_LB/ε {r.epsilon_lower_bound / r.claimed_epsilon:.3f})  {r.correct:,}/{r.guesses:,} "
          f"right of M={r.canaries:,}  max {r.max_certifiable_epsilon:.3f}  [{r.statistic}]  {r.verdict}")
    if r.mu_lower_bound is not None and r.claimed_mu is not None:
        print(f"            f-DP: μ_LB {r.mu_lower_bound:.3f} vs claimed μ {r.claimed_mu:.3f} (ε "
              f"{r.extra.get('fdp_epsilon_lower_bound', 0.0):.3f} if the curve is Gaussian); Steinke ε_LB "
              f"{r.extra.get('steinke_epsilon_lower_bound', r.epsilon_lower_bound):.3f}; {r.extra.get('bounds', '')}")
    print(f"            {r.verdict}: {r.verdict_reason}")
