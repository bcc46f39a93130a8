"""The regret study: time-averaged group regret curves over independent runs, and the privacy cost
(private − non-private group regret at T) against the number of silos M with a fitted exponent."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from pgc.errors import UserError
from pgc.schemas import ExponentFit

from .algorithms import dp20_feducb, fedlinucb, private_fedlinucb
from .config import BanditConfig, DP20Config, PrivacyConfig
from .env import SyntheticFamily

ALGORITHMS = ("fedlinucb", "private-fedlinucb", "dp20-feducb")


@dataclass(frozen=True)
class RegretJob:
    """One algorithm on one family: ``env_seed`` is shared by every algorithm at the same M (common
    random numbers: the same users and reward noise), ``noise_seed`` is the algorithm's own."""

    algorithm: str
    n_silos: int
    horizon: int
    n_arms: int
    dim: int
    noise_std: float
    runs: int
    epsilon: float | None
    delta: float | None
    env_seed: tuple
    noise_seed: tuple
    points: int = 200
    batch: int | None = None
    dp20_threshold: float | None = None

    def label(self) -> str:
        if self.algorithm == "fedlinucb":
            return f"FedLinUCB (non-private), M={self.n_silos}"
        name = "Private-FedLinUCB" if self.algorithm == "private-fedlinucb" else "DP20 FedUCB"
        return f"{name} eps={self.epsilon:g}, M={self.n_silos}"


def validate_job(job: RegretJob) -> BanditConfig:
    if job.algorithm not in ALGORITHMS:
        raise UserError(f"unknown algorithm {job.algorithm!r}")
    cfg = BanditConfig(
        n_silos=job.n_silos,
        horizon=job.horizon,
        n_arms=job.n_arms,
        dim=job.dim,
        noise_std=job.noise_std,
        runs=job.runs,
        batch=job.batch,
    )
    if job.algorithm != "fedlinucb":
        PrivacyConfig(job.epsilon, job.delta)
    DP20Config(job.dp20_threshold)
    return cfg


def sample_index(horizon: int, points: int) -> np.ndarray:
    """At most ``points`` rounds (1-based t) spread evenly over 1..T, always with T."""
    return np.unique(np.linspace(1, horizon, num=min(points, horizon)).round().astype(int))


def run_job(job: RegretJob) -> dict:
    """Simulate one job; returns the cumulative group regret at the sampled rounds (runs, P), the
    regret at T per run, the syncs per run, σ and λ."""
    cfg = validate_job(job)
    env = SyntheticFamily(
        job.runs,
        job.n_silos,
        job.n_arms,
        job.dim,
        job.noise_std,
        np.random.default_rng(np.random.SeedSequence(list(job.env_seed))),
    )
    rng = np.random.default_rng(np.random.SeedSequence(list(job.noise_seed)))
    if job.algorithm == "fedlinucb":
        trace = fedlinucb(env, cfg)
    elif job.algorithm == "private-fedlinucb":
        trace = private_fedlinucb(env, cfg, PrivacyConfig(job.epsilon, job.delta), rng)
    else:
        trace = dp20_feducb(env, cfg, PrivacyConfig(job.epsilon, job.delta), rng, dp20=DP20Config(job.dp20_threshold))
    idx = sample_index(job.horizon, job.points)
    cumulative = np.cumsum(trace.regret, axis=1)
    return {
        "t": idx,
        "cumulative": cumulative[:, idx - 1],
        "final": cumulative[:, -1],
        "syncs": trace.schedule.sum(axis=1),
        "sigma": trace.sigma,
        "lam": trace.lam,
        "batch": cfg.batch_size,
        "threshold": trace.extra.get("threshold"),
    }


def mean_interval(samples: np.ndarray, level: float = 0.95, axis: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean and Student-t interval over ``axis`` (the runs)."""
    samples = np.asarray(samples, dtype=float)
    n = samples.shape[axis]
    mean = samples.mean(axis=axis)
    if n < 2:
        return mean, mean.copy(), mean.copy()
    half = stats.t.ppf(0.5 + level / 2, n - 1) * samples.std(axis=axis, ddof=1) / math.sqrt(n)
    return mean, mean - half, mean + half


def fit_exponent(
    silos: np.ndarray,
    costs_by_m: list[np.ndarray],
    rng: np.random.Generator,
    resamples: int = 2000,
    level: float = 0.95,
    theory: dict[str, float] | None = None,
    epsilon: float | None = None,
) -> ExponentFit:
    """Least-squares slope b of log(cost) = a + b log M on the per-M mean costs, with a bootstrap
    interval (runs resampled within each M). Resamples with a non-positive mean cost are dropped
    (counted). ``theory`` (the exponents theories predict) and ``epsilon`` (of the private runs) are
    stored with the fit."""
    silos = np.asarray(silos, dtype=float)
    means = np.array([c.mean() for c in costs_by_m])
    if np.any(means <= 0) or len(silos) < 2:
        return ExponentFit(reason="a non-positive mean privacy cost or fewer than 2 M", theory=theory, epsilon=epsilon)
    x = np.log(silos)
    slope, intercept = np.polyfit(x, np.log(means), 1)
    slopes = []
    dropped = 0
    for _ in range(resamples):
        boot = np.array([c[rng.integers(0, len(c), len(c))].mean() for c in costs_by_m])
        if np.any(boot <= 0):
            dropped += 1
            continue
        slopes.append(np.polyfit(x, np.log(boot), 1)[0])
    lo, hi = np.quantile(slopes, [0.5 - level / 2, 0.5 + level / 2]) if slopes else (math.nan, math.nan)
    return ExponentFit(
        exponent=float(slope),
        intercept=float(intercept),
        interval=[float(lo), float(hi)],
        level=level,
        resamples=resamples,
        dropped_resamples=dropped,
        method="OLS on log mean cost vs log M; percentile bootstrap over runs within each M",
        theory=theory,
        epsilon=epsilon,
    )
