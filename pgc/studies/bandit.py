"""The federated linear contextual bandit studies of ``pgc bandit``.

* :func:`regret_study` — time-averaged group regret curves R_M(t)/t with intervals over runs for
  non-private FedLinUCB, Private-FedLinUCB at several ε and DP20 FedUCB, and the privacy cost
  (private − non-private group regret at T) against M with its fitted exponent beside M^{3/4} and √M;
  one process per job (:class:`pgc.engines.LocalEngine`), the heaviest first; the PNG by
  :func:`plot_regret`.
* :func:`first_user_study` — a malicious silo guessing which of two users another silo served first, per
  channel, against chance and the (ε, δ) ceiling.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import pgc.schemas as schemas
from pgc.errors import UserError
from pgc.files import atomic_path

ATTACKED_SYSTEMS = ("dp20-feducb", "private-fedlinucb", "fedlinucb")


@dataclass(frozen=True)
class RegretSettings:
    """The regret study's grid: the curves at ``silos`` and the privacy-cost sweep over ``sweep_silos``;
    checked when built (a one-line :class:`UserError`)."""

    silos: int = 100
    horizon: int = 10_000
    arms: int = 100
    dim: int = 10
    noise: float = 0.5
    batch: int | None = None
    dp20_threshold: float | None = None
    runs: int = 25
    epsilons: tuple[float, ...] = (0.2, 1.0, 5.0)
    delta: float = 0.1
    dp20_epsilon: float = 1.0
    sweep_silos: tuple[int, ...] = (10, 20, 50, 100)
    sweep_epsilon: float = 1.0
    workers: int = 2
    seed: int = 0

    def __post_init__(self) -> None:
        from pgc.fedlinucb.config import BanditConfig, DP20Config, PrivacyConfig

        if self.workers < 1:
            raise UserError("--workers must be >= 1")
        for eps in list(self.epsilons) + [self.dp20_epsilon, self.sweep_epsilon]:
            PrivacyConfig(eps, self.delta)
        BanditConfig(
            n_silos=self.silos,
            horizon=self.horizon,
            n_arms=self.arms,
            dim=self.dim,
            noise_std=self.noise,
            runs=self.runs,
            batch=self.batch,
        )
        for m in self.sweep_silos:
            BanditConfig(n_silos=m, horizon=self.horizon, n_arms=self.arms, dim=self.dim, runs=self.runs)
        DP20Config(self.dp20_threshold)

    def record(self) -> dict:
        """The settings as the result stores them."""
        return {
            "n_silos": self.silos,
            "horizon": self.horizon,
            "n_arms": self.arms,
            "dim": self.dim,
            "noise_std": self.noise,
            "runs": self.runs,
            "batch": self.batch,
            "dp20_threshold": self.dp20_threshold,
            "epsilons": list(map(float, self.epsilons)),
            "delta": self.delta,
            "dp20_epsilon": self.dp20_epsilon,
            "sweep_silos": list(self.sweep_silos),
            "sweep_epsilon": self.sweep_epsilon,
            "seed": self.seed,
            "workers": self.workers,
            "regret": "pseudo-regret summed over silos, divided by t; 95% Student-t intervals over runs",
            "rewards_clipped_to": [-1.0, 1.0],
        }


def _seed_words(seq: np.random.SeedSequence) -> tuple:
    return (seq.entropy, *seq.spawn_key)  # rebuilt in the worker as SeedSequence(list(words))


def regret_jobs(settings: RegretSettings, root: np.random.SeedSequence) -> dict:
    """(algorithm, M, ε) → RegretJob: the curves at ``silos`` and the privacy-cost sweep; one environment
    seed per M, one run seed per job, spawned from ``root`` in this order."""
    from pgc.fedlinucb.study import RegretJob, validate_job

    s = settings
    env_seeds = {m: root.spawn(1)[0] for m in sorted(set([s.silos] + list(s.sweep_silos)))}
    keys = {("fedlinucb", s.silos, None): None}
    for eps in s.epsilons:
        keys[("private-fedlinucb", s.silos, float(eps))] = None
    keys[("dp20-feducb", s.silos, float(s.dp20_epsilon))] = None
    for m in s.sweep_silos:
        keys[("fedlinucb", m, None)] = None
        keys[("private-fedlinucb", m, float(s.sweep_epsilon))] = None
    specs = {}
    for algorithm, m, eps in keys:
        specs[(algorithm, m, eps)] = RegretJob(
            algorithm,
            m,
            s.horizon,
            s.arms,
            s.dim,
            s.noise,
            s.runs,
            eps,
            s.delta if eps is not None else None,
            _seed_words(env_seeds[m]),
            _seed_words(root.spawn(1)[0]),
            batch=s.batch,
            dp20_threshold=s.dp20_threshold,
        )
    for spec in specs.values():
        validate_job(spec)
    return specs


def regret_curves(settings: RegretSettings, specs: dict, results: dict) -> list[schemas.BanditCurve]:
    """The time-averaged group regret of every algorithm at ``silos``, with 95% intervals over runs."""
    from pgc.fedlinucb.study import mean_interval

    curves = []
    for key in specs:
        alg, m, eps = key
        if m != settings.silos:
            continue
        res = results[key]
        t = res["t"]
        mean, lo, hi = mean_interval(res["cumulative"] / t[None, :])
        curves.append(
            schemas.BanditCurve(
                algorithm=alg,
                label=specs[key].label(),
                n_silos=m,
                epsilon=eps,
                delta=settings.delta if eps is not None else None,
                batch=None if res["batch"] is None else int(res["batch"]),
                sigma=_float_or_none(res["sigma"]),
                threshold=_float_or_none(res["threshold"]),
                mean_syncs=float(res["syncs"].mean()),
                t=t.tolist(),
                time_averaged_group_regret=mean.tolist(),
                lower=lo.tolist(),
                upper=hi.tolist(),
                group_regret_at_T=schemas.RegretAtHorizon(
                    mean=float(res["final"].mean()), interval=[float(v) for v in mean_interval(res["final"])[1:]]
                ),
                regulariser=_float_or_none(res["lam"]),
            )
        )
    return curves


def _float_or_none(value: float | None) -> float | None:
    """``value`` as a Python float (from a numpy one), None kept."""
    return None if value is None else float(value)


def privacy_cost(
    settings: RegretSettings, results: dict, root: np.random.SeedSequence
) -> tuple[list[schemas.PrivacyCostPoint], schemas.ExponentFit | None]:
    """The privacy cost (private minus non-private regret at T) per M of the sweep, and its fit c·M^b."""
    from pgc.fedlinucb.study import fit_exponent, mean_interval

    if not settings.sweep_silos:
        return [], None
    sweep, costs = [], []
    silos = sorted(set(settings.sweep_silos))
    for m in silos:
        private = results[("private-fedlinucb", m, float(settings.sweep_epsilon))]["final"]
        nonprivate = results[("fedlinucb", m, None)]["final"]
        cost = private - nonprivate
        costs.append(cost)
        mean, lo, hi = mean_interval(cost)
        sweep.append(
            schemas.PrivacyCostPoint(
                n_silos=m,
                privacy_cost_mean=float(mean),
                interval=[float(lo), float(hi)],
                private_regret_at_T=float(private.mean()),
                nonprivate_regret_at_T=float(nonprivate.mean()),
            )
        )
    fit = fit_exponent(
        np.array(silos),
        costs,
        np.random.default_rng(root.spawn(1)[0]),
        theory={"zhou_chowdhury_M_exponent": 0.75, "dp20_M_exponent": 0.5},
        epsilon=float(settings.sweep_epsilon),
    )
    return sweep, fit


def regret_study(
    settings: RegretSettings, companion: Callable[[str], Path], *, label: str = "full grid", progress: bool = False
) -> tuple[schemas.BanditRegret, int]:
    """Every job of the grid, one process each (``settings.workers`` at a time, the heaviest first), the
    curves and the privacy-cost fit; the plot drawn beside the result, at ``companion(".png")``. Returns the
    result (kind "bandit-regret") and the number of jobs."""
    from pgc.engines import LocalEngine
    from pgc.fedlinucb.study import run_job

    root = np.random.SeedSequence(settings.seed)
    specs = regret_jobs(settings, root)
    order = sorted(specs, key=lambda k: -k[1])  # the heaviest jobs first
    started = time.perf_counter()
    with LocalEngine(settings.workers) as engine:
        results = dict(
            zip(
                order,
                engine.map_each(
                    run_job, [specs[k] for k in order], progress="bandit regret jobs" if progress else None
                ),
                strict=True,
            )
        )
    elapsed = time.perf_counter() - started
    sweep, fit = privacy_cost(settings, results, root)
    plot = companion(".png")
    result = schemas.BanditRegret(
        label=label,
        settings=settings.record(),
        curves=regret_curves(settings, specs, results),
        privacy_cost=sweep,
        fit=fit,
        elapsed_seconds=elapsed,
        cpu_count=os.cpu_count(),
        plot=plot.name,
    )
    plot_regret(result, plot)
    return result, len(specs)


def _regret_panel(ax, result: schemas.BanditRegret) -> None:
    for c in result.curves:
        t = np.array(c.t)
        ax.plot(t, c.time_averaged_group_regret, label=c.label.rsplit(",", 1)[0])
        ax.fill_between(t, c.lower, c.upper, alpha=0.25)
    s = result.settings
    ax.set_xlabel("round t")
    ax.set_ylabel("time-averaged group regret R_M(t)/t")
    ax.set_title(f"M={s['n_silos']}, K={s['n_arms']}, d={s['dim']}, {s['runs']} runs, δ={s['delta']:g}")
    ax.legend(fontsize=7)


def _privacy_cost_panel(ax, result: schemas.BanditRegret) -> None:
    m = np.array([p.n_silos for p in result.privacy_cost], dtype=float)
    cost = np.array([p.privacy_cost_mean for p in result.privacy_cost])
    lo = np.array([p.interval[0] for p in result.privacy_cost])
    hi = np.array([p.interval[1] for p in result.privacy_cost])
    ax.errorbar(m, cost, yerr=[cost - lo, hi - cost], fmt="o", label="measured (95% CI)")
    fit = result.fit
    if fit is not None and fit.exponent is not None and fit.interval is not None:
        grid = np.geomspace(m.min(), m.max(), 50)
        ax.plot(
            grid,
            np.exp(fit.intercept or 0.0) * grid**fit.exponent,
            label=f"fit M^{fit.exponent:.2f} [{fit.interval[0]:.2f}, {fit.interval[1]:.2f}]",
        )
        if cost[0] > 0:
            for b, name in ((0.75, "M^{3/4} (Zhou & Chowdhury)"), (0.5, "√M (DP20)")):
                ax.plot(grid, cost[0] * (grid / m[0]) ** b, "--", label=name)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("silos M")
    ax.set_ylabel("privacy cost at T (group regret)")
    ax.legend(fontsize=7)


def plot_regret(result: schemas.BanditRegret, path: Path) -> None:
    """The regret curves and, with a sweep, the privacy cost against M (log-log, the fit and the theory's
    slopes), written atomically as a PNG."""

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = 2 if result.privacy_cost else 1
    fig, axes = plt.subplots(1, panels, figsize=(6 * panels, 4.2), squeeze=False)
    _regret_panel(axes[0, 0], result)
    if panels == 2:
        _privacy_cost_panel(axes[0, 1], result)
    fig.tight_layout()
    try:
        with atomic_path(path, suffix=".png") as tmp:
            fig.savefig(tmp, dpi=110)
    finally:
        plt.close(fig)
        if os.path.exists(tmp):
            os.unlink(tmp)


@dataclass(frozen=True)
class FirstUserSettings:
    """The first-user attack's systems, claims and sizes; checked when built."""

    systems: tuple[str, ...] = ("dp20-feducb", "private-fedlinucb")
    pair: str = "a-toy-first-user"
    epsilons: tuple[float, ...] = (0.1, 1.0)
    delta: float = 1e-3
    train: int = 2000
    test: int = 2000
    seed: int = 0

    def __post_init__(self) -> None:
        from pgc.fedlinucb.config import PrivacyConfig

        if self.train < 1 or self.test < 1:
            raise UserError("--train and --test must be >= 1")
        for eps in self.epsilons:
            PrivacyConfig(eps, self.delta)
        for name in self.systems:
            if name not in ATTACKED_SYSTEMS:
                raise UserError(f"unknown system {name!r} (choose from {', '.join(ATTACKED_SYSTEMS)})")

    def attacked(self) -> list[tuple[str, float]]:
        """(system, ε) in order: every claimed ε of a private system, ε = ∞ for non-private FedLinUCB."""
        return [(name, eps) for name in self.systems for eps in (self.epsilons if name != "fedlinucb" else [math.inf])]


def first_user_study(
    settings: FirstUserSettings, *, progress: bool = False, log: Callable[[str], None] = print
) -> schemas.BanditAttack:
    """Each (system, ε) attacked in turn, a row per channel logged as it comes (one above its ceiling
    flagged); the result (kind "bandit-attack")."""
    from attacks.bandit import first_user_attack
    from pgc.fedlinucb.systems import BanditSystem
    from pgc.tasks.progress import progress_bar

    root = np.random.SeedSequence(settings.seed)
    attacked = settings.attacked()
    rows: list[schemas.BanditAttackRow] = []
    bar = progress_bar(len(attacked), "setting", "bandit first-user attack", progress)
    try:
        for name, eps in attacked:
            system = BanditSystem(name, **({} if name == "fedlinucb" else {"epsilon": eps, "delta": settings.delta}))
            for row in first_user_attack(
                system, settings.pair, settings.train, settings.test, np.random.default_rng(root.spawn(1)[0])
            ):
                rows.append(row)
                flag = "  <-- ABOVE THE CEILING" if row.reference.above_ceiling else ""
                acc = row.measured
                log(
                    f"  {name:18s} eps={system.claim.epsilon:<5g} {row.target.channel:9s} accuracy {acc.accuracy:.3f} "
                    f"[{acc.interval[0]:.3f}, {acc.interval[1]:.3f}]  ceiling {row.reference.ceiling:.3f}{flag}"
                )
            bar.update(1)
    finally:
        bar.close()
    s = settings
    return schemas.BanditAttack(
        settings={
            "systems": list(s.systems),
            "pair": s.pair,
            "epsilons": list(s.epsilons),
            "delta": s.delta,
            "train_per_world": s.train,
            "test": s.test,
            "seed": s.seed,
            "attacker": "difference-of-means linear test fitted on simulated releases of both worlds",
            "ceiling": "(e^eps + delta)/(1 + e^eps): best accuracy of any test under (eps, delta)-DP",
        },
        rows=rows,
    )
