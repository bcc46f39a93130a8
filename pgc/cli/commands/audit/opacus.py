"""``pgc audit opacus MODULE:FACTORY``: a client trained by Opacus as shipped (:mod:`pgc.opacus`), audited as a
System through the one engine."""

from __future__ import annotations

from pgc.errors import UserError

from .system import audit_system_object, factory_settings


def _client(args, command: str):
    """The user's OpacusClient from MODULE:FACTORY and --setting (their exceptions are theirs)."""
    from pgc.systems.registry import check_settings, system_factory

    try:
        from pgc.opacus import OpacusClient
    except ImportError as exc:
        raise UserError(
            f"pgc audit {command} needs Opacus: pip install -e '.[opacus]' (scripts/setup.sh installs it): {exc}"
        ) from None
    settings = factory_settings(args.setting)
    factory = system_factory(args.opacus, option=f"pgc audit {command}")
    check_settings(factory, settings, args.opacus)
    client = factory(**settings)  # the user's code: what it raises is reported as theirs
    if not isinstance(client, OpacusClient):
        raise UserError(
            f"pgc audit {command} {args.opacus}: the factory returned {type(client).__name__}, not a "
            "pgc.opacus.OpacusClient"
        )
    return client


def audit_opacus_client(args, progress: bool):
    client = _client(args, "opacus")
    from pgc.opacus.system import OpacusSystem

    record = args.record if args.record in ("canary", "gradient") else _index(args.record)
    name = f"opacus:{args.opacus.rpartition(':')[2]}"
    system = OpacusSystem(
        client,
        relation=args.relation,
        record=record,
        name=name,
        workers=args.workers,
        per_step=args.per_step,
        black_box=args.black_box,
    )
    accounting = ", ".join(f"{k} ε = {v:.4g}" for k, v in system.accounting().items())
    print(f"{system.relation}; δ = {client.delta:g}; {accounting}", flush=True)
    args.pair, args.secrets, args.search_pair, args.adversarial = None, None, False, False
    args.channels, args.float_exact = None, False
    try:
        return audit_system_object(system, args, progress)
    finally:
        system.close()


def _index(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise UserError(f"--record {text!r}: a record index, canary or gradient") from None


def audit_opacus_one_run(args, progress: bool):
    """``pgc audit opacus-one-run``: one training with gradient canaries (:mod:`pgc.opacus.one_run`), typed."""
    from pgc.audits.opacus import one_run_rows
    from pgc.opacus.one_run import describe, train_with_canaries
    from pgc.schemas import OpacusOneRunResult, OpacusTraining

    client = _client(args, "opacus-one-run")
    training = OpacusTraining(**describe(client))
    print(
        f"one Opacus training: {training.records:,} records, {training.steps} steps at sample rate "
        f"{training.sample_rate:g}, σ = {training.noise_multiplier:g}; {args.canaries:,} gradient canaries",
        flush=True,
    )
    seen = train_with_canaries(client, args.canaries, args.seed)
    rows = one_run_rows(client, seen, args.seed, args.confidence)
    for row in rows:
        print(
            f"  {row.scope:<24} claim ε {row.claimed_epsilon:.3g}: ε_LB {row.epsilon_lower_bound:.3f} "
            f"(Steinke {row.steinke_epsilon_lower_bound:.3f}; f-DP μ_LB {row.mu_lower_bound:.3f}); "
            f"{row.correct}/{row.guesses} right of M={row.canaries} -> {row.verdict}"
        )
        print(f"      {row.verdict}: {row.verdict_reason}")
    return OpacusOneRunResult(
        client=args.opacus,
        canaries=args.canaries,
        seed=args.seed,
        confidence=args.confidence,
        training=training,
        rows=rows,
        training_s=seen.training_s,
    )
