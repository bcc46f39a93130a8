"""Canary clients inside a real Flower simulation: the one-run audit of a federated training run.

One federated training run on Flower's simulation engine (``flwr.simulation.run_simulation``, Ray
backend): ``real_clients`` clients train a softmax-regression model on their shard of scikit-learn's
digits, and M canary clients take part beside them (Andrew et al., ICLR 2024, "One-shot empirical
privacy estimation for federated learning"). Canary i owns a random unit direction cᵢ, a decoy direction
dᵢ and a fair coin, all from the i-th child of the run's SeedSequence; in every round it replies with the
global model plus C·cᵢ (coin 1) or C·dᵢ (coin 0): the neighbouring runs differ in one client's update
(replaced). A canary cannot send no update at all: Flower's LocalDpMod divides by the update's norm and
fails on a zero update. A strategy wrapper records what the server receives
(every client's reply) and the aggregate it produces (the next global model, with the server's noise
in the central-DP mode).

Modes: ``local-dp`` — every client runs Flower's ``LocalDpMod`` (clip to C, Gaussian noise for (ε, δ)
per update); ``central-dp`` — every client runs ``fixedclipping_mod`` (clip only) and the server wraps
FedAvg in ``DifferentialPrivacyClientSideFixedClipping`` (noise multiplier z on the average).

The auditor then scores each canary by the inner product of what an observer sees with cᵢ, summed
over rounds — the server: canary i's own replies; a third party: the aggregates (times the number of
clients) — guesses the coins from the scores, and certifies ε_LB with the one-run bounds
(:mod:`audit.one_run.bounds`): Steinke et al.'s and the f-DP bound of Mahloujifar et al., α/2 each.
What each observer is promised: with ``local-dp`` both observers are promised the mod's claim composed
over the rounds (a third party sees a post-processing); with ``central-dp`` the server is promised
nothing (it receives clipped updates in the clear) and a third party μ = √rounds/z.

Randomness: every client seeds numpy's global generator (which Flower's mods draw from) from its own
child of the seed and the round; the server seeds it before aggregating. A run is reproducible.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pgc.errors import UserError

MODES = ("local-dp", "central-dp")
FEATURES, CLASSES = 64, 10
DIMENSION = FEATURES * CLASSES + CLASSES  # the softmax-regression model: weights then biases


@dataclass(frozen=True)
class OneRunSetup:
    """One simulated run: M canaries, the real clients, the rounds and the privacy of the mode."""

    canaries: int = 1000
    real_clients: int = 20
    rounds: int = 2
    mode: str = "local-dp"
    epsilon: float = 1.0  # LocalDpMod's claim per update
    delta: float = 1e-5
    clipping_norm: float = 1.0
    noise_multiplier: float = 1.0  # central-dp: the server's z
    seed: int = 0
    confidence: float = 0.95
    records_per_client: int = 40

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise UserError(f"mode must be one of {MODES}, got {self.mode!r}")
        if self.canaries < 10 or self.real_clients < 1 or self.rounds < 1:
            raise UserError("need at least 10 canaries, one real client and one round")
        if not (self.epsilon > 0 and 0 < self.delta < 1 and self.clipping_norm > 0 and self.noise_multiplier > 0):
            raise UserError("epsilon, clipping_norm and noise_multiplier must be positive, delta in (0, 1)")

    @property
    def clients(self) -> int:
        return self.canaries + self.real_clients


def canary_plan(setup: OneRunSetup) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(M, d) unit canary directions, (M, d) unit decoy directions and M fair coins; canary i from the i-th
    child of SeedSequence(seed)."""
    shape = (setup.canaries, DIMENSION)
    directions, decoys, coins = np.empty(shape), np.empty(shape), np.empty(setup.canaries, dtype=np.int64)
    for i, child in enumerate(np.random.SeedSequence(setup.seed).spawn(setup.canaries)):
        rng = np.random.default_rng(child)
        coins[i] = rng.integers(0, 2)
        v = rng.normal(size=(2, DIMENSION))
        directions[i], decoys[i] = v / np.linalg.norm(v, axis=1, keepdims=True)
    return directions, decoys, coins


def _client_seed(setup: OneRunSetup, pid: int, server_round: int) -> int:
    """The seed of numpy's global generator for client ``pid`` in a round (``pid`` None: the server)."""
    key = [setup.seed, 3, server_round] if pid is None else [setup.seed, 1, pid, server_round]
    return int(np.random.SeedSequence(key).generate_state(1)[0])


def _digits_shards(setup: OneRunSetup) -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_digits

    digits = load_digits()
    x, y = digits.data / 16.0, digits.target
    n = setup.records_per_client
    return x[: setup.real_clients * n].reshape(setup.real_clients, n, FEATURES), y[: setup.real_clients * n].reshape(
        setup.real_clients, n
    )


def _train_softmax(params: np.ndarray, x: np.ndarray, y: np.ndarray, steps: int = 5, lr: float = 0.5) -> np.ndarray:
    """Full-batch gradient descent on the cross-entropy of a softmax regression (numpy)."""
    w, b = params[: FEATURES * CLASSES].reshape(CLASSES, FEATURES).copy(), params[FEATURES * CLASSES :].copy()
    onehot = np.eye(CLASSES)[y]
    for _ in range(steps):
        logits = x @ w.T + b
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        g = (p - onehot) / len(y)
        w -= lr * g.T @ x
        b -= lr * g.sum(axis=0)
    return np.concatenate([w.ravel(), b])


def client_app(setup: OneRunSetup):
    """The ClientApp every simulated node runs: partition ids below M are canaries, the rest real clients."""
    from flwr.app import Context
    from flwr.client import ClientApp, NumPyClient
    from flwr.client.mod import LocalDpMod, fixedclipping_mod

    directions, decoys, coins = canary_plan(setup)
    shards_x, shards_y = _digits_shards(setup)

    class SimulatedClient(NumPyClient):
        def __init__(self, pid: int):
            self.pid = pid

        def fit(self, parameters, config):
            np.random.seed(_client_seed(setup, self.pid, int(config.get("round", 0))))  # the mods' noise
            params = np.asarray(parameters[0], dtype=np.float64)
            if self.pid < setup.canaries:
                step = directions[self.pid] if coins[self.pid] else decoys[self.pid]
                new = params + setup.clipping_norm * step
            else:
                k = self.pid - setup.canaries
                new = _train_softmax(params, shards_x[k], shards_y[k])
            return [new], 1, {"pid": self.pid}  # every client weighs 1: FedAvg is the plain mean

    def client_fn(context: Context):
        return SimulatedClient(int(context.node_config["partition-id"])).to_client()

    if setup.mode == "local-dp":
        mods = [
            LocalDpMod(
                clipping_norm=setup.clipping_norm,
                sensitivity=2.0 * setup.clipping_norm,
                epsilon=setup.epsilon,
                delta=setup.delta,
            )
        ]
    else:
        mods = [fixedclipping_mod]
    return ClientApp(client_fn=client_fn, mods=mods)


class _Records:
    """What the server receives per round (pid → reply) and the aggregate it makes, with the global model sent."""

    def __init__(self):
        self.sent: dict[int, np.ndarray] = {}
        self.received: dict[int, dict[int, np.ndarray]] = {}
        self.aggregate: dict[int, np.ndarray] = {}


def server_app(setup: OneRunSetup, records: _Records):
    """A ServerApp whose strategy (FedAvg, wrapped for central DP) is wrapped once more by a recorder."""
    from flwr.common import ndarrays_to_parameters, parameters_to_ndarrays
    from flwr.server import ServerApp, ServerAppComponents, ServerConfig
    from flwr.server.strategy import DifferentialPrivacyClientSideFixedClipping, FedAvg, Strategy

    n = setup.clients

    class Recording(Strategy):
        def __init__(self, inner: Strategy):
            self.inner = inner

        def initialize_parameters(self, client_manager):
            return self.inner.initialize_parameters(client_manager)

        def configure_fit(self, server_round, parameters, client_manager):
            records.sent[server_round] = parameters_to_ndarrays(parameters)[0].astype(np.float64)
            return self.inner.configure_fit(server_round, parameters, client_manager)

        def aggregate_fit(self, server_round, results, failures):
            records.received[server_round] = {
                int(fit.metrics["pid"]): parameters_to_ndarrays(fit.parameters)[0] for _, fit in results
            }
            np.random.seed(_client_seed(setup, None, server_round))  # the server's noise (central DP)
            params, metrics = self.inner.aggregate_fit(server_round, results, failures)
            records.aggregate[server_round] = parameters_to_ndarrays(params)[0].astype(np.float64)
            return params, metrics

        def configure_evaluate(self, server_round, parameters, client_manager):
            return []

        def aggregate_evaluate(self, server_round, results, failures):
            return None, {}

        def evaluate(self, server_round, parameters):
            return None

    def server_fn(context):
        fedavg = FedAvg(
            fraction_fit=1.0,
            fraction_evaluate=0.0,
            min_fit_clients=n,
            min_available_clients=n,
            initial_parameters=ndarrays_to_parameters([np.zeros(DIMENSION)]),
            on_fit_config_fn=lambda server_round: {"round": server_round},
        )
        inner = (
            fedavg
            if setup.mode == "local-dp"
            else DifferentialPrivacyClientSideFixedClipping(fedavg, setup.noise_multiplier, setup.clipping_norm, n)
        )
        return ServerAppComponents(strategy=Recording(inner), config=ServerConfig(num_rounds=setup.rounds))

    return ServerApp(server_fn=server_fn)


def simulate(setup: OneRunSetup, *, verbose: bool = False) -> _Records:
    """One federated training run on Flower's simulation engine (Ray backend), recorded."""
    import logging

    from flwr.simulation import run_simulation

    records = _Records()
    logging.getLogger("flwr").setLevel(logging.INFO if verbose else logging.WARNING)
    run_simulation(
        server_app=server_app(setup, records),
        client_app=client_app(setup),
        num_supernodes=setup.clients,
        backend_config={"client_resources": {"num_cpus": 1}},
        verbose_logging=verbose,
    )
    if len(records.received) != setup.rounds or any(len(r) != setup.clients for r in records.received.values()):
        raise RuntimeError("the simulation did not record every client in every round")
    return records


def observer_scores(setup: OneRunSetup, records: _Records, directions: np.ndarray) -> dict[str, np.ndarray]:
    """Per canary, Σ over rounds of ⟨what the observer sees − the global model sent, cᵢ⟩: the server sees
    canary i's replies; a third party the aggregates, times the number of clients."""
    server = np.zeros(setup.canaries)
    third = np.zeros(setup.canaries)
    for r in sorted(records.received):
        sent = records.sent[r]
        replies = np.stack([records.received[r][i] for i in range(setup.canaries)]) - sent
        server += np.einsum("ij,ij->i", replies, directions)
        third += directions @ ((records.aggregate[r] - sent) * setup.clients)
    return {"server": server, "third party (aggregate)": third}


def promises(setup: OneRunSetup) -> dict[str, dict]:
    """What each observer is promised about one canary over the run: (ε, δ) where the mode states it, and
    the μ-GDP curve (the auditor turns μ into ε at δ)."""
    if setup.mode == "local-dp":
        sigma = 2.0 * setup.clipping_norm * math.sqrt(2.0 * math.log(1.25 / setup.delta)) / setup.epsilon
        mu = math.sqrt(setup.rounds) * 2.0 * setup.clipping_norm / sigma
        promise = {
            "epsilon": setup.rounds * setup.epsilon,
            "delta": setup.rounds * setup.delta,
            "mu": mu,
            "basis": f"LocalDpMod's ({setup.epsilon:g}, {setup.delta:g}) per update, {setup.rounds} rounds "
            "(basic composition; the curve composes to √rounds·μ)",
        }
        return {
            "server": promise,
            "third party (aggregate)": {**promise, "basis": promise["basis"] + "; the aggregate is a post-processing"},
        }
    # one client's update replaced moves the sum by at most 2C; the noise on the sum has std z·C
    mu = 2.0 * math.sqrt(setup.rounds) / setup.noise_multiplier
    return {
        "server": {
            "epsilon": math.inf,
            "delta": 0.0,
            "mu": None,
            "basis": "nothing: central DP sends clipped updates to the server in the clear",
        },
        "third party (aggregate)": {
            "epsilon": None,
            "delta": setup.delta,
            "mu": mu,
            "basis": f"server noise z = {setup.noise_multiplier:g} on the mean, "
            f"{setup.rounds} rounds, one update replaced: μ = 2√rounds/z",
        },
    }


def simulated_scores(setup: OneRunSetup, promise: dict, n: int, rng: np.random.Generator):
    """n canary scores and their coins under the observer's promised Gaussian noise (for the auditor to choose
    how many canaries to guess on; no real data seen)."""
    c = setup.clipping_norm * setup.rounds  # the summed score's mean under coin 1 (0 under coin 0)
    # per round the score's noise has std 2C·√rounds/μ (μ = 2C√rounds/σ); summed over the rounds, √rounds more
    spread = 2.0 * c / promise["mu"] if promise.get("mu") else 0.05 * c
    coins = rng.integers(0, 2, size=n)
    return coins * c + rng.normal(0.0, spread, size=n), coins
