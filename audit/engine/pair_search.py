"""The worst neighbouring pair of a System, found by the auditor itself.

A system may offer ``secret_space``: ``dim``, ``relation`` and ``pair(x)`` → a neighbouring pair for any point x of the
unit box [0, 1]^dim. :func:`search_secret_pair` runs CMA-ES (the ``cmaes`` package) over that box for the pair whose
releases project the largest certified ε (:func:`audit.certification.tester.fit_candidate`, at the certification sample
size) on any covered channel, a smooth separation of the release distributions breaking ties, on max(search_samples,
samples/10) releases per side. A finite set of named pairs (a system's ``canaries()``) is raced by successive halving
instead (:func:`choose_named_pair`), on max(search_samples, samples/50) per pair (``AuditSettings.pair_race_share``),
drawn per input (pairs that share an input share its releases), ranked by a classifier's held-out log-likelihood gain
(:mod:`audit.engine.separability`) unless a threshold test already projects a decisive ε, and, once a pair has drawn
enough releases, by the ε the tail of that classifier's held-out score projects first. Every candidate is scored on a
SEARCH stream only (common random numbers within a generation or round), so the pair it returns is certified
afterwards on fresh releases, and the search costs the certificate nothing."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from audit.engine.broadcast_search import mean_separation, projected_of_releases
from audit.engine.progress import progress_bar
from audit.engine.releases import AuditTarget, SelectionPool, fixed_child_generator
from audit.engine.separability import separation
from pgc.contracts import ALL, HasSecretSpace
from pgc.errors import UserError
from pgc.optim import cmaes_maximize
from pgc.schemas import SearchedPair

PAIR_SEARCH_GENERATIONS = 20
PAIR_SEARCH_POPULATION = 12
PAIR_SEARCH_SHARE = 10  # releases per side per candidate: at least the certification size / this
# the named-pair race's floor: P pairs share P·max(search_samples, certification size / this) releases per side. The
# survivor's race releases join its training split, so a cheaper race leaves more of a fixed budget to the
# certificate: on the catalogue at 10⁵ per side in total (16 pairs of 10 inputs, drawn per input), a floor of n/50
# instead of n/25 certifies 60,007 instead of 52,915 releases, and over seeds 0–35 ReportNoisyMax3, ReportNoisyMax4
# and SVT6 certify above their claim in 23, 23 and 20 audits (at n/25: 18, 20 and 17; drawn per pair at n/25: 16, 24
# and 10; results/catalogue/shared-inputs/). Drawn per pair, the floor n/50 had cost ReportNoisyMax4 its median
# (results/catalogue/race-ranking/floors.md)
NAMED_PAIR_RACE_SHARE = 50
# a named pair whose threshold test projects at least this ε from the race's releases has an event that (almost) never
# happens under one of its inputs, and the race ranks such pairs by that projection, so a catastrophic leak's pairs
# (SVT5's, NoisyHist2's) are ranked by the ε they certify; below it a tail event's projection from a few hundred
# releases is mostly noise, and the held-out gain ranks (results/catalogue/race-ranking/)
DECISIVE_PROJECTION = 1.0


@dataclass(frozen=True)
class FoundPair:
    secret: Any
    secret_prime: Any
    # on the search stream: a secret-space search's projected ε (plus the tie-breaking separation), a named-pair race's
    # held-out log-likelihood gain (nats per release)
    objective: float
    evaluations: int
    relation: str

    def pair(self) -> tuple[Any, Any]:
        return self.secret, self.secret_prime

    def record(self) -> SearchedPair:
        """The pair as a result records it."""
        return SearchedPair(
            secret=jsonable(self.secret),
            secret_prime=jsonable(self.secret_prime),
            search_objective=float(self.objective),
            evaluations=int(self.evaluations),
            relation=self.relation,
        )


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


def releases_objective(
    pos: Mapping[str, np.ndarray],
    neg: Mapping[str, np.ndarray],
    channels: Sequence[str],
    n_cert: int,
    alpha: float,
    deltas: dict[str, float],
) -> float:
    """max over ``channels`` of the ε a threshold test fitted on these releases would project at ``n_cert``
    releases, plus a tie-break in [0, 0.01) from the releases' separation."""
    best = max([0.0, *projected_of_releases(pos, neg, channels, n_cert, alpha, deltas).values()])
    separation = max([0.0, *(mean_separation(pos[ch], neg[ch]) for ch in channels)])
    return best + 0.01 * math.tanh(separation / 100.0)


def race_score(
    pos: Mapping[str, np.ndarray],
    neg: Mapping[str, np.ndarray],
    channels: Sequence[str],
    n_cert: int,
    alpha: float,
    deltas: dict[str, float],
) -> tuple[float, float, float]:
    """A named pair's rank in the race, the larger the better: (its :func:`releases_objective` where that is at
    least :data:`DECISIVE_PROJECTION`, else 0; the largest held-out tail projection over ``channels``, 0 until the pair
    has drawn :data:`audit.engine.separability.TAIL_RANKING_RELEASES` per side; the largest held-out log-likelihood
    gain; both from :func:`audit.engine.separability.separation`)."""
    projected = releases_objective(pos, neg, channels, n_cert, alpha, deltas)
    separations = [separation(pos[ch], neg[ch], n_cert, alpha) for ch in channels]
    tail, gain = max(t for t, _ in separations), max(g for _, g in separations)
    return (projected if projected >= DECISIVE_PROJECTION else 0.0), tail, gain


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
    """:func:`releases_objective` of ``n`` releases per side of the pair, drawn on ``seq``."""
    target = AuditTarget(system, secret, secret_prime, tuple(base), False)
    pos, neg = target.release_pair(n, seq, None, list(channels))
    return releases_objective(pos, neg, channels, n_cert, alpha, deltas)


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


def halving_rounds(pairs: int) -> int:
    """Rounds of successive halving that leave one of ``pairs``: ⌈log2 pairs⌉ (at least one)."""
    return max(1, math.ceil(math.log2(max(pairs, 1))))


def secret_key(secret: Any) -> Any:
    """A key under which equal secrets meet: numbers (by their exact bits: 0.0 and −0.0 differ), strings, booleans,
    None, numpy arrays (by a digest of their dtype, shape and bytes) and scalars, and tuples, lists and dicts of them by
    value (with their types: 1 and 1.0 differ; dicts whatever the order of their items); any other object by identity,
    so two secrets share releases only where they are certainly the same input."""
    if isinstance(secret, float):
        return ("float", secret.hex())
    if secret is None or isinstance(secret, (bool, int, str)):
        return (type(secret).__name__, secret)
    if isinstance(secret, np.generic):
        return ("numpy", secret.dtype.str, secret.tobytes())
    if isinstance(secret, np.ndarray):
        digest = hashlib.blake2b(np.ascontiguousarray(secret).tobytes(), digest_size=16)
        digest.update(repr((secret.dtype.str, secret.shape)).encode())
        return ("ndarray", digest.hexdigest())
    if isinstance(secret, (tuple, list)):
        return (type(secret).__name__, tuple(secret_key(v) for v in secret))
    if isinstance(secret, dict):
        items = sorted(secret.items(), key=lambda kv: repr(kv[0]))
        return (type(secret).__name__, tuple((repr(k), secret_key(v)) for k, v in items))
    return ("object", id(secret))


def input_streams(pairs: Sequence[tuple[Any, Any]]) -> dict[Any, int]:
    """Each input's stream within a race round: a colouring of the inputs (nodes) joined by the pairs (edges), greedy
    in the order the pairs name them, so that the two inputs of a pair always draw from different streams (their
    releases are independent) while inputs of one colour share a stream (common random numbers: where the releases
    are a function of the input and the noise, inputs compared against the same input are compared on the same noise
    wherever the colouring gives them one colour). On pairs of a base input and its neighbours the base takes stream
    0 and every neighbour stream 1, as a race drawn pair by pair would."""
    neighbours: dict[Any, set] = {}
    for a, b in pairs:
        neighbours.setdefault(a, set()).add(b)
        neighbours.setdefault(b, set()).add(a)
    colour: dict[Any, int] = {}
    for key in neighbours:
        taken = {colour[other] for other in neighbours[key] if other in colour and other != key}
        colour[key] = next(c for c in range(len(neighbours) + 1) if c not in taken)
    return colour


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
) -> tuple[str, FoundPair, SelectionPool]:
    """The named pair (of a finite set: a system's ``canaries()``) whose releases lie furthest apart on a SEARCH stream
    (:func:`race_score`: a decisive projected ε first, then the held-out tail projection of a classifier's score once a
    pair has drawn enough releases, then that classifier's held-out log-likelihood gain), found by successive halving
    (Karnin, Koren & Somekh, ICML 2013) within the releases that ranking every pair on ``n`` per side would cost: ⌈log2
    P⌉ rounds share 2·P·n releases equally. The releases are drawn per input, not per pair: an input that several pairs
    share (a base dataset beside its neighbours) is drawn once for all of them (:func:`secret_key`), so a round's
    releases are spread over the distinct inputs of the pairs still in the race — on DP-Sniper's 16 pairs of 10 inputs,
    3.2 times as many releases per pair in the first round. Each round draws the same number of new releases of every
    such input (one child of ``seq`` per round, and within it the streams of :func:`input_streams`), scores each pair
    still in the race on all its two inputs have drawn (:func:`race_score`) and keeps the better half; the last round
    keeps one. The releases of the pair that survives come back as a :class:`SelectionPool` for its training split. The
    certification that follows draws fresh releases of the one chosen pair, so neither the choice among any number of
    pairs nor the pooled selection costs the certificate anything: the family-wise error over the pairs is the certified
    test's own α."""
    if not pairs:
        raise UserError(f"{system.name} names no canary pairs to choose among")
    wanted = [c for c in channels if c != ALL] or list(base)
    rounds = halving_rounds(len(pairs))
    per_round = 2 * n * len(pairs) // rounds  # releases of both sides together
    inputs: dict[Any, Any] = {}  # key → the secret, in the order the pairs name them
    keys = {}
    for name, pair in pairs.items():
        keys[name] = tuple(secret_key(s) for s in pair)
        for key, secret in zip(keys[name], pair, strict=True):
            inputs.setdefault(key, secret)
    stream = input_streams(list(keys.values()))
    target = AuditTarget(system, None, None, tuple(base), False)
    alive = list(pairs)
    drawn: dict[Any, list] = {key: [] for key in inputs}
    scores: dict[str, tuple[float, float, float]] = {}
    bar = progress_bar(rounds, "round", f"racing {system.name}'s {len(pairs)} named pairs", progress)
    for round_seq in seq.spawn(rounds):
        live = list(dict.fromkeys(key for name in alive for key in keys[name]))
        m = max(2, per_round // len(live))
        for key in live:
            drawn[key].append(target.draw(inputs[key], m, fixed_child_generator(round_seq, stream[key]), None, wanted))
        stacked = {key: _stacked(drawn[key]) for key in live}  # once per input, however many pairs share it
        for name in alive:
            scores[name] = race_score(*(stacked[key] for key in keys[name]), wanted, n_cert, alpha, deltas)
        # stable: the first named wins exact ties
        ranked = sorted(alive, key=lambda name: tuple(-v for v in scores[name]))
        alive = ranked[: max(1, math.ceil(len(alive) / 2))]
        bar.update(1)
    bar.close()
    best = alive[0]
    pool = SelectionPool(raced=True)
    for side, key in enumerate(keys[best]):
        pool.extend(side, stacked[key])  # the last round's, which holds every release of the survivor's inputs
    secret, secret_prime = pairs[best]
    return (
        best,
        FoundPair(
            secret,
            secret_prime,
            float(scores[best][2]),
            len(pairs),
            f"the named pair whose releases lie furthest apart among {len(pairs)} pairs of {len(inputs)} inputs "
            f"(successive halving, {rounds} rounds, releases drawn per input; each pair's last held-out log-likelihood "
            "gain, nats per release, held-out tail projection and decisive projected ε): "
            + ", ".join(f"{k} {g:.4f} / {t:.3f} / {d:.3f}" for k, (d, t, g) in scores.items()),
        ),
        pool,
    )


def _stacked(batches: list[Mapping[str, np.ndarray]]) -> dict[str, np.ndarray]:
    return {ch: np.concatenate([b[ch] for b in batches]) for ch in batches[0]}
