"""Adversary instantiation: the aggregator crafts the model θ, then the environment audit runs at it.

The crafted family and its search live in :mod:`pgc.a3c.crafted` (see its docstring); the curve against
the neighbour distance and the false-alarm study in :mod:`pgc.audits.studies`.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

import pgc.schemas as schemas
from audit.engine.blackbox import describe
from pgc.a3c.crafted import (
    SEARCH_CHANNELS,
    SearchResult,
    SearchSettings,
    WorstPairResult,
    check_pair,
    search_crafted_model,
    worst_pair_search,
)
from pgc.a3c.env import PAPER_GRAVITIES, CartPoleParams
from pgc.a3c.model import with_zero_biases
from pgc.a3c.protect import parse_protect
from pgc.a3c.rollout import A3CHyperparams
from pgc.errors import UserError
from pgc.mechanisms import Mechanism, NoNoise
from pgc.schemas.audit_rows import AdversarialModelRow, AdversarialRow, EnvironmentRow
from pgc.tasks import map_tasks

from .environment import EnvironmentSettings, environment_audit, protection_record

ADVERSARIAL_CHANNELS = ("gradient", "score", "arrival", "arrival-order", "all")
PROTECTED_ADVERSARIAL_CHANNELS = ("gradient", "score", "arrival", "arrival-order", "all")  # default under protect


# ---------------------------------------------------------------------------------------------
# The adversarial audit
# ---------------------------------------------------------------------------------------------


@dataclass
class AdversarialAuditResult:
    psi: float
    psi_prime: float
    mechanism: str
    claimed_epsilon: float
    confidence: float
    rows: list[AdversarialRow]  # judged rows (audit.verdicts), model "adversarial", crafted_for their θ's objective
    thetas: dict[str, np.ndarray]  # objective → crafted θ
    searches: dict[str, SearchResult]
    noise_free_epsilon_lower_bound: float | None  # gradient channel at ε = ∞ (raw gradient), crafted θ
    score_means: dict[str, tuple[float, float]]
    wall_time_s: float
    extra: dict = field(default_factory=dict)  # the protection record of a protected configuration

    @property
    def theta(self) -> np.ndarray:
        """The gradient-crafted θ (the headline model)."""
        return self.thetas.get("gradient", next(iter(self.thetas.values())))

    def row(self, channel: str) -> AdversarialRow:
        for r in self.rows:
            if r.channel == channel:
                return r
        raise KeyError(channel)

    def to_dict(self) -> dict:
        return {
            "psi": self.psi,
            "psi_prime": self.psi_prime,
            "mechanism": self.mechanism,
            "claimed_epsilon": self.claimed_epsilon,
            "confidence": self.confidence,
            "model": "adversarial",
            "channels": [r.to_dict() for r in self.rows],
            "noise_free_epsilon_lower_bound": self.noise_free_epsilon_lower_bound,
            "search": {
                "objective": ", ".join(self.searches),
                "evaluations": sum(s.evaluations for s in self.searches.values()),
                "wall_time_s": sum(s.wall_time_s for s in self.searches.values()),
                "per_objective": {k: s.to_dict() for k, s in self.searches.items()},
            },
            "score_means": {k: list(v) for k, v in self.score_means.items()},
            "wall_time_s": self.wall_time_s,
            **self.extra,
        }


def crafted_row(row: EnvironmentRow, objective: str, psi: float, psi_prime: float) -> AdversarialRow:
    """An environment audit's row certified at the θ crafted for ``objective``."""
    return AdversarialRow.of(
        row,
        scope=f"adversarial {psi:g} vs {psi_prime:g}",
        model="adversarial",
        broadcast="crafted",
        crafted_for=objective,
        ratio=bound_ratio(row.epsilon_lower_bound, row.claimed_epsilon),
    )


def bound_ratio(lb: float, claim: float) -> float:
    return lb / claim if math.isfinite(claim) and claim > 0 else math.nan


@dataclass(frozen=True)
class AdversarialSettings:
    """How one adversarial audit searches and certifies: ``samples`` releases per side per channel,
    ``seed``, ``channels``, ``confidence``; ``search`` (the crafted family's :class:`SearchSettings`);
    ``thetas`` skips the search for the objectives it holds (e.g. a θ saved by an earlier audit);
    ``noise_free`` adds the gradient channel's bound with no mechanism at all; ``protect`` and
    ``score_epsilon`` audit a protected configuration, the rank among ``workers`` workers with the others
    playing ψ ~ U(``population``)."""

    samples: int = 200_000
    seed: int = 0
    channels: Sequence[str] = ("gradient", "score", "all")
    confidence: float = 0.95
    search: SearchSettings | None = None
    physics: CartPoleParams | None = None
    hyper: A3CHyperparams | None = None
    thetas: dict | None = None
    noise_free: bool = True
    protect: Sequence[str] = ()
    score_epsilon: float | None = None
    workers: int = 9
    population: Sequence[float] | None = None
    progress: bool = False

    def __post_init__(self) -> None:
        channels = list(dict.fromkeys(self.channels))
        bad = [c for c in channels if c not in ADVERSARIAL_CHANNELS]
        if bad or not channels:
            raise UserError(f"unknown or no channels {bad or channels}; known: {', '.join(ADVERSARIAL_CHANNELS)}")
        object.__setattr__(self, "channels", tuple(channels))
        object.__setattr__(self, "protect", parse_protect(self.protect))


def adversarial_audit(
    mechanism: Mechanism, psi: float, psi_prime: float, settings: AdversarialSettings | None = None, **setting_values
) -> AdversarialAuditResult:
    """Craft θ for ψ vs ψ' (search stream), then certify each channel at it on fresh episodes.

    ``mechanism`` is any object with the :class:`pgc.mechanisms.Mechanism` contract; ``settings`` (or its
    fields as keywords) say how (:class:`AdversarialSettings`). The gradient, ``all`` and ``arrival``
    channels are certified at the gradient-crafted θ, the score channel at the score-crafted θ (when
    both are asked for). ``noise_free`` adds the gradient channel's bound with no mechanism at all (raw
    gradients) at the gradient-crafted θ: the most any mechanism could leak through that channel at
    that model.

    With ``protect``, ``mechanism`` is the gradient mechanism (at ε − ε_score) and ``score_epsilon`` the
    score mechanism's ε per submission; every channel — the privatized score, the fixed-schedule arrival,
    the rank among ``workers`` workers (``arrival-order``) and ``all`` — is compared with the TOTAL claim
    ε_gradient + ε_score (see :func:`environment_audit`).
    """
    s = replace(settings or AdversarialSettings(), **setting_values)
    check_pair(psi, psi_prime)
    if not hasattr(mechanism, "epsilon") or not callable(mechanism):
        raise TypeError("mechanism must follow the Mechanism contract (an epsilon and a __call__)")
    channels = list(s.channels)
    start = time.perf_counter()
    hyper = s.hyper or A3CHyperparams()
    physics = s.physics or CartPoleParams()
    search = s.search or SearchSettings()
    search_seq, audit_seq = np.random.SeedSequence(s.seed).spawn(2)
    objective_of = {c: ("score" if c == "score" else "gradient") for c in channels}
    found, searches = _crafted_models(
        psi, psi_prime, sorted(set(objective_of.values())), s.thetas, search, search_seq, physics, hyper
    )
    score_epsilon = float(s.score_epsilon) if "score" in s.protect and s.score_epsilon else None
    claimed = float(mechanism.epsilon) + (score_epsilon or 0.0)
    rows: list[AdversarialRow] = []
    means: dict[str, tuple[float, float]] = {}
    audit_seqs = dict(zip(SEARCH_CHANNELS + ("noise-free",), audit_seq.spawn(len(SEARCH_CHANNELS) + 1), strict=True))
    environment = EnvironmentSettings(
        samples=s.samples,
        confidence=s.confidence,
        hyper=hyper,
        physics=physics,
        population=tuple(s.population or PAPER_GRAVITIES),
        compositions=(),
        exploration=search.exploration,
        progress=s.progress,
    )
    for objective in sorted(set(objective_of.values())):
        wanted = [c for c in channels if objective_of[c] == objective]
        # one worker unless the rank is asked for: the environment audit then knows no arrival-order
        # channel, and each channel keeps the streams of the committed adversarial audits
        res = environment_audit(
            found[objective],
            mechanism,
            psi,
            psi_prime,
            environment,
            seed=audit_seqs[objective],
            workers=s.workers if "arrival-order" in wanted else 1,
            channels=wanted,
            protect=s.protect,
            score_epsilon=score_epsilon if "score" in s.protect else None,
        )
        means[objective] = res.score_means
        rows += [crafted_row(c, objective, psi, psi_prime) for c in res.channels]
    rows.sort(key=lambda r: channels.index(r.channel))
    noise_free_lb = None
    if s.noise_free and "gradient" in found:
        noise_free_lb = (
            environment_audit(
                found["gradient"],
                NoNoise(clip=None),
                psi,
                psi_prime,
                environment,
                seed=audit_seqs["noise-free"],
                workers=1,
                channels=["gradient"],
            )
            .channel("gradient")
            .epsilon_lower_bound
        )
    extra = protection_record(s.protect, mechanism.epsilon, score_epsilon or 0.0)
    return AdversarialAuditResult(
        psi,
        psi_prime,
        describe(mechanism),
        claimed,
        s.confidence,
        rows,
        found,
        searches,
        noise_free_lb,
        means,
        time.perf_counter() - start,
        extra,
    )


def _crafted_models(
    psi: float,
    psi_prime: float,
    needed: Sequence[str],
    thetas: dict | None,
    settings: SearchSettings,
    search_seq: np.random.SeedSequence,
    physics: CartPoleParams,
    hyper: A3CHyperparams,
) -> tuple[dict[str, np.ndarray], dict[str, SearchResult]]:
    """θ per objective in ``needed``: given in ``thetas``, else crafted for the pair on the search stream
    (each objective its own child of ``search_seq``); weights only."""
    found = dict(thetas or {})
    searches: dict[str, SearchResult] = {}
    for objective, seq in zip(SEARCH_CHANNELS, search_seq.spawn(len(SEARCH_CHANNELS)), strict=True):
        if objective in needed and objective not in found:
            searches[objective] = search_crafted_model(
                psi, psi_prime, objective=objective, settings=settings, seed=seq, physics=physics, hyper=hyper
            )
            found[objective] = searches[objective].theta
    return {k: with_zero_biases(v, hyper.biases) for k, v in found.items()}, searches


def audit_pair(
    mechanism: Mechanism,
    pair: tuple[float, float],
    seed: int,
    search_range: bool = False,
    *,
    search_objective: str = "gradient",
    search_trials: int = 12,
    search: SearchSettings | None = None,
    physics: CartPoleParams | None = None,
    hyper: A3CHyperparams | None = None,
    **audit_options,
) -> tuple[WorstPairResult | None, AdversarialAuditResult]:
    """One pair of :func:`adversarial_pair_audits` (one task): with ``search_range`` the pair is a range
    lo..hi and the worst pair in it is searched first (:func:`worst_pair_search`, same ``seed``), then
    :func:`adversarial_audit` crafts θ for the pair and certifies it. Returns (the range search or
    None, the audit)."""
    found = None
    if search_range:
        found = worst_pair_search(
            pair[0],
            pair[1],
            objective=search_objective,
            trials=search_trials,
            seed=seed,
            physics=physics,
            hyper=hyper,
            settings=search,
        )
        pair = (found.psi, found.psi_prime)
    result = adversarial_audit(
        mechanism, pair[0], pair[1], seed=seed, search=search, physics=physics, hyper=hyper, **audit_options
    )
    return found, result


def adversarial_pair_audits(
    mechanism: Mechanism,
    pairs: Sequence[tuple[float, float]],
    *,
    seed: int = 0,
    search_ranges: Sequence[bool] | None = None,
    executor=None,
    **options,
) -> Iterator[tuple[WorstPairResult | None, AdversarialAuditResult]]:
    """:func:`audit_pair` for every pair, in order; ``search_ranges[i]`` marks ``pairs[i]`` as a range
    lo..hi (default: none is). Pair i draws from the i-th child of ``SeedSequence(seed)`` only, so the
    pairs are independent tasks: ``executor`` (``Executor.map``'s meaning, e.g. a Ray engine) runs
    them, one pair per task, with the same results; without one they run here, one after the other,
    each result yielded as soon as it exists. ``options`` are :func:`audit_pair`'s keywords."""
    seeds = [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(seed).spawn(len(pairs))]
    ranges = list(search_ranges) if search_ranges is not None else [False] * len(pairs)
    if len(ranges) != len(pairs):
        raise UserError("search_ranges must mark every pair")
    task = functools.partial(audit_pair, mechanism, **options)
    return map_tasks(executor, task, [tuple(map(float, p)) for p in pairs], seeds, ranges)


def crafted_pair_records(
    mechanism: Mechanism,
    pairs: Sequence[tuple[float, float]],
    *,
    companion: Callable[[str], Path],
    seed: int = 0,
    search_trials: int = 12,
    channels: Sequence[str] = ("gradient", "score", "all"),
    executor=None,
    **options,
) -> Iterator[tuple[WorstPairResult | None, AdversarialAuditResult, schemas.AdversarialAudit]]:
    """:func:`adversarial_pair_audits` of ``pairs`` (a :class:`pgc.options.GravityRange` is searched for its
    worst pair; the crafted models' search on the gradient unless only the score is audited), each pair's
    crafted θ saved as checkpoints beside the result (``companion(suffix)`` names them). Yields, pair by pair
    as each is ready, (the range search or None, the audit, its record as the result stores it)."""
    from pgc.options import GravityRange

    results = adversarial_pair_audits(
        mechanism,
        [tuple(p) for p in pairs],
        seed=seed,
        executor=executor,
        search_ranges=[isinstance(p, GravityRange) for p in pairs],
        search_objective="gradient" if any(c != "score" for c in channels) else "score",
        search_trials=search_trials,
        channels=list(channels),
        **options,
    )
    for pair, (found, res) in zip(pairs, results, strict=False):
        yield found, res, _pair_record(pair, found, res, companion)


def _pair_record(
    pair, found: WorstPairResult | None, res: AdversarialAuditResult, companion: Callable[[str], Path]
) -> schemas.AdversarialAudit:
    """The pair's audit as the result records it, its crafted θ saved beside the result (``companion``)."""
    from pgc.a3c.model import save_checkpoint

    psi, psi_prime = res.psi, res.psi_prime
    theta_files = {}
    for objective, theta in res.thetas.items():
        path = companion(f"-theta-{psi:g}-{psi_prime:g}-{objective}.pt")
        save_checkpoint(theta, path, {"crafted_for": f"{psi:g} vs {psi_prime:g}", "objective": objective})
        theta_files[objective] = path.name
    rows = [AdversarialModelRow.of(r, theta_file=theta_files.get(r.crafted_for)) for r in res.rows]
    return adversarial_record(res, rows, theta_files, None if found is None else worst_pair_record(pair, found))


def adversarial_record(
    res: AdversarialAuditResult,
    rows: Sequence[AdversarialModelRow],
    theta_files: dict[str, str],
    worst_pair: schemas.WorstPairSearch | None = None,
) -> schemas.AdversarialAudit:
    """One pair's adversarial audit as its result records it: its rows as written, the crafted models saved beside
    the result (objective -> file) and the pair search, if any."""
    pair = crafted_pair_record(res, rows)
    return schemas.AdversarialAudit(
        **{f.name: getattr(pair, f.name) for f in dataclasses.fields(pair)},
        theta_files=theta_files,
        theta_file=None if not theta_files else theta_files.get("gradient", next(iter(theta_files.values()))),
        worst_pair_search=worst_pair,
    )


def crafted_pair_record(
    res: AdversarialAuditResult, rows: Sequence[AdversarialRow] | None = None
) -> schemas.CraftedPairAudit:
    """One pair audited at its crafted models, as the adversarial curve records it (``rows``: default its own)."""
    searches = res.searches.values()
    return schemas.CraftedPairAudit(
        psi=res.psi,
        psi_prime=res.psi_prime,
        mechanism=res.mechanism,
        channels=list(res.rows if rows is None else rows),
        claimed_epsilon=res.claimed_epsilon,
        confidence=res.confidence,
        noise_free_epsilon_lower_bound=res.noise_free_epsilon_lower_bound,
        search=schemas.AdversarialSearch(
            objective=", ".join(res.searches),
            evaluations=sum(s.evaluations for s in searches),
            wall_time_s=sum(s.wall_time_s for s in searches),
            per_objective={k: schemas.CraftedSearch(**s.to_dict()) for k, s in res.searches.items()},
        ),
        score_means={k: [float(x) for x in v] for k, v in res.score_means.items()},
        wall_time_s=res.wall_time_s,
        protection=schemas.ProtectedClaim(**res.extra) if res.extra else None,
    )


def worst_pair_record(pair, found: WorstPairResult) -> schemas.WorstPairSearch:
    """The worst-pair search in the range ``pair`` as the result records it."""
    trials = [
        schemas.PairTrial(psi=t["psi"], psi_prime=t["psi_prime"], value=t["value"], evaluations=t["evaluations"])
        for t in found.trials
    ]
    return schemas.WorstPairSearch(
        range=[float(x) for x in pair],
        psi=found.psi,
        psi_prime=found.psi_prime,
        value=float(found.value),
        trials=trials,
        wall_time_s=found.wall_time_s,
    )
