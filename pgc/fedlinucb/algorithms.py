"""The three federated LinUCB algorithms, each one function over a batched environment (runs × silos).

Step names in comments follow the slides' pseudo-code of Private-FedLinUCB (Zhou & Chowdhury):
Estimate, UCB, Observe reward, Update local data, Sync (P = (R, S, A): local randomizer, identity
shuffler, analyzer), Receive, Reset. Every silo of every run moves in lock-step; per round the work
is a handful of batched array operations (no loop over silos or runs): the UCB scores of all K arms
of all silos are one batched matmul, V⁻¹ follows the local rank-one updates by Sherman–Morrison and
is recomputed (one batched inverse per run) only at a sync.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from pgc.errors import UserError

from .config import BanditConfig, DP20Config, PrivacyConfig
from .privacy import (
    confidence_width,
    lowest_set_bit,
    private_fedlinucb_sigma,
    regularizer,
    tree_levels,
)


@dataclass
class Trace:
    """What a simulation returns. ``regret`` (R, T): the group pseudo-regret of each round,
    Σ_i (max_a μ_{t,i,a} − μ_{t,i,a_t}); ``schedule`` (R, T) bool: a sync after round t;
    ``sent`` (R, S, width): silo 0's noisy tree nodes in the order it sent them (filled when asked,
    zero past ``n_sent``); ``n_sent`` (R,); ``sigma`` the per-node noise std; ``lam`` the regularizer."""

    regret: np.ndarray
    schedule: np.ndarray
    sigma: float
    lam: float
    sent: np.ndarray | None = None
    n_sent: np.ndarray | None = None
    extra: dict = field(default_factory=dict)


def stat_width(dim: int) -> int:
    """Entries of one (W, U) message: the upper triangle of W (d(d+1)/2) and U (d)."""
    return dim * (dim + 1) // 2 + dim


def _pack(W: np.ndarray, U: np.ndarray) -> np.ndarray:
    d = W.shape[-1]
    iu = np.triu_indices(d)
    return np.concatenate([W[..., iu[0], iu[1]], U], axis=-1)


def _unpack(vec: np.ndarray, d: int) -> tuple[np.ndarray, np.ndarray]:
    iu = np.triu_indices(d)
    n_tri = len(iu[0])
    W = np.zeros(vec.shape[:-1] + (d, d))
    W[..., iu[0], iu[1]] = vec[..., :n_tri]
    W = W + np.swapaxes(W, -1, -2)
    idx = np.arange(d)
    W[..., idx, idx] *= 0.5
    return W, vec[..., n_tri:]


class DistributedTree:
    """The distributed tree-based Gaussian mechanism (slides, "A Generic Priv. Protocol"), batched
    over runs; a run steps only where ``active``.

    Local randomizer R at silo i, sync k: i_k = lowest set bit of k; α_{i_k} = Σ_{j<i_k} α_j + γ_k;
    send α̃_{i_k,i} = α_{i_k} + N(0, σ² I). Analyzer A: α̃_{i_k} = Σ_i α̃_{i_k,i};
    s̃_k = Σ_{j : Bin_j(k) = 1} α̃_j.
    """

    def __init__(self, runs: int, n_silos: int, levels: int, width: int, sigma: float, rng: np.random.Generator):
        self.sigma, self.levels, self._rng = float(sigma), levels, rng
        self.alpha = np.zeros((runs, n_silos, levels, width))  # each silo's non-private p-sums
        self.noisy_nodes = np.zeros((runs, levels, width))  # the server's α̃_j
        self.k = np.zeros(runs, dtype=np.int64)
        self._levels = np.arange(levels)

    def step(self, gamma: np.ndarray, active: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """gamma (R, M, width): each silo's batch sum γ_k. Returns (messages (R, M, width): every
        silo's noisy node, total (R, width): s̃_k)."""
        active = np.asarray(active, dtype=bool)
        self.k = self.k + active
        if int(self.k.max()) >= 2**self.levels:
            raise UserError("more syncs than the tree was sized for")
        k_safe = np.where(self.k > 0, self.k, 1)
        i_k = lowest_set_bit(k_safe)  # (R,)
        lower = (self._levels[None, :] < i_k[:, None]).astype(float)  # j < i_k
        alpha_new = np.einsum("rmjw,rj->rmw", self.alpha, lower) + gamma  # α_{i_k} = Σ_{j<i_k} α_j + γ_k
        messages = alpha_new + self._rng.standard_normal(alpha_new.shape) * self.sigma
        runs = np.flatnonzero(active)
        self.alpha[runs, :, i_k[runs]] = alpha_new[runs]
        self.noisy_nodes[runs, i_k[runs]] = messages[runs].sum(axis=1)  # A: Σ_i α̃_{i_k, i}
        bits = ((self.k[:, None] >> self._levels[None, :]) & 1).astype(float)
        total = np.einsum("rjw,rj->rw", self.noisy_nodes, bits)  # s̃_k = Σ_{Bin_j(k)=1} α̃_j
        return messages, total


class _Silos:
    """State shared by the three algorithms: each silo's local sums and V⁻¹, the synced statistics."""

    def __init__(self, env, lam: float, broadcast: np.ndarray | None):
        R, M, d = env.runs, env.n_silos, env.dim
        self.env, self.lam, self.d = env, lam, d
        self.W_loc = np.zeros((R, M, d, d))
        self.U_loc = np.zeros((R, M, d))
        self.W_other = np.zeros((R, d, d))
        self.U_other = np.zeros((R, d))
        if broadcast is not None:
            Wb, Ub = _unpack(np.asarray(broadcast, dtype=float), d)
            self.W_other[:], self.U_other[:] = Wb, Ub
        self.W_syn = self.W_other.copy()
        self.U_syn = self.U_other.copy()
        self.Vinv = np.empty((R, M, d, d))
        self.receive(np.ones(R, dtype=bool))

    def receive(self, runs: np.ndarray) -> None:
        """Receive W̃_syn, Ũ_syn and Reset W_i = U_i = 0: V_{t,i} = λI + W̃_syn for every silo of the run."""
        self.W_loc[runs] = 0.0
        self.U_loc[runs] = 0.0
        V = self.lam * np.eye(self.d) + self.W_syn[runs]
        self.Vinv[runs] = np.linalg.inv(V)[:, None]

    def act(self, t: int, beta: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        X, mu = self.env.contexts(t)
        # Estimate: θ̂_{t,i} = V_{t,i}⁻¹ U_{t,i},  U_{t,i} = Ũ_syn + U_i
        theta_hat = np.matmul(self.Vinv, (self.U_syn[:, None] + self.U_loc)[..., None])
        # UCB: a_{t,i} = argmax_a φ(c,a)ᵀθ̂ + β_t ‖φ(c,a)‖_{V⁻¹}  (scored in float32: the K·d² work)
        X32 = X.astype(np.float32, copy=False)
        XV = np.matmul(X32, self.Vinv.astype(np.float32))
        width = np.sqrt(np.maximum(np.einsum("rmkd,rmkd->rmk", XV, X32), 0.0))
        scores = np.matmul(X32, theta_hat.astype(np.float32))[..., 0] + np.float32(beta) * width
        chosen = scores.argmax(axis=-1)
        x = np.take_along_axis(X, chosen[..., None, None], axis=2)[:, :, 0].astype(np.float64)
        mu_chosen = np.take_along_axis(mu, chosen[..., None], axis=2)[..., 0]
        regret = (mu.max(axis=-1) - mu_chosen).sum(axis=1)
        # Observe reward y_{t,i}; x_{t,i} = φ(c_{t,i}, a_{t,i})
        y = self.env.rewards(t, chosen, mu_chosen)
        return x, y, regret, chosen

    def update_local(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Update local data: W_i += x xᵀ, U_i += x y; V⁻¹ by Sherman–Morrison. Returns
        log(1 + xᵀV⁻¹x) = the growth of log det V_{t,i} (matrix determinant lemma)."""
        self.W_loc += x[..., :, None] * x[..., None, :]
        self.U_loc += x * y[..., None]
        v = np.matmul(self.Vinv, x[..., None])[..., 0]
        q = np.einsum("rmi,rmi->rm", v, x)
        self.Vinv -= v[..., :, None] * v[..., None, :] / (1.0 + q)[..., None, None]
        return np.log1p(np.maximum(q, 0.0))  # q < 0 only where noise left λI + W̃_syn indefinite


def _beta(cfg: BanditConfig, t: int, lam: float, n_silos: int, dim: int) -> float:
    return cfg.exploration_scale * float(confidence_width(t, lam, n_silos, dim, cfg.noise_std, cfg.confidence))


def _progress(total: int, show: bool, desc: str):
    if not show:
        return None
    from pgc.tasks.progress import progress_bar

    return progress_bar(total, "round", desc)


def fedlinucb(
    env,
    cfg: BanditConfig,
    *,
    broadcast: np.ndarray | None = None,
    record_messages: bool = False,
    record_actions: bool = False,
    progress: bool = False,
) -> Trace:
    """FedLinUCB, non-private, fixed batch B: every B rounds the server adds the silos' exact
    (W_i, U_i) to (W_syn, U_syn), λ = √M. The messages silo 0 sends are its exact batch sums."""
    R, M, d, T = env.runs, env.n_silos, env.dim, cfg.horizon
    B = cfg.batch_size
    lam = regularizer(0.0, M, 1, d, cfg.confidence)
    silos = _Silos(env, lam, broadcast)
    regret = np.zeros((R, T))
    schedule = np.zeros((R, T), dtype=bool)
    all_runs = np.ones(R, dtype=bool)
    n_syncs = max(1, T // B)
    sent = np.zeros((R, n_syncs, stat_width(d))) if record_messages else None
    actions = np.zeros((R, T, M), dtype=np.int32) if record_actions else None
    bar = _progress(T, progress, "FedLinUCB")
    for t in range(T):
        x, y, regret[:, t], chosen = silos.act(t, _beta(cfg, t + 1, lam, M, d))
        if actions is not None:
            actions[:, t] = chosen
        silos.update_local(x, y)
        if (t + 1) % B == 0:
            # Sync: W_syn += Σ_i W_i, U_syn += Σ_i U_i (exact sums); Receive; Reset
            if sent is not None:
                sent[:, (t + 1) // B - 1] = _pack(silos.W_loc[:, 0], silos.U_loc[:, 0])
            silos.W_syn += silos.W_loc.sum(axis=1)
            silos.U_syn += silos.U_loc.sum(axis=1)
            silos.receive(all_runs)
            schedule[:, t] = True
        if bar is not None:
            bar.update()
    if bar is not None:
        bar.close()
    trace = Trace(regret=regret, schedule=schedule, sigma=0.0, lam=lam)
    if actions is not None:
        trace.extra["actions"] = actions
    if sent is not None:
        trace.sent, trace.n_sent = sent, np.full(R, n_syncs)
    return trace


def _private_sync(silos: _Silos, tree: DistributedTree, active: np.ndarray, record, t: int) -> None:
    """Sync through P = (R, S, A): γ_k = each silo's batch (W_i, U_i); the server's s̃_k replaces the
    synced statistics (plus the other silos' broadcast part, zero in a full simulation)."""
    gamma = _pack(silos.W_loc, silos.U_loc)
    messages, total = tree.step(gamma, active)
    W_tot, U_tot = _unpack(total, silos.d)
    runs = np.flatnonzero(active)
    silos.W_syn[runs] = silos.W_other[runs] + W_tot[runs]
    silos.U_syn[runs] = silos.U_other[runs] + U_tot[runs]
    silos.receive(runs)
    if record is not None:
        sent, n_sent = record
        sent[runs, n_sent[runs]] = messages[runs, 0]
        n_sent[runs] += 1


def private_fedlinucb(
    env,
    cfg: BanditConfig,
    privacy: PrivacyConfig,
    rng: np.random.Generator,
    *,
    broadcast: np.ndarray | None = None,
    record_messages: bool = False,
    progress: bool = False,
    sigma: float | None = None,
    lam: float | None = None,
) -> Trace:
    """Private-FedLinUCB (Zhou & Chowdhury, Algorithm 1 with the distributed tree-based protocol):
    fixed batch B (default √(T/M)); at each sync k every silo sends its tree node for (W_i, U_i)
    with per-node noise σ² = 8κ(log(2/δ) + ε)/ε², κ = 1 + log(T/B) (Theorem 1); the schedule does not
    depend on any data."""
    R, M, d, T = env.runs, env.n_silos, env.dim, cfg.horizon
    B = cfg.batch_size
    n_syncs = max(1, T // B)
    if sigma is None:
        sigma = private_fedlinucb_sigma(privacy.epsilon, privacy.delta, T, B)
    levels = tree_levels(n_syncs)
    if lam is None:
        lam = regularizer(sigma, M, levels, d, cfg.confidence)
    silos = _Silos(env, lam, broadcast)
    tree = DistributedTree(R, M, levels, stat_width(d), sigma, rng)
    record = (np.zeros((R, n_syncs, stat_width(d))), np.zeros(R, dtype=np.int64)) if record_messages else None
    regret = np.zeros((R, T))
    schedule = np.zeros((R, T), dtype=bool)
    all_runs = np.ones(R, dtype=bool)
    bar = _progress(T, progress, "Private-FedLinUCB")
    for t in range(T):
        x, y, regret[:, t], _ = silos.act(t, _beta(cfg, t + 1, lam, M, d))  # Estimate, UCB, Observe
        silos.update_local(x, y)  # Update local data
        if (t + 1) % B == 0:  # if t mod B = 0: Sync
            _private_sync(silos, tree, all_runs, record, t)  # P(W_i), P(U_i); Receive; Reset
            schedule[:, t] = True
        if bar is not None:
            bar.update()
    if bar is not None:
        bar.close()
    trace = Trace(regret=regret, schedule=schedule, sigma=sigma, lam=lam)
    if record is not None:
        trace.sent, trace.n_sent = record
    return trace


DEFAULT_DP20 = DP20Config()  # the adaptive sync rule's defaults (a frozen dataclass, shared safely)


def dp20_feducb(
    env,
    cfg: BanditConfig,
    privacy: PrivacyConfig,
    rng: np.random.Generator,
    *,
    dp20: DP20Config = DEFAULT_DP20,
    broadcast: np.ndarray | None = None,
    record_messages: bool = False,
    progress: bool = False,
    sigma: float | None = None,
    lam: float | None = None,
) -> Trace:
    """DP20 FedUCB (Dubey & Pentland 2020, Algorithm 1, centralized): the same tree-based Gaussian
    privatizer of the synced statistics (sized for up to T syncs: κ = 1 + log T), and the *adaptive*
    sync rule — silo i asks for a sync when (t − t_last) · log(det V_{t,i} / det V_last) > D, computed
    from its NON-private local data; any request syncs every silo. The schedule is therefore a
    function of the users' data, outside what the noise protects."""
    R, M, d, T = env.runs, env.n_silos, env.dim, cfg.horizon
    if sigma is None:
        sigma = private_fedlinucb_sigma(privacy.epsilon, privacy.delta, T, 1)
    levels = tree_levels(T)
    if lam is None:
        lam = regularizer(sigma, M, levels, d, cfg.confidence)
    D = dp20.value(cfg)
    silos = _Silos(env, lam, broadcast)
    tree = DistributedTree(R, M, levels, stat_width(d), sigma, rng)
    record = (np.zeros((R, T, stat_width(d))), np.zeros(R, dtype=np.int64)) if record_messages else None
    regret = np.zeros((R, T))
    schedule = np.zeros((R, T), dtype=bool)
    logdet_gain = np.zeros((R, M))  # log det V_{t,i} − log det V_last, from non-private data
    t_last = np.zeros(R)
    bar = _progress(T, progress, "DP20 FedUCB")
    for t in range(T):
        x, y, regret[:, t], _ = silos.act(t, _beta(cfg, t + 1, lam, M, d))  # Estimate, UCB, Observe
        logdet_gain += silos.update_local(x, y)  # Update local data
        # Sync rule (DP20 Alg. 1, DisLinUCB form): ∃ i: (t − t_last) log det(V_{t,i})/det(V_last) > D
        request = (((t + 1) - t_last)[:, None] * logdet_gain > D).any(axis=1)
        if request.any():
            _private_sync(silos, tree, request, record, t)  # P(W_i), P(U_i); Receive; Reset
            logdet_gain[request] = 0.0
            t_last[request] = t + 1
            schedule[request, t] = True
        if bar is not None:
            bar.update()
    if bar is not None:
        bar.close()
    trace = Trace(regret=regret, schedule=schedule, sigma=sigma, lam=lam, extra={"threshold": D})
    if record is not None:
        trace.sent, trace.n_sent = record
    return trace
