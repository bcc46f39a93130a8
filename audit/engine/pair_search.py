"""The worst neighbouring pair of a System, found by the auditor itself.

A system may offer ``secret_space``: ``dim``, ``relation`` and ``pair(x)`` → a neighbouring pair for any
point x of the unit box [0, 1]^dim. :func:`search_secret_pair` runs CMA-ES (the ``cmaes`` package) over that
box for the pair whose releases project the largest certified ε (:func:`audit.certification.tester.fit_candidate`, at
the
certification sample size) on any covered channel, a smooth separation of the release distributions breaking
ties, on max(search_samples, samples/10) releases per side. Every candidate is scored on a SEARCH stream only
(common random numbers within a generation), so the pair it returns is certified afterwards on fresh releases,
and the search costs the certificate nothing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from audit.certification.tester import fit_candidate
from audit.engine.broadcast_search import mean_separation
from audit.engine.progress import progress_bar
from audit.engine.releases import AuditTarget
from audit.statistics import search_statistics
from pgc.contracts import ALL, HasSecretSpace
from pgc.errors import UserError
from pgc.optim import cmaes_maximize

PAIR_SEARCH_GENERATIONS = 20
PAIR_SEARCH_POPULATION = 12
PAIR_SEARCH_SHARE = 10  # releases per side per candidate: at least the certification size / this


@dataclass(frozen=True)
class FoundPair:
    secret: Any
    secret_prime: Any
    objective: float  # the projected ε (plus the tie-breaking separation) on the search stream
    evaluations: int
    relation: str

    def pair(self) -> tuple[Any, Any]:
        return self.secret, self.secret_prime

    def to_dict(self) -> dict:
        return {
            "secret": jsonable(self.secret),
            "secret_prime": jsonable(self.secret_prime),
            "search_objective": self.objective,
            "evaluations": self.evaluations,
            "relation": self.relation,
        }


def jsonable(value: Any) -> Any:
    """``value`` with numpy arrays and scalars turned into lists and Python numbers."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    return value


def pair_objective(
    system: Any,
    secret: Any,
    secret_prime: Any,
    base: Sequence[str],
    channels: Sequence[str],
    n: int,
    seq: np.random.SeedSequence,
    n_cert: int,
    alpha: float,
    deltas: dict[str, float],
) -> float:
    """max over ``channels`` of the ε a threshold test would project at ``n_cert`` releases, plus a tie-break
    in [0, 0.01) from the releases' separation."""
    target = AuditTarget(system, secret, secret_prime, tuple(base), False)
    pos, neg = target.release_pair(n, seq, None, list(channels))
    best, separation = 0.0, 0.0
    for ch in channels:
        cand = fit_candidate(
            ch, pos[ch], neg[ch], n_cert, alpha, deltas[ch], two_sided_rates=True, statistics=search_statistics()
        )
        best = max(best, 0.0 if cand is None else float(cand.projected_epsilon))
        separation = max(separation, mean_separation(pos[ch], neg[ch]))
    return best + 0.01 * math.tanh(separation / 100.0)


def search_secret_pair(
    system: Any,
    base: Sequence[str],
    channels: Sequence[str],
    seq: np.random.SeedSequence,
    *,
    n: int,
    n_cert: int,
    alpha: float,
    deltas: dict[str, float],
    generations: int = PAIR_SEARCH_GENERATIONS,
    population: int = PAIR_SEARCH_POPULATION,
    progress: bool = False,
) -> FoundPair:
    """CMA-ES over ``system.secret_space`` for the neighbouring pair with the largest projected ε (see the
    module docstring); ``seq`` is the search stream."""
    space = system.secret_space if isinstance(system, HasSecretSpace) else None
    if space is None or not callable(getattr(space, "pair", None)) or int(getattr(space, "dim", 0)) < 1:
        raise UserError(f"{system.name} offers no secret_space (dim, relation, pair(x)): nothing to search")
    wanted = [c for c in channels if c != ALL] or list(base)
    init_seq, gen_seq = seq.spawn(2)
    rng = np.random.Generator(np.random.PCG64(init_seq))
    dim = int(space.dim)
    gens = gen_seq.spawn(generations)
    bar = progress_bar(generations, "generation", f"searching {system.name}'s neighbouring pairs (CMA-ES)", progress)

    def objective(x: np.ndarray, generation: int) -> float:
        secret, secret_prime = space.pair(x)
        return pair_objective(system, secret, secret_prime, base, wanted, n, gens[generation], n_cert, alpha, deltas)

    found = cmaes_maximize(
        objective,
        rng.uniform(0.2, 0.8, dim),
        0.3,
        generations=generations,
        population=population,
        seed=int(rng.integers(2**31)),
        bounds=np.stack([np.zeros(dim), np.ones(dim)], axis=1),
        on_generation=lambda generation, best: bar.update(1),
    )
    bar.close()
    secret, secret_prime = space.pair(found.best_x)
    return FoundPair(
        secret, secret_prime, float(found.best_value), int(found.evaluations), str(getattr(space, "relation", ""))
    )


def choose_named_pair(
    system: Any,
    base: Sequence[str],
    channels: Sequence[str],
    pairs: Mapping[str, tuple[Any, Any]],
    seq: np.random.SeedSequence,
    *,
    n: int,
    n_cert: int,
    alpha: float,
    deltas: dict[str, float],
    progress: bool = False,
) -> tuple[str, FoundPair]:
    """The named pair (of a finite set: a system's ``canaries()``) with the largest projected ε on a SEARCH stream
    (:func:`pair_objective`, every pair on the same common random numbers). The certification that follows draws
    fresh releases of the one chosen pair, so the choice among any number of pairs costs the certificate nothing:
    the family-wise error over the pairs is the certified test's own α."""
    if not pairs:
        raise UserError(f"{system.name} names no canary pairs to choose among")
    wanted = [c for c in channels if c != ALL] or list(base)
    bar = progress_bar(len(pairs), "pair", f"ranking {system.name}'s {len(pairs)} named pairs", progress)
    scores = {}
    for name, (secret, secret_prime) in pairs.items():
        scores[name] = pair_objective(system, secret, secret_prime, base, wanted, n, seq, n_cert, alpha, deltas)
        bar.update(1)
    bar.close()
    best = max(scores, key=lambda name: scores[name])  # the first named wins exact ties
    secret, secret_prime = pairs[best]
    return best, FoundPair(
        secret,
        secret_prime,
        float(scores[best]),
        len(pairs),
        f"the named pair with the largest projected ε among {len(pairs)}: "
        + ", ".join(f"{k} {v:.3f}" for k, v in scores.items()),
    )
