"""An NVFlare filter as a System: the client's update through the filter's real ``process`` path.

``release(secret, n, rng)`` puts the update the secret names into a DXO (``WEIGHT_DIFF``, or ``WEIGHTS``: the
global model plus the update) with the client's ``NUM_STEPS_CURRENT_ROUND`` in its meta, wraps it in a
``Shareable``, runs ``filter.process(shareable, fl_ctx)`` — the call a client's task-result filter chain makes —
serializes the result with FOBS and reads it back (what the server receives), n times. Before each release the
filter gets the ``START_RUN`` event, so each release is the first call of a fresh run (SVTPrivacy's accountant
restarts at 0, as its own handler does). Channels, from what the server receives:

* ``update`` — every array entry, in name order (minus the global model for ``WEIGHTS``);
* ``scalars`` — the 0-dimensional entries (PyTorch's ``num_batches_tracked``), when the update has any;
* ``meta`` — every number in the DXO's metadata (the client's step count, the filter's recorded accounting).

Randomness: NVFlare's filters draw from numpy's global generator (and the statistics cleansers from
``random``); a release is cut into blocks of :data:`RELEASE_BLOCK`, each seeded from the caller's ``rng``, the
global states restored afterwards.
"""

from __future__ import annotations

import contextlib
import logging
import math
import random
from collections.abc import Mapping

import numpy as np

from pgc.contracts import PrivacyClaim
from pgc.errors import UserError

from .claims import UPDATE, clipping_bound, filter_claim
from .updates import initial_weights, update_pairs, updates_for

RELEASE_BLOCK = 1024
SECTION = "library-audits"


@contextlib.contextmanager
def seeded_filter_generators(seed: int):
    """numpy's global generator and ``random`` seeded with ``seed`` (the filters draw from them), restored after."""
    np_state, py_state = np.random.get_state(), random.getstate()
    np.random.seed(seed)
    random.seed(seed)
    try:
        yield
    finally:
        np.random.set_state(np_state)
        random.setstate(py_state)


@contextlib.contextmanager
def quiet_nvflare():
    """NVFlare's per-call INFO logging off while an audit filters thousands of updates."""
    logger = logging.getLogger("nvflare")
    saved = logger.level
    logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(saved)


def numbers_in(meta: Mapping, prefix: str = "") -> dict[str, float]:
    """Every number (bools as 0/1) in a nested metadata dictionary, by dotted key."""
    out: dict[str, float] = {}
    for key in sorted(meta, key=str):
        value, name = meta[key], f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(numbers_in(value, name + "."))
        elif isinstance(value, (bool, np.bool_, int, float, np.integer, np.floating)):
            out[name] = float(value)
    return out


class FilterSystem:
    """One NVFlare filter on one client's updates (module docstring). ``updates``: secret → (entries, steps);
    ``pairs``: named neighbouring pairs of secrets; ``claim``: a stated claim (default: read from the filter,
    :func:`pgc.nvflare.claims.filter_claim`); ``data_kind``: ``WEIGHT_DIFF`` or ``WEIGHTS``; ``wire``:
    FOBS round trip of every result (what the server receives)."""

    report_section = SECTION

    def __init__(
        self,
        flt,
        updates: Mapping[str, tuple[dict, int]],
        pairs: Mapping[str, tuple[str, str]],
        *,
        claim=None,
        data_kind: str = "WEIGHT_DIFF",
        name: str | None = None,
        wire: bool = True,
        global_model: Mapping[str, np.ndarray] | None = None,
    ):
        from nvflare.apis.dxo import DataKind
        from nvflare.apis.filter import Filter
        from nvflare.apis.fl_context import FLContext
        from nvflare.app_common.decomposers import common_decomposers

        if not isinstance(flt, Filter):
            raise TypeError(f"an NVFlare audit needs an nvflare Filter, got {type(flt).__name__}")
        if data_kind not in (DataKind.WEIGHT_DIFF, DataKind.WEIGHTS):
            raise UserError(f"data_kind must be {DataKind.WEIGHT_DIFF} or {DataKind.WEIGHTS}, got {data_kind!r}")
        common_decomposers.register()
        self.filter, self.data_kind, self.wire = flt, data_kind, bool(wire)
        self.updates, self.pairs = dict(updates), dict(pairs)
        first = next(iter(self.updates.values()))[0]
        self.global_model = (
            {k: np.zeros(np.shape(v)) for k, v in first.items()}
            if global_model is None
            else {k: np.asarray(v, dtype=np.float64) for k, v in global_model.items()}
        )
        self.context = FLContext()
        self.name = name or f"nvflare {type(flt).__name__} ({data_kind})"
        self.relation = "local DP: any two updates of one client"
        self.layout = self._probe_layout()
        self.channels = tuple(c for c in (UPDATE, "scalars", "meta") if self.widths[c])
        entries = sum(int(np.size(v)) for v in first.values())  # the filter counts the scalars too
        self.claim, self.readings = filter_claim(flt, entries, self.recorded_budget, claim)

    def _probe_layout(self) -> dict[str, list[str]]:
        """The names behind each channel's columns, from one filtered update (under a throwaway seed)."""
        with seeded_filter_generators(0):
            dxo = self._filtered(next(iter(self.updates)))
        data = dxo.data or {}
        self.recorded_budget = dxo.meta.get("svt_privacy_budget")
        self.layout = {
            UPDATE: [k for k in sorted(data) if np.ndim(data[k]) > 0],
            "scalars": [k for k in sorted(data) if np.ndim(data[k]) == 0],
            "meta": list(numbers_in(dxo.meta)),
        }
        self.widths = {c: v.size for c, v in self._row(dxo).items()}
        return self.layout

    def _filtered(self, secret):
        from nvflare.apis.dxo import DXO, MetaKey, from_shareable
        from nvflare.apis.event_type import EventType
        from nvflare.fuel.utils import fobs

        entries, steps = self.updates[secret]
        sent = {k: np.array(v, copy=True) for k, v in entries.items()}
        if self.data_kind != "WEIGHT_DIFF":
            sent = {k: self.global_model[k] + v for k, v in sent.items()}
        self.filter.handle_event(EventType.START_RUN, self.context)
        shareable = DXO(self.data_kind, sent, meta={MetaKey.NUM_STEPS_CURRENT_ROUND: steps}).to_shareable()
        with quiet_nvflare():
            out = self.filter.process(shareable, self.context)
        return from_shareable(fobs.loads(fobs.dumps(out)) if self.wire else out)

    def _row(self, dxo) -> dict[str, np.ndarray]:
        data, meta = dxo.data or {}, numbers_in(dxo.meta)
        base = {} if self.data_kind == "WEIGHT_DIFF" else self.global_model

        def entry(k):
            value = np.asarray(data[k], dtype=np.float64)
            return (value - base[k] if k in base else value).ravel()

        return {
            UPDATE: np.concatenate([entry(k) for k in self.layout[UPDATE]] or [np.zeros(0)]),
            "scalars": np.array([float(data[k]) for k in self.layout["scalars"]]),
            "meta": np.array([meta.get(k, np.nan) for k in self.layout["meta"]]),
        }

    def release(self, secret, n: int, rng: np.random.Generator, *, broadcast=None) -> dict[str, np.ndarray]:
        if not isinstance(secret, str) or secret not in self.updates:
            raise UserError(f"a secret names one of the updates {', '.join(map(repr, self.updates))}, got {secret!r}")
        sizes = [RELEASE_BLOCK] * (n // RELEASE_BLOCK) + ([n % RELEASE_BLOCK] if n % RELEASE_BLOCK else [])
        rows = []
        for size, seed in zip(sizes, rng.integers(2**32, size=len(sizes)), strict=True):
            with seeded_filter_generators(int(seed)):
                rows.extend(self._row(self._filtered(secret)) for _ in range(size))
        return {c: np.array([r[c] for r in rows]).reshape(n, self.widths[c]) for c in self.channels}

    def canaries(self) -> dict[str, tuple[str, str]]:
        return dict(self.pairs)

    def describe_secret(self, secret) -> str:
        entries, steps = self.updates[secret]
        return f"{secret} ({steps} steps)"

    def library_record(self) -> dict:
        from importlib import metadata

        flt = self.filter
        params = {
            k: v
            for k, v in vars(flt).items()
            if not k.startswith("_")
            and k not in ("data_kinds", "skip")
            and isinstance(v, (int, float, str, bool, list, type(None)))
        }
        return {
            "library": "nvflare",
            "version": metadata.version("nvflare"),
            "protocol": type(flt).__name__,
            "parameters": {**params, "data_kind": self.data_kind},
            "claimed_epsilon": self.claim.epsilon if math.isfinite(self.claim.epsilon) else "inf",
            "claim_reading": "; ".join(f"{r['parameter']} → {r['claim']} ({r['why']})" for r in self.readings),
            "readings": self.readings,
            "covers": list(self.claim.covers),
            "channels": list(self.channels),
            "seeding": "numpy's global generator and random seeded from the audit's stream per block of "
            f"{RELEASE_BLOCK} releases, restored afterwards",
            "path": "DXO → Shareable → filter.process → FOBS round trip → DXO"
            if self.wire
            else "DXO → Shareable → filter.process → DXO",
        }


def filter_system(
    flt, *, claim=None, data_kind: str = "WEIGHT_DIFF", wire: bool = True, name: str | None = None
) -> FilterSystem:
    """A filter on the built-in updates (:mod:`pgc.nvflare.updates`): the trained pairs and the pair at its
    clipping bound; a ``WEIGHTS`` result is the seeded initial model plus the update."""
    bound = clipping_bound(flt)
    return FilterSystem(
        flt,
        updates_for(bound),
        update_pairs(bound),
        claim=claim,
        data_kind=data_kind,
        wire=wire,
        name=name,
        global_model=initial_weights() if data_kind == "WEIGHTS" else None,
    )


def svt_privacy_system(data_kind: str = "WEIGHT_DIFF", **settings) -> FilterSystem:
    """NVFlare's SVTPrivacy (``settings``: its constructor's keywords; none: its defaults)."""
    from nvflare.app_common.filters import SVTPrivacy

    return filter_system(SVTPrivacy(**settings), data_kind=data_kind)


def percentile_privacy_system(data_kind: str = "WEIGHT_DIFF", **settings) -> FilterSystem:
    """NVFlare's PercentilePrivacy (``settings``: its constructor's keywords; none: its defaults)."""
    from nvflare.app_common.filters import PercentilePrivacy

    return filter_system(PercentilePrivacy(**settings), data_kind=data_kind)


def exclude_vars_system(data_kind: str = "WEIGHT_DIFF", **settings) -> FilterSystem:
    """NVFlare's ExcludeVars (``settings``: its constructor's keywords; none: its defaults, which exclude nothing)."""
    from nvflare.app_common.filters import ExcludeVars

    return filter_system(ExcludeVars(**settings), data_kind=data_kind)


def filter_system_from_spec(spec: str, settings: dict, claim: PrivacyClaim | None = None) -> FilterSystem:
    """The FilterSystem of the filter ``MODULE:FILTER`` (or ``path/to/file.py:FILTER``) built with ``settings``
    (``data_kind`` and ``wire`` are the audit's own); ``claim`` (``pgc audit nvflare --claim``), else the module's
    ``AUDIT_CLAIM``, replaces the claim read from the filter. A bad spec or setting is a one-line
    :class:`UserError`."""
    from pgc.systems.registry import spec_module, system_factory

    settings = dict(settings)
    data_kind, wire = settings.pop("data_kind", "WEIGHT_DIFF"), settings.pop("wire", True)
    try:
        factory = system_factory(spec, "nvflare")
        claim = claim if claim is not None else getattr(spec_module(spec), "AUDIT_CLAIM", None)
        flt = factory(**settings)
        return filter_system(flt, claim=claim, data_kind=data_kind, wire=bool(wire))
    except UserError:
        raise
    except (TypeError, ValueError) as exc:  # the filter refusing its settings (the user's frames shown if theirs)
        raise UserError(
            f"nvflare {spec} with {', '.join(f'{k}={v!r}' for k, v in settings.items()) or 'its defaults'}: {exc}"
        ) from exc
