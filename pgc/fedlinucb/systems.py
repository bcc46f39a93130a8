"""The three algorithms as Systems for the auditor: ONE silo's releases for a short audit horizon.

A System (structural; nothing here imports the auditor) has ``name``, ``claim`` (ε, δ, covers),
``channels`` and ``release(secret, n, rng, *, broadcast=None) -> {channel: (n, k) float64}``, plus the
optional ``broadcast_space``, ``canaries`` and ``dp_event``.

* ``secret`` is a :class:`pgc.fedlinucb.env.UserStream`: the silo's T users, each with her arms' features
  and the reward she would give for every arm.
* ``release`` runs the algorithm for that silo n times at once (the only randomness is the privacy
  noise, which also moves later actions) and returns two channels: ``messages`` — every noisy tree
  node the silo sends, in send order, flattened ((W, U) as the upper triangle of W then U; zero past
  the last send, for DP20 whose number of sends varies) — and ``schedule`` — 1.0 after each round
  that ends in a sync. The combined channel ``all`` is not returned: the auditor assembles it.
* ``broadcast`` is the synced statistics the server holds from the other silos, packed like one
  message (upper triangle of W_other, then U_other); the silo's V and θ̂ include it from round 1 on.
  ``None`` = the honest default (zero).

Two neighbouring relations are offered by :meth:`canaries` (names say which):
(a) ``a-…`` the realised (x_t, y_t) of one user replaced — every user of the stream has K identical
arms, so no action can move; (b) ``b-…`` one user replaced with her contexts and rewards for every
arm, the algorithm re-choosing actions, so a change can move later decisions of the same batch.
"""

from __future__ import annotations

import math

import numpy as np

from pgc.contracts import PrivacyClaim
from pgc.errors import UserError

from .algorithms import dp20_feducb, fedlinucb, private_fedlinucb, stat_width
from .config import BanditConfig, DP20Config, PrivacyConfig
from .env import StreamEnvironment, UserStream
from .privacy import private_fedlinucb_sigma, regularizer, tree_levels

CHANNELS = ("messages", "schedule")

# Replace-one-user sensitivity of one (W, U) node for ‖x‖ ≤ 1, |y| ≤ 1 (relation (a)):
# ‖xxᵀ − x'x'ᵀ‖_F ≤ √2 (upper triangle: no more), ‖xy − x'y'‖ ≤ 2, so Δ₂ ≤ √(2 + 4) = √6.
NODE_SENSITIVITY = math.sqrt(6.0)


def _base_stream(horizon: int, n_arms: int, dim: int, noise_std: float, seed: int, single_arm: bool) -> UserStream:
    """Users of the synthetic family (one fixed draw): unit features with a bias coordinate, rewards
    xᵀθ* + noise clipped to [−1, 1]. ``single_arm``: each user's K arms are one feature vector."""
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    direction = rng.standard_normal(dim - 1)
    theta = np.append(direction / np.linalg.norm(direction), 1.0) / math.sqrt(2.0)
    raw = rng.standard_normal((horizon, 1 if single_arm else n_arms, dim - 1))
    raw /= np.linalg.norm(raw, axis=-1, keepdims=True)
    x = np.concatenate([raw, np.ones(raw.shape[:-1] + (1,))], axis=-1) / math.sqrt(2.0)
    y = np.clip(x @ theta + noise_std * rng.standard_normal(x.shape[:-1]), -1.0, 1.0)
    if single_arm:
        x = np.repeat(x, n_arms, axis=1)
        y = np.repeat(y, n_arms, axis=1)
    return UserStream(contexts=x, rewards=y)


def _replace_user(stream: UserStream, t: int, contexts: np.ndarray, rewards: np.ndarray) -> UserStream:
    c, r = stream.contexts.copy(), stream.rewards.copy()
    c[t], r[t] = contexts, rewards
    return UserStream(contexts=c, rewards=r)


class BanditSystem:
    """One silo of a federated LinUCB algorithm as a System (see the module docstring)."""

    report_section = "federated-bandits"  # pgc report renders its audits with the bandits' regret and attacks

    def __init__(
        self,
        algorithm: str,
        *,
        horizon: int = 32,
        n_arms: int = 4,
        dim: int = 4,
        batch: int = 4,
        noise_std: float = 0.5,
        epsilon: float = 1.0,
        delta: float = 0.1,
        sync_threshold: float | None = None,
        stream_seed: int = 0,
    ):
        if algorithm not in ("fedlinucb", "private-fedlinucb", "dp20-feducb"):
            raise UserError(f"unknown algorithm {algorithm!r}")
        self.algorithm = algorithm
        self.name = algorithm
        self.config = BanditConfig(
            n_silos=1, horizon=horizon, n_arms=n_arms, dim=dim, noise_std=noise_std, runs=1, batch=batch
        )
        self.channels = CHANNELS
        self.stream_seed = stream_seed
        d = dim
        if algorithm == "fedlinucb":
            self.privacy = None
            self.claim = PrivacyClaim(math.inf, 0.0, CHANNELS)  # silo-level (ε, δ)-LDP of one release: none
            self.sigma, self.levels = 0.0, 1
            self.lam = regularizer(0.0, 1, 1, d, self.config.confidence)
        else:
            self.privacy = PrivacyConfig(epsilon, delta)
            if algorithm == "private-fedlinucb":
                self.sigma = private_fedlinucb_sigma(epsilon, delta, horizon, self.config.batch_size)
                self.levels = tree_levels(max(1, self.config.n_batches))
            else:
                self.sigma = private_fedlinucb_sigma(epsilon, delta, horizon, 1)
                self.levels = tree_levels(horizon)
            self.lam = regularizer(self.sigma, 1, self.levels, d, self.config.confidence)
            # μ of the tree: one Gaussian node per level, each (Δ₂/σ)-GDP, composing to √levels·Δ₂/σ
            self.claim = PrivacyClaim(
                float(epsilon), float(delta), CHANNELS, gdp_mu=math.sqrt(self.levels) * NODE_SENSITIVITY / self.sigma
            )
        if algorithm == "dp20-feducb" and sync_threshold is None:
            # Between a silent first user (x = 0: no growth of log det) and a full-norm one
            # (growth log(1 + 1/λ) at t = 1): the slides' toy attack setting.
            sync_threshold = 0.5 * math.log1p(1.0 / self.lam)
        self.dp20 = DP20Config(sync_threshold)

    # -- the contract ---------------------------------------------------------------------------
    def release(self, secret: UserStream, n: int, rng: np.random.Generator, *, broadcast=None):
        """n independent releases of the silo holding ``secret``: {"messages": (n, S·w),
        "schedule": (n, T)} float64 (``all`` is left to the auditor)."""
        if not isinstance(secret, UserStream):
            raise UserError(f"a {self.name} secret is a pgc.fedlinucb.env.UserStream, got {type(secret).__name__}")
        if secret.contexts.shape[1:] != (self.config.n_arms, self.config.dim) or secret.horizon != self.config.horizon:
            raise UserError(
                f"secret must be a stream of {self.config.horizon} users with "
                f"{self.config.n_arms} arms in dimension {self.config.dim}"
            )
        if n < 1:
            raise UserError("n must be >= 1")
        env = StreamEnvironment(secret, n)
        if broadcast is not None:
            broadcast = np.asarray(broadcast, dtype=float).reshape(stat_width(self.config.dim))
        if self.algorithm == "fedlinucb":
            trace = fedlinucb(env, self.config, broadcast=broadcast, record_messages=True)
        else:
            algo = private_fedlinucb if self.algorithm == "private-fedlinucb" else dp20_feducb
            kwargs = {"dp20": self.dp20} if self.algorithm == "dp20-feducb" else {}
            trace = algo(
                env,
                self.config,
                self.privacy,
                rng,
                broadcast=broadcast,
                record_messages=True,
                sigma=self.sigma,
                lam=self.lam,
                **kwargs,
            )
        messages = trace.sent.reshape(n, -1)
        return {
            "messages": np.ascontiguousarray(messages, dtype=np.float64),
            "schedule": trace.schedule.astype(np.float64),
        }

    @property
    def broadcast_space(self) -> tuple[np.ndarray, np.ndarray]:
        """Box for a black-box search of the broadcast: W_other entries within ±0.9λ/d (λI + W_other
        stays positive definite by Gershgorin), U_other entries within ±T."""
        d, w = self.config.dim, stat_width(self.config.dim)
        n_tri = w - d
        bound = np.concatenate([np.full(n_tri, 0.9 * self.lam / d), np.full(d, float(self.config.horizon))])
        return -bound, bound

    def describe_secret(self, secret: UserStream) -> str:
        """A user stream in a few words: its size and its first user's first arm and reward."""
        c, r = np.asarray(secret.contexts), np.asarray(secret.rewards)
        first = ", ".join(f"{v:.2g}" for v in c[0, 0])
        return f"stream of {c.shape[0]} users × {c.shape[1]} arms, user 1: x=({first}), y={r[0, 0]:.2g}"

    def canaries(self) -> dict[str, tuple[UserStream, UserStream]]:
        """Named neighbouring pairs; ``a-`` relation (a), ``b-`` relation (b)."""
        T, K, d = self.config.horizon, self.config.n_arms, self.config.dim
        cfg = self.config
        fixed = _base_stream(T, K, d, cfg.noise_std, self.stream_seed, single_arm=True)
        free = _base_stream(T, K, d, cfg.noise_std, self.stream_seed, single_arm=False)
        e = np.eye(d)
        full = np.repeat(e[:1], K, axis=0)
        out = {}
        # (a) the slides' toy attack: at t = 1 nothing is synced, so a sync at t = 1 is a function of
        # the first user alone — a full-norm first user against a silent one (x = 0, y = 0).
        out["a-toy-first-user"] = (
            _replace_user(fixed, 0, full, np.ones(K)),
            _replace_user(fixed, 0, np.zeros((K, d)), np.zeros(K)),
        )
        # (a) the first user's realised pair swapped for one far from it: (e₁, +1) vs (e₂, −1).
        out["a-first-user-swap"] = (
            _replace_user(fixed, 0, full, np.ones(K)),
            _replace_user(fixed, 0, np.repeat(e[1:2], K, axis=0), -np.ones(K)),
        )
        # (a) a user in the middle of the stream, realised reward +1 vs −1 on the same feature.
        mid = T // 2
        out["a-mid-user-reward"] = (
            _replace_user(fixed, mid, full, np.ones(K)),
            _replace_user(fixed, mid, full, -np.ones(K)),
        )
        # (b) the first user replaced by another user of the family (all arms, all rewards).
        other = _base_stream(T, K, d, cfg.noise_std, self.stream_seed + 1, single_arm=False)
        out["b-first-user"] = (free, _replace_user(free, 0, other.contexts[0], other.rewards[0]))
        # (b) a steering user: one arm e₁ with reward +1 vs −1; the rest of the batch are users with
        # arms e₁ (reward +1) and e₂ (reward −1), whose choices follow the sign of θ̂₁ the first user
        # set — one user's change moves the whole batch's data (sensitivity grows with B).
        two = np.zeros((K, d))
        two[0], two[1:] = e[0], e[1]
        rewards_two = np.where(np.arange(K) == 0, 1.0, -1.0)
        steer = UserStream(contexts=np.repeat(two[None], T, axis=0), rewards=np.repeat(rewards_two[None], T, axis=0))
        out["b-steering-user"] = (_replace_user(steer, 0, full, np.ones(K)), _replace_user(steer, 0, full, -np.ones(K)))
        return out

    def node_noise_multipliers(self) -> list[float]:
        """σ/Δ₂ of every Gaussian node one user's data can enter within one release (at most one
        node per tree level), Δ₂ = √6 the replace-one-user sensitivity of relation (a)."""
        if self.sigma == 0:
            return []
        return [self.sigma / NODE_SENSITIVITY] * self.levels

    def dp_event(self):
        """The noise one release adds to one user's data, as a dp_accounting DpEvent (composition of
        Gaussian nodes, one per tree level). Needs the ``dp-accounting`` package."""
        import dp_accounting  # imported here: an optional dependency of the accountant only

        multipliers = self.node_noise_multipliers()
        if not multipliers:
            return dp_accounting.NonPrivateDpEvent()
        return dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(multipliers[0]), len(multipliers))


def fedlinucb_system() -> BanditSystem:
    """Non-private FedLinUCB (no claim), audit-sized: T = 32, K = 4, d = 4, B = 4."""
    return BanditSystem("fedlinucb")


def private_fedlinucb_system() -> BanditSystem:
    """Private-FedLinUCB at (ε, δ) = (1, 0.1), audit-sized: T = 32, K = 4, d = 4, B = 4."""
    return BanditSystem("private-fedlinucb")


def dp20_system() -> BanditSystem:
    """DP20 FedUCB at its claimed (ε, δ) = (1, 0.1), audit-sized: T = 32, K = 4, d = 4."""
    return BanditSystem("dp20-feducb")
