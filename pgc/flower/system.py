"""A Flower client as a System: its ``ClientApp``, mods included, run through Flower's own Message path.

``release(secret, n, rng)`` sends the client n TRAIN messages exactly as a server does (a ``FitIns`` with
the global parameters in a ``RecordDict``), runs the ``ClientApp`` on each with a fresh ``Context``, and
returns what the server receives, every part of the reply a channel:

* ``update`` — the reply's parameters minus the global ones (the server knows those), flattened;
* ``num_examples`` — the number of examples the reply states (the ``FitRes``'s ``num_examples``; a server
  weighs the update by it), one column;
* ``metrics.KEY`` — one channel per numeric metric the reply carries (int, float, or bool as 0/1), one
  column each, in sorted key order, so that a report's row names the metric that leaks (the joint row
  ``all`` reads them together). Metrics of other types (str, bytes) are skipped: no channel audits them.
  A reply without a key, or with a non-numeric value under it, gives NaN there (an absent entry).

Channels are fixed per system: the metric keys are those of one probe message per secret of the named
pairs, sent at construction (or ``metrics=`` names them); a release whose reply carries a numeric metric
outside them stops with an error rather than drop it. Nothing of a mod is re-implemented: Flower's
``LocalDpMod`` (or the user's mod) clips and noises every reply's parameters — and nothing else, so a
claim read from the mods covers ``update`` only, and ``num_examples`` or a metric that depends on the
local data is an unprotected channel.

The secret selects the client's local data: the run config of every message's context holds it under
:data:`DATASET_KEY`, and the user's ``client_fn`` loads the data set it names (two neighbouring data
sets: one record replaced, or one record added or removed; the System names its relation). For an
update-level audit, :func:`crafted_update_app` builds a client whose update is ±C·e₁ by secret.

Randomness: Flower's mods draw from numpy's global generator (``np.random.normal``). ``release`` cuts
its n messages into blocks of :data:`RELEASE_BLOCK`, draws one seed per block from the caller's ``rng``
(:func:`block_seeds`) and seeds the global generator with it for that block, restoring its previous
state afterwards: a release depends only on ``rng``, never on how many processes send the blocks.

Speed: Flower's Message path costs about 1-2 ms a message (building and converting record dicts,
serializing every array), against microseconds for the noise itself, so ``release`` sends the blocks
from ``workers`` forked processes (default: the CPUs this process may use).
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from pgc.contracts import PrivacyClaim
from pgc.errors import UserError

DATASET_KEY = "pgc-audit-dataset"  # the run-config key that names the local data set to train on
CHANNEL = "update"
EXAMPLES_CHANNEL = "num_examples"
METRIC_PREFIX = "metrics."  # a numeric metric KEY is the channel metrics.KEY
RELEASE_BLOCK = 1024  # messages per seeded block of a release


def block_seeds(n: int, rng: np.random.Generator) -> list[tuple[int, int]]:
    """(size, seed) of each block of a release of n messages, the seeds drawn from ``rng`` in one call."""
    sizes = [RELEASE_BLOCK] * (n // RELEASE_BLOCK) + ([n % RELEASE_BLOCK] if n % RELEASE_BLOCK else [])
    seeds = rng.integers(2**32, size=len(sizes))
    return [(size, int(seed)) for size, seed in zip(sizes, seeds, strict=True)]


def available_cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


@contextlib.contextmanager
def server_identity(run_id: int = 1, node_id: int = 0):
    """The task identity under which Flower creates server messages (a running ServerApp sets it; an audit
    that plays the server sets it here), restored afterwards."""
    from flwr.supercore.task_identity import TaskIdentity

    saved = (TaskIdentity._run_id, TaskIdentity._node_id, TaskIdentity._task_id)
    if saved[0] is None:
        TaskIdentity.run_id, TaskIdentity.node_id, TaskIdentity.task_id = run_id, node_id, 0
    try:
        yield
    finally:
        TaskIdentity._run_id, TaskIdentity._node_id, TaskIdentity._task_id = saved


@contextlib.contextmanager
def seeded_global_numpy(seed: int):
    """numpy's global generator seeded with ``seed`` (Flower's mods draw from it), restored afterwards."""
    state = np.random.get_state()
    np.random.seed(seed)
    try:
        yield
    finally:
        np.random.set_state(state)


@contextlib.contextmanager
def quiet_flower(level: int = logging.WARNING):
    """Flower's per-message INFO logging off while an audit sends thousands of messages."""
    logger = logging.getLogger("flwr")
    saved = logger.level
    logger.setLevel(level)
    try:
        yield
    finally:
        logger.setLevel(saved)


def flatten(arrays: Sequence[np.ndarray]) -> np.ndarray:
    return np.concatenate([np.asarray(a, dtype=np.float64).ravel() for a in arrays])


def unflatten(vector: np.ndarray, like: Sequence[np.ndarray]) -> list[np.ndarray]:
    out, start = [], 0
    for a in like:
        out.append(np.asarray(vector[start : start + a.size], dtype=a.dtype).reshape(a.shape))
        start += a.size
    return out


def train_content(parameters: Sequence[np.ndarray], config: Mapping[str, Any]):
    """The content of a TRAIN message as a server sends it to a legacy (``client_fn``) ClientApp: FitIns in a
    RecordDict (the ClientApp reads it and leaves it as it is)."""
    from flwr.common import FitIns, ndarrays_to_parameters
    from flwr.compat.common.recorddict_compat import fitins_to_recorddict

    return fitins_to_recorddict(FitIns(ndarrays_to_parameters(list(parameters)), dict(config)), keep_input=True)


def train_message(content, node_id: int = 1):
    """A TRAIN message to node ``node_id`` carrying ``content`` (:func:`train_content`)."""
    from flwr.app import Message
    from flwr.common import MessageType

    return Message(content=content, dst_node_id=node_id, message_type=MessageType.TRAIN)


def reply_result(reply):
    """The ``FitRes`` a client's TRAIN reply carries (what the server receives): parameters, number of examples
    and metrics."""
    from flwr.compat.common.recorddict_compat import recorddict_to_fitres

    if reply.has_error():
        raise RuntimeError(f"the ClientApp replied with an error: {reply.error.reason}")
    return recorddict_to_fitres(reply.content, keep_input=False)


def numeric(value: Any) -> float | None:
    """A metric value as a number: int and float as they are, bool as 0/1; None for any other type (str, bytes)."""
    if isinstance(value, (bool, int, float, np.integer, np.floating)):
        return float(value)
    return None


def numeric_keys(metrics: Mapping[str, Any]) -> set[str]:
    return {k for k, v in metrics.items() if numeric(v) is not None}


class FlowerClientSystem:
    """One Flower client (a ``ClientApp``) as a System (see the module docstring).

    ``parameters``: the global parameters the server broadcasts (a broadcast given to ``release`` replaces
    them, flattened); ``pairs``: named neighbouring pairs of data-set names; ``claim``: the client's
    promise (default: read from its mods, :func:`pgc.flower.mods.claim_from_mods`, covering ``update``);
    ``relation``: what makes two secrets neighbours, for the report; ``workers``: processes that send a
    release's blocks (default: the CPUs this process may use; the result does not depend on it);
    ``metrics``: the metric keys that are channels (default: the numeric ones of the probe replies)."""

    channels: tuple[str, ...] = (CHANNEL, EXAMPLES_CHANNEL)  # and metrics.KEY per metric: set per instance

    def __init__(
        self,
        app,
        parameters: Sequence[np.ndarray],
        pairs: Mapping[str, tuple[str, str]],
        *,
        claim: PrivacyClaim | None = None,
        config: Mapping[str, Any] | None = None,
        name: str = "flower-client",
        relation: str = "one record replaced",
        workers: int | None = None,
        metrics: Sequence[str] | None = None,
    ):
        from flwr.clientapp import ClientApp

        from .mods import claim_from_mods, mods_of

        if not isinstance(app, ClientApp):
            raise TypeError(f"a Flower client audit needs a flwr ClientApp, got {type(app).__name__}")
        if not pairs:
            raise UserError("name at least one neighbouring pair of data sets")
        if workers is not None and (not isinstance(workers, int) or workers < 1):
            raise UserError(f"workers must be a positive integer, got {workers!r}")
        if isinstance(metrics, str) or not all(isinstance(k, str) and k for k in metrics or ()):
            raise UserError(f"metrics names metric keys (a sequence of non-empty strings), got {metrics!r}")
        self.app, self.name, self.relation = app, name, relation
        self.workers = available_cpus() if workers is None else workers
        self.parameters = [np.asarray(p) for p in parameters]
        self.pairs = {k: (str(a), str(b)) for k, (a, b) in pairs.items()}
        self.config = dict(config or {})
        self.mods = mods_of(app)
        self.claim = claim if claim is not None else claim_from_mods(self.mods)
        if self.claim is None:
            raise UserError(
                "no mod states a privacy claim (LocalDpMod does): give claim=PrivacyClaim(ε, δ, ('update',))"
            )
        self.metrics = tuple(sorted(set(metrics))) if metrics is not None else self.probe_metrics()
        self.channels = (CHANNEL, EXAMPLES_CHANNEL, *(METRIC_PREFIX + k for k in self.metrics))

    def probe_metrics(self) -> tuple[str, ...]:
        """The numeric metric keys of one reply per secret of the named pairs (its global random state seeded, then
        restored), sorted."""
        secrets = dict.fromkeys(s for pair in self.pairs.values() for s in pair)
        keys: set[str] = set()
        content = train_content(self.parameters, self.config)
        with server_identity(), quiet_flower(), seeded_global_numpy(0):
            for secret in secrets:
                keys |= numeric_keys(reply_result(self.app(train_message(content), _context(secret))).metrics)
        return tuple(sorted(keys))

    def release(self, secret, n: int, rng: np.random.Generator, *, broadcast=None) -> dict[str, np.ndarray]:
        if not isinstance(secret, str) or not secret:  # a secret is a local data set's name in the run config
            raise ValueError(f"a Flower client's secret is the name of a local data set, got {secret!r}")
        params = self.parameters if broadcast is None else unflatten(np.asarray(broadcast), self.parameters)
        blocks = block_seeds(n, rng)
        if self.workers == 1 or len(blocks) < 2:
            parts = [self.release_block(secret, params, block) for block in blocks]
        else:
            parts = _forked_blocks(self, secret, params, blocks)
        d = flatten(params).size
        rows = np.concatenate(parts) if parts else np.empty((0, d + 1 + len(self.metrics)))
        out = {CHANNEL: rows[:, :d], EXAMPLES_CHANNEL: rows[:, d : d + 1]}
        return out | {METRIC_PREFIX + k: rows[:, d + 1 + i : d + 2 + i] for i, k in enumerate(self.metrics)}

    def release_block(self, secret, params: Sequence[np.ndarray], block: tuple[int, int]) -> np.ndarray:
        """One block's messages: (size, seed) → what the server receives, one row each: the update, the number of
        examples, then each metric channel's value (NaN where the reply lacks it)."""
        from flwr.common import parameters_to_ndarrays

        size, seed = block
        base = flatten(params)
        d = base.size
        out = np.full((size, d + 1 + len(self.metrics)), np.nan)
        content = train_content(params, self.config)
        with server_identity(), quiet_flower(), seeded_global_numpy(seed):
            for i in range(size):
                fit = reply_result(self.app(train_message(content), _context(secret)))
                out[i, :d] = flatten(parameters_to_ndarrays(fit.parameters)) - base
                out[i, d] = fit.num_examples
                out[i, d + 1 :] = self.metric_values(fit.metrics)
        return out

    def metric_values(self, metrics: Mapping[str, Any]) -> list[float]:
        """The metric channels' values of one reply (NaN: absent, or not a number); a numeric metric outside the
        channels stops the release (dropping it would hide what it tells the server)."""
        unseen = sorted(numeric_keys(metrics) - set(self.metrics))
        if unseen:
            raise UserError(
                f"{self.name}: a reply carries the numeric metric(s) {', '.join(map(repr, unseen))}, which the probe "
                "replies at construction did not: name every metric the client may report (metrics=..., or "
                "AUDIT_METRICS in the app's module)"
            )
        values = [numeric(metrics.get(k)) for k in self.metrics]
        return [math.nan if v is None else v for v in values]

    def canaries(self) -> dict[str, tuple[str, str]]:
        return dict(self.pairs)

    def describe_secret(self, secret) -> str:
        return f"local data {secret}"

    def dp_event(self):
        from .mods import mods_event

        return mods_event(self.mods)

    @property
    def broadcast_space(self):
        """The box the adversarial search of the global parameters explores: ±1 around the given ones."""
        base = flatten(self.parameters)
        return base - 1.0, base + 1.0


def _context(secret: str):
    """A fresh Context for one message, its run config naming the local data set ``secret``."""
    from flwr.app import Context, RecordDict

    return Context(run_id=1, node_id=1, node_config={}, state=RecordDict(), run_config={DATASET_KEY: str(secret)})


_FORKED: tuple | None = None  # (system, secret, params) the forked processes of one release read


def _forked_blocks(system: FlowerClientSystem, secret, params, blocks: list[tuple[int, int]]) -> list[np.ndarray]:
    """The blocks sent from ``system.workers`` forked processes (they inherit the ClientApp; nothing of it
    is pickled), in block order, every channel's columns in each (:meth:`FlowerClientSystem.release_block`)."""
    import multiprocessing

    global _FORKED
    _FORKED = (system, secret, params)
    try:
        with multiprocessing.get_context("fork").Pool(
            min(system.workers, len(blocks)), initializer=_one_torch_thread
        ) as pool:
            return pool.map(_forked_block, blocks, chunksize=1)
    finally:
        _FORKED = None


def _one_torch_thread() -> None:
    import sys

    if "torch" in sys.modules:  # a forked process shares the CPUs with its siblings
        sys.modules["torch"].set_num_threads(1)


def _forked_block(block: tuple[int, int]) -> np.ndarray:
    system, secret, params = _FORKED
    return system.release_block(secret, params, block)


def crafted_update_app(mods: Sequence, clipping_norm: float, dim: int = 8) -> Callable:
    """A ClientApp whose update is +C·e₁ (secret ``+``) or −C·e₁ (secret ``-``): the update-level canary
    pair at the largest distance clipping allows (2C), for auditing a mod on its own."""
    from flwr.app import Context
    from flwr.client import ClientApp, NumPyClient

    class CraftedClient(NumPyClient):
        def __init__(self, sign: float):
            self.sign = sign

        def fit(self, parameters, config):
            step = np.zeros(dim)
            step[0] = self.sign * clipping_norm
            return [parameters[0] + step], 1, {}

    def client_fn(context: Context):
        secret = str(context.run_config.get(DATASET_KEY, "+"))
        if secret not in ("+", "-"):
            raise UserError(f"the crafted client knows the secrets '+' and '-', got {secret!r}")
        return CraftedClient(1.0 if secret == "+" else -1.0).to_client()

    return ClientApp(client_fn=client_fn, mods=list(mods))


def crafted_update_system(
    mods: Sequence,
    clipping_norm: float,
    dim: int = 8,
    *,
    claim: PrivacyClaim | None = None,
    name: str = "flower-crafted-update",
) -> FlowerClientSystem:
    """:func:`crafted_update_app` as a System (relation: any two updates, clipped; the canaries ±C·e₁)."""
    return FlowerClientSystem(
        crafted_update_app(mods, clipping_norm, dim),
        [np.zeros(dim)],
        {"±C·e1": ("+", "-")},
        claim=claim,
        name=name,
        relation="update level: any two client updates (clipped to norm C)",
    )


def local_dp_update_system(
    epsilon: float = 1.0,
    delta: float = 1e-5,
    clipping_norm: float = 1.0,
    sensitivity: float | None = None,
    dim: int = 8,
) -> FlowerClientSystem:
    """Flower's LocalDpMod on crafted updates; ``sensitivity`` defaults to 2C, the diameter of clipped
    updates (correct for the update-level relation)."""
    from flwr.client.mod import LocalDpMod

    mod = LocalDpMod(
        clipping_norm=clipping_norm,
        sensitivity=2.0 * clipping_norm if sensitivity is None else sensitivity,
        epsilon=epsilon,
        delta=delta,
    )
    return crafted_update_system([mod], clipping_norm, dim, name=f"flower-localdp ({epsilon:g}, {delta:g})")


def local_dp_sensitivity_c_system(epsilon: float = 4.0, delta: float = 1e-5) -> FlowerClientSystem:
    """LocalDpMod with its sensitivity set to the clipping norm C: half the 2C two clipped updates can differ
    by, so the noise is half what the claim needs."""
    system = local_dp_update_system(epsilon, delta, clipping_norm=1.0, sensitivity=1.0)
    system.name = f"flower-localdp sensitivity=C ({epsilon:g}, {delta:g})"
    return system
