"""``pgc audit ldp LIBRARY:PROTOCOL`` and ``pgc audit nvflare MODULE:FILTER``: the privacy code users deploy,
audited as Systems through the one engine.

* ``ldp``: a frequency oracle of multi-freq-ldpy, pure-ldp or this project's reference
  (:mod:`pgc.ldp`), ``--setting k=K --setting epsilon=E`` (and the protocol's own settings, e.g.
  ``hashes=2`` for RAPPOR; ``pair=[0, 5]`` for another pair than 0 vs k − 1; ``decoders=false`` to offer the
  auditor no statistic on the protocol's decoding);
* ``nvflare``: an NVFlare ``Filter`` (``nvflare.app_common.filters:SVTPrivacy``, or a user's
  ``my_filters.py:MyFilter``) built with ``--setting`` keywords, run through its ``process`` path on the built-in
  client updates (:mod:`pgc.nvflare.updates`; ``--pair`` picks one of them); ``--setting data_kind=WEIGHTS``
  filters full weights instead of WEIGHT_DIFF. A module may state ``AUDIT_CLAIM`` for a filter that states no claim.

Both print the library, its version, the claim and where it comes from, then audit like ``pgc audit system`` and keep
that record in the result (``library``) for the report's library section.
"""

from __future__ import annotations

import dataclasses

from pgc.errors import UserError

from .system import audit_system_object, factory_settings


def audit_ldp(args, progress: bool):
    from pgc.ldp.system import ldp_system

    settings = factory_settings(args.setting)
    missing = [key for key in ("k", "epsilon") if key not in settings]
    if missing:
        raise UserError(f"--ldp {args.ldp}: give --setting k=K and --setting epsilon=E (missing {', '.join(missing)})")
    k, epsilon, pair = settings.pop("k"), settings.pop("epsilon"), settings.pop("pair", None)
    try:
        system = ldp_system(args.ldp, k, epsilon, pair, bool(settings.pop("decoders", True)), **settings)
    except (TypeError, ValueError, ImportError) as exc:
        text = str(exc)
        raise UserError(text if text.startswith("--ldp") else f"--ldp {args.ldp}: {text}") from None
    record = system.library_record()
    print(
        f"{record['library']} {record['version'] or ''} {record['protocol']}: {record['claim_reading']}; exact ε of "
        f"the release for the pair {record['pair'][0]} vs {record['pair'][1]}: {record['exact_epsilon']}"
        + (f"; {record['batching']}" if "batching" in record else ""),
        flush=True,
    )
    return dataclasses.replace(audit_system_object(system, args, progress), library=library_run(record))


def audit_nvflare(args, progress: bool):
    system = nvflare_system(args.nvflare, factory_settings(args.setting), args.claim)
    record = system.library_record()
    print(
        f"nvflare {record['version']} {record['protocol']} ({record['path']}); channels "
        f"{', '.join(system.channels)}; claim:",
        flush=True,
    )
    for reading in system.readings:
        print(f"  {reading['parameter']} → {reading['claim']}  ({reading['why']})")
    return dataclasses.replace(audit_system_object(system, args, progress), library=library_run(record))


def library_run(record: dict):
    """A System's library record (its ``library_record()``) as the result records it."""
    import pgc.schemas as schemas

    readings = [schemas.ClaimReading(**r) for r in record.get("readings") or []]
    numbers = {k: schemas.number(record[k]) for k in ("claimed_epsilon", "exact_epsilon") if k in record}
    return schemas.LibraryRun(**{**record, **numbers, "readings": readings or None})


def nvflare_system(spec: str, settings: dict, claim: tuple[float, float] | None = None):
    """The FilterSystem of ``MODULE:FILTER`` (:func:`pgc.nvflare.system.filter_system_from_spec`); ``claim``: the
    (ε, δ) the user states on the update (``--claim``), instead of the one read from the filter."""
    try:
        from pgc.nvflare.system import filter_system_from_spec
    except ImportError as exc:
        raise UserError(
            f"pgc audit nvflare needs NVFlare: pip install -e '.[nvflare]' (scripts/setup.sh installs it): {exc}"
        ) from None
    if claim is not None:
        from pgc.contracts import PrivacyClaim

        return filter_system_from_spec(spec, settings, PrivacyClaim(claim[0], claim[1], ("update",)))
    return filter_system_from_spec(spec, settings)
