"""``pgc audit opacus MODULE:FACTORY``: a client trained by Opacus as shipped (:mod:`pgc.opacus`), audited as a
System through the one engine."""

from __future__ import annotations

from pgc.errors import UserError

from .system import audit_system_object, factory_settings


def audit_opacus_client(args, report: dict, progress: bool):
    from pgc.systems.registry import check_settings, system_factory

    try:
        from pgc.opacus import OpacusClient
        from pgc.opacus.system import OpacusSystem
    except ImportError as exc:
        raise UserError(
            f"pgc audit opacus needs Opacus: pip install -e '.[opacus]' (scripts/setup.sh installs it): {exc}"
        ) from None
    settings = factory_settings(args.setting)
    factory = system_factory(args.opacus, option="pgc audit opacus")
    check_settings(factory, settings, args.opacus)
    client = factory(**settings)  # the user's code: what it raises is reported as theirs
    if not isinstance(client, OpacusClient):
        raise UserError(
            f"pgc audit opacus {args.opacus}: the factory returned {type(client).__name__}, not a "
            "pgc.opacus.OpacusClient"
        )
    record = args.record if args.record == "canary" else _index(args.record)
    name = f"opacus:{args.opacus.rpartition(':')[2]}"
    system = OpacusSystem(
        client, relation=args.relation, record=record, name=name, workers=args.workers, per_step=args.per_step
    )
    accounting = ", ".join(f"{k} ε = {v:.4g}" for k, v in system.accounting().items())
    print(f"{system.relation}; δ = {client.delta:g}; {accounting}", flush=True)
    args.pair, args.secrets, args.search_pair, args.adversarial = None, None, False, False
    args.channels, args.float_exact = None, False
    try:
        return audit_system_object(system, args, report, progress)
    finally:
        system.close()


def _index(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise UserError(f"--record {text!r}: a record index or canary") from None
