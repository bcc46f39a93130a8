"""Studies of the adversarial audit: ε_LB against the neighbour distance (honest vs crafted θ) and the
false-alarm study (correct mechanisms certified at crafted θ over many seeds)."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

import pgc.schemas as schemas
from pgc.a3c.crafted import SearchSettings, search_crafted_model
from pgc.errors import UserError
from pgc.mechanisms import Mechanism
from pgc.tasks import map_tasks

from .adversarial import AdversarialAuditResult, adversarial_audit, bound_ratio, crafted_pair_record
from .environment import EnvironmentAuditResult, environment_audit, environment_record

CURVE_DISTANCES = (0.2, 0.5, 1.0, 2.0, 5.0, 10.0)


def curve_pair(distance: float, centre: float = 9.8) -> tuple[float, float]:
    """The pair at neighbour distance Δψ: centred at 9.8, and 5 vs 15 (centred at 10) for Δψ = 10."""
    if not (math.isfinite(distance) and distance > 0):
        raise UserError(f"distance must be a positive number, got {distance!r}")
    if distance == 10.0:
        return 5.0, 15.0
    return round(centre - distance / 2, 6), round(centre + distance / 2, 6)


class CurveStudy(NamedTuple):
    """The adversarial curve as its result records it: the points, and the audits behind them."""

    curve: list[schemas.CurvePoint]
    adversarial_audits: list[schemas.CraftedPairAudit]
    honest_audits: list[schemas.EnvironmentAudit]


class CurveJob(NamedTuple):
    """One point (Δψ, ε) of :func:`adversarial_curve`: its pair, mechanism and seeds."""

    distance: float
    psi: float
    psi_prime: float
    epsilon: float
    mechanism: Mechanism
    adversarial_seed: int  # the pair's search seed for its first ε
    honest_seed: int


def adversarial_curve(
    make: Callable[[float], Mechanism],
    epsilons: Sequence[float],
    *,
    honest_theta: np.ndarray,
    distances: Sequence[float] = CURVE_DISTANCES,
    channels: Sequence[str] = ("gradient", "score", "all"),
    samples: int = 100_000,
    seed: int = 0,
    confidence: float = 0.95,
    settings: SearchSettings | None = None,
    log: Callable[[str], None] = lambda s: None,
    executor=None,
) -> CurveStudy:
    """ε_LB/ε per channel against Δψ, at the honest θ and at the crafted θ (searched once per pair).

    Returns the points (one per (Δψ, ε), model and channel) and the audits behind them, as the result records
    them (:class:`CurveStudy`).

    Each curve point (Δψ, ε) is one task (:func:`curve_point`) with its own seeds, so ``executor``
    (``Executor.map``'s meaning, e.g. a Ray engine) runs the points with the same results. The first
    ε of a pair searches the crafted θ that the pair's other ε values reuse: the first ε of every
    pair runs first (one task per pair), then every other point (one task each).
    """
    root = np.random.SeedSequence(seed)
    jobs: list[CurveJob] = []  # in curve order: (Δψ, ε) with ε varying fastest
    for distance, pseq in zip(distances, root.spawn(len(distances)), strict=True):
        psi, psi_prime = curve_pair(distance)
        search_seed = int(pseq.generate_state(1, np.uint32)[0])
        for i, (eps, eseq) in enumerate(zip(epsilons, pseq.spawn(len(epsilons)), strict=True)):
            adv_seed, hon_seed = (int(s.generate_state(1, np.uint32)[0]) for s in eseq.spawn(2))
            # the first ε searches θ (search stream of the pair); the others certify it on their own seeds
            jobs.append(
                CurveJob(distance, psi, psi_prime, eps, make(eps), search_seed if i == 0 else adv_seed, hon_seed)
            )
    task = functools.partial(
        curve_point,
        honest_theta=honest_theta,
        channels=tuple(channels),
        samples=samples,
        confidence=confidence,
        settings=settings,
    )
    results: dict[int, tuple[AdversarialAuditResult, EnvironmentAuditResult]] = {}  # by index in jobs
    n_eps = len(epsilons)
    searching = [i for i in range(len(jobs)) if i % n_eps == 0]  # each pair's first ε
    reusing = [i for i in range(len(jobs)) if i % n_eps != 0]

    def run_points(indices: list[int], thetas: list[dict | None]) -> None:
        todo = [jobs[i] for i in indices]
        outcomes = map_tasks(
            executor,
            task,
            [job.mechanism for job in todo],
            [job.psi for job in todo],
            [job.psi_prime for job in todo],
            [job.adversarial_seed for job in todo],
            [job.honest_seed for job in todo],
            thetas,
        )
        for i, outcome in zip(indices, outcomes, strict=True):
            results[i] = outcome
            log(_curve_log_line(jobs[i], *outcome, channels))

    run_points(searching, [None] * len(searching))
    run_points(reusing, [results[i - i % n_eps][0].thetas for i in reusing])
    points, adversarial, honest_audits = [], [], []
    for i, (distance, psi, psi_prime, eps, *_) in enumerate(jobs):
        adv, honest = results[i]
        adversarial.append(crafted_pair_record(adv))
        honest_audits.append(environment_record(honest))
        for model, rows in (("adversarial", adv.rows), ("honest", honest.channels)):
            points += [
                schemas.CurvePoint(
                    psi=psi,
                    psi_prime=psi_prime,
                    delta_psi=distance,
                    epsilon=eps,
                    model=model,
                    channel=c.channel,
                    epsilon_lower_bound=c.epsilon_lower_bound,
                    ratio=bound_ratio(c.epsilon_lower_bound, eps),
                    samples_per_side=c.samples_per_side,
                )
                for c in rows
            ]
    return CurveStudy(points, adversarial, honest_audits)


def curve_point(
    mechanism: Mechanism,
    psi: float,
    psi_prime: float,
    adversarial_seed: int,
    honest_seed: int,
    thetas: dict[str, np.ndarray] | None,
    *,
    honest_theta: np.ndarray,
    channels: Sequence[str],
    samples: int,
    confidence: float,
    settings: SearchSettings | None,
) -> tuple[AdversarialAuditResult, EnvironmentAuditResult]:
    """One point of :func:`adversarial_curve`: the adversarial audit (searching θ when ``thetas`` is
    None, with the noise-free bound) and the honest audit at ``honest_theta``."""
    if thetas is None:
        adv = adversarial_audit(
            mechanism,
            psi,
            psi_prime,
            samples=samples,
            seed=adversarial_seed,
            channels=channels,
            confidence=confidence,
            search=settings,
        )
    else:
        adv = adversarial_audit(
            mechanism,
            psi,
            psi_prime,
            samples=samples,
            seed=adversarial_seed,
            channels=channels,
            confidence=confidence,
            search=settings,
            thetas=thetas,
            noise_free=False,
        )
    honest = environment_audit(
        honest_theta,
        mechanism,
        psi,
        psi_prime,
        samples=samples,
        confidence=confidence,
        seed=honest_seed,
        workers=1,
        compositions=(),
        channels=list(channels),
    )
    return adv, honest


def _curve_log_line(
    job: CurveJob, adv: AdversarialAuditResult, honest: EnvironmentAuditResult, channels: Sequence[str]
) -> str:
    distance, psi, psi_prime, eps = job.distance, job.psi, job.psi_prime, job.epsilon
    ratios = [
        (model, c.channel, bound_ratio(c.epsilon_lower_bound, eps))
        for model, rows in (("adversarial", adv.rows), ("honest", honest.channels))
        for c in rows
    ]
    return (
        f"Δψ={distance:g} ({psi:g} vs {psi_prime:g}) ε={eps:g}: "
        + ", ".join(f"{model[:3]}/{channel} {ratio:.3f}" for model, channel, ratio in ratios[-2 * len(channels) :])
        + (
            f"; noise-free gradient ε_LB {adv.noise_free_epsilon_lower_bound:.3f}"
            if adv.noise_free_epsilon_lower_bound is not None
            else ""
        )
    )


def false_alarm_study(
    mechanisms: dict[str, Mechanism],
    tuned_pairs: Sequence[tuple[float, float]],
    untuned_pairs: dict[tuple[float, float], tuple[float, float]],
    *,
    seeds: int = 20,
    untuned_seeds: int = 5,
    samples: int = 20_000,
    confidence: float = 0.95,
    seed: int = 0,
    settings: SearchSettings | None = None,
    log: Callable[[str], None] = lambda s: None,
) -> dict:
    """Certify correct mechanisms at crafted θ over many seeds: no bound may exceed the claim.

    θ is crafted once per tuned pair (search stream of ``seed``); each seed then certifies it on
    fresh episodes. ``untuned_pairs`` maps a pair to the tuned pair whose θ is certified on it (a
    model is also certified on pairs it was not tuned on). Returns every bound and the counts of
    bounds above their claim (at 95 % a correct mechanism exceeds its claim with probability ≤ 5 %
    per audit, usually far less: the bound is conservative).
    """
    root = np.random.SeedSequence(seed)
    search_seq, cert_seq = root.spawn(2)
    thetas = {}
    for pair, seq in zip(tuned_pairs, search_seq.spawn(len(tuned_pairs)), strict=True):
        thetas[pair] = search_crafted_model(*pair, objective="gradient", settings=settings, seed=seq).theta
        log(f"crafted θ for {pair[0]:g} vs {pair[1]:g}")
    jobs = [(pair, pair, seeds) for pair in tuned_pairs] + [
        (pair, src, untuned_seeds) for pair, src in untuned_pairs.items()
    ]
    rows = []
    for (pair, src, n_seeds), jseq in zip(jobs, cert_seq.spawn(len(jobs)), strict=True):
        for name, mech in mechanisms.items():
            for s, sseq in enumerate(jseq.spawn(n_seeds)):
                res = environment_audit(
                    thetas[src],
                    mech,
                    pair[0],
                    pair[1],
                    samples=samples,
                    confidence=confidence,
                    seed=sseq,
                    workers=1,
                    compositions=(),
                    channels=["gradient"],
                )
                c = res.channel("gradient")
                rows.append(
                    {
                        "mechanism": name,
                        "claimed_epsilon": float(mech.epsilon),
                        "psi": pair[0],
                        "psi_prime": pair[1],
                        "crafted_for": list(src),
                        "tuned": pair == src,
                        "seed": s,
                        "epsilon_lower_bound": c.epsilon_lower_bound,
                        "ratio": bound_ratio(c.epsilon_lower_bound, float(mech.epsilon)),
                        "exceeds_claim": bool(c.epsilon_lower_bound > float(mech.epsilon)),
                    }
                )
            sub = [r for r in rows if r["mechanism"] == name and (r["psi"], r["psi_prime"]) == pair]
            log(
                f"{name} {pair[0]:g} vs {pair[1]:g} (θ for {src[0]:g} vs {src[1]:g}): {len(sub)} seeds, "
                f"max ε_LB/ε {max(r['ratio'] for r in sub):.3f}, above claim {sum(r['exceeds_claim'] for r in sub)}"
            )
    return {
        "rows": rows,
        "audits": len(rows),
        "exceeding_claim": sum(r["exceeds_claim"] for r in rows),
        "max_ratio": max(r["ratio"] for r in rows),
        "samples": samples,
        "confidence": confidence,
    }
