"""The adversarial aggregator's broadcasts: the system's crafted family, or CMA-ES over its
``broadcast_space``, ranked per channel on a search stream of releases (common random numbers)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from audit.certification.tester import fit_candidate
from audit.engine.progress import progress_bar
from audit.engine.releases import AuditTarget
from audit.statistics import search_statistics
from pgc.contracts import ALL, CraftsBroadcasts, HasBroadcastSpace
from pgc.errors import UserError
from pgc.optim import cmaes_maximize

SEARCH_SAMPLES = 2_000  # releases per side per candidate broadcast on the search stream
SEARCH_GENERATIONS = 10  # CMA-ES generations over broadcast_space
SEARCH_POPULATION = 8


def mean_separation(pos: np.ndarray, neg: np.ndarray) -> float:
    """Σ_j (mean difference of column j)² / (its pooled variance): a smooth measure of how far apart two
    release distributions are, informative even where no threshold test yet projects a bound."""
    var = 0.5 * (pos.var(axis=0) + neg.var(axis=0))
    diff = pos.mean(axis=0) - neg.mean(axis=0)
    return float(np.sum(np.where(var > 0, diff**2 / np.where(var > 0, var, 1.0), np.where(diff != 0, 1e12, 0.0))))


def search_broadcast_space(
    target: AuditTarget,
    channels: Sequence[str],
    seq: np.random.SeedSequence,
    *,
    n: int,
    generations: int = SEARCH_GENERATIONS,
    population: int = SEARCH_POPULATION,
    progress: bool = False,
) -> np.ndarray:
    """CMA-ES over the system's ``broadcast_space`` box for the broadcast whose releases lie furthest
    apart (:func:`mean_separation`) on any of ``channels`` (common random numbers within a generation;
    search stream only)."""
    system = target.system
    lower, upper = (np.asarray(x, dtype=np.float64) for x in system.broadcast_space)
    if lower.shape != upper.shape or lower.ndim != 1 or not np.all(lower < upper):
        raise UserError(f"{system.name}.broadcast_space must be two 1-D arrays with lower < upper")
    init_seq, gen_seq = seq.spawn(2)
    rng = np.random.Generator(np.random.PCG64(init_seq))
    mean = rng.uniform(lower, upper)
    seed = int(rng.integers(2**31))
    gens = gen_seq.spawn(generations)  # one stream per generation: its candidates share common random numbers

    def separation(x: np.ndarray, generation: int) -> float:
        pos, neg = target.release_pair(n, gens[generation], x, channels)
        return max(mean_separation(pos[ch], neg[ch]) for ch in channels)

    bar = progress_bar(len(gens), "generation", f"searching {system.name}'s broadcast space (CMA-ES)", progress)
    found = cmaes_maximize(
        separation,
        mean,
        float(np.max(upper - lower)) / 4.0,
        generations=generations,
        population=population,
        seed=seed,
        bounds=np.stack([lower, upper], axis=1),
        on_generation=lambda generation, best: bar.update(1),
    )
    bar.close()
    return np.asarray(found.best_x)


def projected_by_channel(
    target: AuditTarget,
    broadcast: Any,
    channels: Sequence[str],
    n: int,
    seq: np.random.SeedSequence,
    n_cert: int,
    confidence: float,
    deltas: dict[str, float],
) -> dict[str, float]:
    """Per channel, the bound a broadcast's best test would project at ``n_cert`` samples (search stream)."""
    pos, neg = target.release_pair(n, seq, broadcast, channels)
    return projected_of_releases(pos, neg, channels, n_cert, 1.0 - confidence, deltas)


def projected_of_releases(
    pos: Mapping[str, np.ndarray],
    neg: Mapping[str, np.ndarray],
    channels: Sequence[str],
    n_cert: int,
    alpha: float,
    deltas: Mapping[str, float],
) -> dict[str, float]:
    """Per channel, the bound the best test fitted on these search releases would project at ``n_cert`` samples (0
    where no statistic applies): what a search ranks its candidates by."""
    out = {}
    for ch in channels:
        cand = fit_candidate(
            ch,
            pos[ch],
            neg[ch],
            n_cert,
            alpha,
            deltas[ch],
            two_sided_rates=True,
            statistics=search_statistics(),
            threshold_on_whole_split=False,  # a search ranks on the selection half's projections
        )
        out[ch] = 0.0 if cand is None else float(cand.projected_epsilon)
    return out


def adversarial_candidates(
    target: AuditTarget,
    channels: Sequence[str],
    covered: dict[str, bool],
    seq: np.random.SeedSequence,
    *,
    search_samples: int,
    search_generations: int,
    progress: bool,
) -> tuple[list[tuple[str, Any]], np.random.SeedSequence]:
    """The adversary's candidate broadcasts (label, value) and the stream that ranks them: the system's
    crafted family where it has one, else CMA-ES over its ``broadcast_space`` beside the honest default."""
    system = target.system
    if isinstance(system, CraftsBroadcasts):
        crafted_seq, rank_seq = seq.spawn(2)
        crafted = system.crafted_broadcasts(
            target.secret, target.secret_prime, np.random.Generator(np.random.PCG64(crafted_seq))
        )
        candidates = [(f"crafted-{i}", b) for i, b in enumerate(crafted)]
        if not candidates:
            raise UserError(f"{system.name}.crafted_broadcasts returned no broadcast")
        return candidates, rank_seq
    if not isinstance(system, HasBroadcastSpace) or system.broadcast_space is None:
        raise UserError(
            f"{system.name} offers no crafted_broadcasts and no broadcast_space: "
            "an adversarial audit has nothing to search"
        )
    space_seq, rank_seq = seq.spawn(2)
    # what could break the claim: the covered channels (an unprotected one leaks whatever is sent)
    targets = [ch for ch in channels if covered[ch] and ch != ALL] or [ch for ch in channels if ch != ALL] or channels
    found = search_broadcast_space(
        target, targets, space_seq, n=search_samples, generations=search_generations, progress=progress
    )
    return [("searched", found), ("honest", None)], rank_seq
