"""Describing a mechanism on disk (run folders) and rebuilding it from the registry."""

from __future__ import annotations

import math

import numpy as np

from pgc.errors import UserError
from pgc.files import json_number

from .core import Mechanism, split_rounds
from .registry import MECHANISMS, make_mechanism


def mechanism_params(mechanism: Mechanism) -> dict:
    """The mechanism's public scalar settings (dataclass fields, else public attributes), JSON-ready."""
    import dataclasses

    if dataclasses.is_dataclass(mechanism):
        items = {f.name: getattr(mechanism, f.name) for f in dataclasses.fields(mechanism)}
    else:
        items = (
            {k: v for k, v in vars(mechanism).items() if not k.startswith("_")}
            if hasattr(mechanism, "__dict__")
            else {}
        )
    items.setdefault("epsilon", getattr(mechanism, "epsilon", None))
    out = {}
    for k, v in sorted(items.items()):
        if isinstance(v, (np.generic,)):
            v = v.item()
        if v is None or isinstance(v, (bool, int, str)):
            out[k] = v
        elif isinstance(v, float):
            out[k] = json_number(v)
    return out


def mechanism_fingerprint(mechanism: Mechanism) -> str:
    """SHA-256 of the mechanism's class (module and qualified name) and :func:`mechanism_params`: two
    mechanisms with one fingerprint are the same class with the same settings."""
    import hashlib
    import json

    kind = type(mechanism)
    text = json.dumps(
        {"class": f"{kind.__module__}.{kind.__qualname__}", "params": mechanism_params(mechanism)}, sort_keys=True
    )
    return hashlib.sha256(text.encode()).hexdigest()


def _factory_args(mechanism: Mechanism) -> dict:
    eps = getattr(mechanism, "epsilon", math.inf)
    args = {
        "epsilon": float(eps),
        "clip": getattr(mechanism, "clip", None),
        "reduced_dim": getattr(mechanism, "reduced_dim", None),
    }
    if getattr(mechanism, "delta", None):
        args["delta"] = float(mechanism.delta)
    return args


def registered_name(mechanism: Mechanism, hint: str | None = None) -> str | None:
    """The registry name whose factory builds exactly ``mechanism`` (same fingerprint) from its ε, C
    and d̂ — ``hint`` and a ``name`` attribute of the mechanism are tried first; None if none does."""
    target = mechanism_fingerprint(mechanism)
    args = _factory_args(mechanism)
    names = [n for n in (hint, getattr(mechanism, "name", None)) if isinstance(n, str) and n in MECHANISMS]
    names += [n for n in MECHANISMS if n not in names]
    for name in names:
        try:
            if mechanism_fingerprint(make_mechanism(name, **args)) == target:
                return name
        except Exception:  # a factory that refuses these settings is not this mechanism's
            continue
    return None


def mechanism_record(
    mechanism: Mechanism, *, name: str | None = None, factory_args: dict | None = None, rounds: int = 1
) -> dict:
    """What a run folder stores about the mechanism a trial used (per submission, after the ε split):
    its registry ``name`` (None for an unregistered one), class, parameters, the factory arguments
    and ``rounds`` that rebuild it (``split_rounds(make_mechanism(name, **factory_args), rounds)``),
    and its fingerprint, which :func:`rebuild_mechanism` checks. Without ``name`` the registry is
    searched (:func:`registered_name`); ``factory_args`` and ``rounds`` default to the mechanism's own
    ε, C, d̂ and 1."""
    kind = type(mechanism)
    if name is None or factory_args is None:
        found, args, rounds = (name or registered_name(mechanism)), _factory_args(mechanism), 1
    else:
        found, args = name, dict(factory_args)
    return {
        "name": found,
        "class": f"{kind.__module__}.{kind.__qualname__}",
        "params": mechanism_params(mechanism),
        "factory_args": {k: (json_number(v) if isinstance(v, float) and math.isinf(v) else v) for k, v in args.items()},
        "rounds": int(rounds),
        "fingerprint": mechanism_fingerprint(mechanism),
    }


class MechanismUnavailableError(UserError):
    """A recorded mechanism that cannot be rebuilt in this process."""


def rebuild_mechanism(record: dict, *, where: str = "the run") -> Mechanism:
    """The mechanism described by :func:`mechanism_record`, built from the registry and checked against
    the recorded fingerprint. Raises :class:`MechanismUnavailableError` with a one-line reason."""
    if not isinstance(record, dict) or not isinstance(record.get("fingerprint"), str):
        raise MechanismUnavailableError(f"{where} has no usable mechanism record")
    name, cls = record.get("name"), record.get("class", "?")
    if not isinstance(cls, str):
        cls = "?"
    if name is not None and not isinstance(name, str):
        raise MechanismUnavailableError(f"{where} has a malformed mechanism record (its name is not a string)")
    if name is None:
        raise MechanismUnavailableError(
            f"{where} was trained with the unregistered mechanism {cls}; register a "
            "factory for it (pgc.mechanisms.register_mechanism) and train again"
        )
    if name not in MECHANISMS:
        raise MechanismUnavailableError(
            f"{where} was trained with mechanism {name!r} ({cls}), which is not "
            f"registered in this process; call register_mechanism({name!r}, factory) first"
        )
    args = dict(record.get("factory_args") or {})
    if isinstance(args.get("epsilon"), str):
        args["epsilon"] = float(args["epsilon"])
    if isinstance(args.get("clip"), str):
        args["clip"] = float(args["clip"])
    try:
        mech = split_rounds(make_mechanism(name, **args), int(record.get("rounds", 1)))
    except (TypeError, ValueError) as exc:
        raise MechanismUnavailableError(
            f"{where}: the registered mechanism {name!r} cannot be rebuilt: {exc}"
        ) from None
    if mechanism_fingerprint(mech) != record["fingerprint"]:
        raise MechanismUnavailableError(
            f"{where} was trained with {cls} {record.get('params')}, but {name!r} now builds "
            f"{type(mech).__module__}.{type(mech).__qualname__} {mechanism_params(mech)} (fingerprint differs)"
        )
    return mech
