"""Environment audit at a model: what does ONE agent's submission reveal about its physics ψ?

For a model θ (a trained checkpoint or the initial weights) and two neighbouring environments ψ, ψ'
(the paper's 9.7 vs 9.9, a wide pair, ...), real episodes are played with
:func:`pgc.a3c.rollout.simulate_episodes` and each transcript channel an aggregator sees is audited
separately, with the same select-on-training / certify-on-fresh protocol as the mechanism audit:

* ``gradient`` — the privatized gradient g̃ alone: the only thing the paper's ε covers;
* ``score`` — the reported score ζ (Alg. 1 sends it in the clear);
* ``arrival`` — the arrival tick of a worker that started at tick 0. In the simulator
  arrival = start + score, so this channel equals the score channel (it is audited anyway, from
  its own column, to show it);
* ``arrival-order`` — the rank of the agent's arrival among W workers that started at the same
  tick, the others playing ψ ~ U(Ψ) (ties broken by worker index, the agent's slot uniform). It
  needs W episodes per sample, so it uses ``order_fraction`` of the samples;
* ``all`` — gradient, score and arrival together (for a protected configuration the candidate
  statistics add the per-column scaled Laplace log-likelihood ratio and
  :class:`audit.statistics.ChannelSumLikelihoodRatio`, the sum of the channels' calibrated likelihood
  ratios, so that the privatized score's scale does not swamp the gradient's in the joint test);
* composition: ``gradient×k`` (k submissions from the same environment, each spending the full ε:
  the claim to compare with is k·ε), ``gradient×k split`` (§3.2.1 split: each spends ε/k, claim
  ε) and ``score×k`` (the k scores).

Protected configurations (``protect``, ``score_epsilon``; see :mod:`pgc.a3c.protect`): with ``score``
the ``score`` channel (and ``score×k``, ``all``) is the privatized score clip(ζ, 0, cap) +
Lap(cap/ε_score); with ``timing`` the ``arrival`` channel is start + cap (a constant) and
``arrival-order`` is the rank among W workers that all arrive in the same tick — uniform, as the
target's slot is (and, with ``order``, the shuffler's permutation). ``order`` alone leaves the rank
as unprotected: the shuffler permutes only within a tick, and the unprotected model already breaks
ties uniformly. Every channel is then compared with the TOTAL claim per submission,
ε_gradient + ε_score (k times that for the k-submission channels).

Engine: the system under audit is :class:`pgc.a3c.system.PGCA3CSystem` (the System contract), and every
channel is certified by :func:`audit.engine.system_audit.audit_system`, the one engine, with its one verdict
rule (held to the total claim: ``AuditSettings.held_to_claim``). What this module adds: it draws every
side's episodes, gradient noise and score noise from their own streams (five children of the seed, so
that the committed environment and adversarial audits reproduce bit for bit) and hands them to the
engine as a System that serves the drawn releases in order (:class:`DrawnReleases`: training split
first, then the certification releases, never reused); it audits the arrival rank, which costs W
episodes per release, on ``order_fraction`` of the samples; and it keeps the mechanism audit's rules
for a PGC channel (a training split of at least 200, two-sided selection rate bounds only for δ > 0,
the releases' exact bits).

Verdicts per channel (:func:`audit.verdicts.row_verdict`): ``violated`` (ε_LB > the claim at the
stated confidence, covered or not), ``unprotected channel`` (a channel no mechanism covers, with
ε_LB > 0: it leaks and nothing bounds the leak), ``inconclusive`` (a covered channel whose sample size
could not have flagged a leak of any size), ``consistent`` otherwise. Every channel's bound holds at
the stated confidence on its own; the channels are not corrected for being looked at together.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

import pgc.schemas as schemas
from audit.certification.tester import ENVIRONMENT_SPLIT
from audit.engine.system_audit import AuditSettings, audit_system
from audit.statistics import ChannelSumLikelihoodRatio, LaplaceLogLikelihood
from pgc.a3c.env import PAPER_GRAVITIES, CartPoleParams
from pgc.a3c.protect import parse_protect
from pgc.a3c.rollout import A3CHyperparams
from pgc.a3c.system import PGCA3CSystem, ReleaseStreams
from pgc.errors import UserError
from pgc.mechanisms import Mechanism
from pgc.schemas.audit_rows import EnvironmentRow

ALL_CHANNEL_GROUPS = (slice(0, 1), slice(1, 2), slice(2, None))  # the "all" columns: score, arrival, gradient


class DrawnReleases:
    """A System whose releases were drawn beforehand: ``release(secret, n, rng)`` serves the next n rows of
    every channel drawn for ``secret`` (training split first, then the certification releases: never
    reused), whatever ``rng``; the claim, the channels' claims and the descriptions are ``system``'s. For a
    protected configuration, the joint channel also gets the sum of the channels' calibrated likelihood
    ratios (:class:`audit.statistics.ChannelSumLikelihoodRatio`) and the per-column scaled Laplace
    log-likelihood ratio: the privatized score's scale would swamp the gradient's in a statistic on all
    columns."""

    def __init__(self, system: PGCA3CSystem, drawn: dict[float, dict[str, np.ndarray]], channels: Sequence[str]):
        self.system, self.drawn = system, drawn
        self.name, self.claim, self.channels = system.name, system.claim, tuple(channels)
        self.channel_kinds = system.channel_kinds
        self.used = {secret: 0 for secret in drawn}

    def release(self, secret: float, n: int, rng: np.random.Generator | None = None, *, broadcast=None):
        start = self.used[secret]
        if start + n > len(next(iter(self.drawn[secret].values()))):
            raise RuntimeError("DrawnReleases exhausted: more releases requested than drawn")
        self.used[secret] = start + n
        return {ch: rows[start : start + n] for ch, rows in self.drawn[secret].items()}

    def claim_for(self, channel: str):
        return self.system.claim_for(channel)

    def describe_secret(self, secret: float) -> str:
        return self.system.describe_secret(secret)

    def audit_statistics(self, channel: str) -> list:
        if channel == "all" and self.system.protect:
            return [LaplaceLogLikelihood(scaled=True), ChannelSumLikelihoodRatio(ALL_CHANNEL_GROUPS)]
        return []


@dataclass
class EnvironmentAuditResult:
    psi: float
    psi_prime: float
    mechanism: str
    claimed_epsilon: float
    confidence: float
    channels: list[EnvironmentRow]  # one judged row per channel (audit.verdicts), scope "environment ψ vs ψ'"
    score_means: tuple[float, float]
    wall_time_s: float
    extra: dict = field(default_factory=dict)

    def channel(self, name: str) -> EnvironmentRow:
        for c in self.channels:
            if c.channel == name:
                return c
        raise KeyError(name)


@dataclass(frozen=True)
class EnvironmentSettings:
    """How one environment audit simulates PGC-A3C's participant and spends its episodes (validated on
    construction). ``samples`` certification releases per side (a training split of ``train_fraction``
    of that, at least 200, comes first); the arrival rank needs ``workers`` episodes per release and uses
    ``order_fraction`` of the samples; ``compositions`` adds the k-submission channels; ``channels``
    restricts the audit (None: every channel); ``protect`` (any of ``score``, ``timing``, ``order``) and
    ``score_epsilon`` audit a protected configuration. ``seed`` is an int or the SeedSequence of a caller."""

    samples: int = 100_000
    confidence: float = 0.95
    seed: int | np.random.SeedSequence = 0
    hyper: A3CHyperparams | None = None
    physics: CartPoleParams | None = None
    workers: int = 9
    population: Sequence[float] = PAPER_GRAVITIES
    compositions: Sequence[int] = (3,)
    train_fraction: float = 0.25
    order_fraction: float = 0.25
    exploration: float = 0.0
    channels: Sequence[str] | None = None
    protect: Sequence[str] = ()
    score_epsilon: float | None = None
    progress: bool = False

    def __post_init__(self) -> None:
        samples, workers, compositions = self.samples, self.workers, self.compositions
        if not isinstance(samples, (int, np.integer)) or isinstance(samples, bool) or samples < 100:
            raise UserError(f"samples must be an integer >= 100, got {samples!r}")
        if not isinstance(workers, (int, np.integer)) or workers < 1:
            raise UserError(f"workers must be a positive integer, got {workers!r}")
        if any((not isinstance(k, (int, np.integer))) or k < 2 for k in compositions):
            raise UserError("compositions must be integers >= 2")
        if not (0.0 < self.confidence < 1.0):
            raise UserError(f"confidence must lie in (0, 1), got {self.confidence!r}")
        if not (0.0 < self.train_fraction <= 1.0 and 0.0 < self.order_fraction <= 1.0):
            raise UserError("train_fraction and order_fraction must lie in (0, 1]")
        object.__setattr__(self, "compositions", tuple(compositions))
        object.__setattr__(self, "protect", parse_protect(self.protect))


def environment_audit(
    theta: np.ndarray,
    mechanism: Mechanism,
    psi: float,
    psi_prime: float,
    settings: EnvironmentSettings | None = None,
    **setting_values,
) -> EnvironmentAuditResult:
    """Audit every transcript channel of one submission for the pair ψ vs ψ' at model θ.

    ``settings`` (or its fields as keywords: ``samples=...``) say what is simulated and audited
    (:class:`EnvironmentSettings`). With ``protect``, ``mechanism`` is the gradient mechanism (at
    ε − ε_score) and ``score_epsilon`` the score mechanism's ε per submission (required with ``score``);
    the claim is their sum.
    """
    s = replace(settings or EnvironmentSettings(), **setting_values)
    if not (math.isfinite(psi) and math.isfinite(psi_prime)) or psi == psi_prime:
        raise UserError(f"need two different finite gravities, got {psi!r} and {psi_prime!r}")
    known, wanted = _environment_channels(s.workers, s.compositions, s.channels)
    compositions = [k for k in s.compositions if any(c.startswith((f"gradient×{k}", f"score×{k}")) for c in wanted)]
    start = time.perf_counter()
    # the system under audit: PGC-A3C's participant at model θ, through the System contract
    system = PGCA3CSystem(
        mechanism,
        theta,
        hyper=s.hyper or A3CHyperparams(),
        physics=s.physics or CartPoleParams(),
        workers=s.workers,
        population=s.population,
        compositions=compositions,
        order=False,
        exploration=s.exploration,
        protect=s.protect,
        score_epsilon=s.score_epsilon,
    )
    train = ENVIRONMENT_SPLIT.size(s.samples, s.train_fraction)
    root = s.seed if isinstance(s.seed, np.random.SeedSequence) else np.random.SeedSequence(s.seed)
    # five children: episodes, gradient noise, arrival order, tests, score noise (drawn only with a privatized score)
    sim_seq, mech_seq, order_seq, test_seq, score_seq = root.spawn(5)

    order_samples = max(100, int(s.order_fraction * s.samples))
    order_train = ENVIRONMENT_SPLIT.size(order_samples, s.train_fraction)
    sides = _draw_sides(
        system,
        psi,
        psi_prime,
        train + s.samples,
        (sim_seq, mech_seq, score_seq),
        order_seq if "arrival-order" in wanted else None,
        order_train + order_samples,
    )

    audited = []
    from audit.engine.progress import progress_bar

    bar = progress_bar(len(wanted), "channel", f"environment audit ψ={psi:g} vs ψ'={psi_prime:g}", s.progress)
    for name in known:
        if name not in wanted:
            continue
        n_train = order_train if name == "arrival-order" else train
        audited.append(
            _audit_channel(system, name, sides["pos"][name], sides["neg"][name], n_train, s.confidence, psi, psi_prime)
        )
        bar.update(1)
    bar.close()
    means = (float(sides["pos"]["score"].mean()), float(sides["neg"]["score"].mean()))
    from audit.engine.blackbox import describe

    extra = protection_record(
        s.protect, mechanism.epsilon, system.score_mechanism.epsilon if system.score_mechanism is not None else 0.0
    )
    return EnvironmentAuditResult(
        psi,
        psi_prime,
        describe(mechanism),
        system.claim.epsilon,
        s.confidence,
        audited,
        means,
        time.perf_counter() - start,
        extra,
    )


def environment_record(res: EnvironmentAuditResult, protect: Sequence[str] = ()) -> schemas.EnvironmentAudit:
    """One pair's environment audit as a result records it; ``protect``: the run's mitigations, set on its rows."""
    rows = [row.updated(protect=list(protect)) for row in res.channels] if protect else list(res.channels)
    return schemas.EnvironmentAudit(
        psi=res.psi,
        psi_prime=res.psi_prime,
        mechanism=res.mechanism,
        claimed_epsilon=res.claimed_epsilon,
        confidence=res.confidence,
        channels=rows,
        score_means=[float(m) for m in res.score_means],
        wall_time_s=res.wall_time_s,
        protection=schemas.ProtectedClaim(**res.extra) if res.extra else None,
    )


def protection_record(protect: Sequence[str], gradient_epsilon: float, score_epsilon: float) -> dict:
    """What a result records about a protected configuration (none without mitigations): the claim is the
    total ε_gradient + ε_score per submission."""
    if not protect:
        return {}
    return {
        "protect": list(protect),
        "gradient_epsilon": float(gradient_epsilon),
        "score_epsilon": float(score_epsilon),
        "claim": "total: ε_gradient + ε_score per submission",
    }


def _environment_channels(
    workers: int, compositions: Sequence[int], channels: Sequence[str] | None
) -> tuple[list[str], list[str]]:
    """The channels this configuration releases (in audit order) and those asked for; a ValueError for others."""
    known = ["gradient", "score", "arrival"] + (["arrival-order"] if workers > 1 else []) + ["all"]
    for k in compositions:
        known += [f"gradient×{k}", f"gradient×{k} split", f"score×{k}"]
    wanted = known if channels is None else list(channels)
    unknown = [c for c in wanted if c not in known]
    if unknown or not wanted:
        raise UserError(f"unknown or no channels {unknown or wanted}; known: {', '.join(known)}")
    return known, wanted


def _draw_sides(
    system: PGCA3CSystem,
    psi: float,
    psi_prime: float,
    total: int,
    seqs: tuple,
    order_seq: np.random.SeedSequence | None,
    order_total: int,
) -> dict[str, dict[str, np.ndarray]]:
    """``total`` releases of each side from the episode, gradient-noise and score-noise streams (one child of
    each per side), and ``order_total`` arrival ranks per side from ``order_seq`` when the rank is audited."""
    sim_seq, mech_seq, score_seq = seqs
    sides = {}
    for label, g, sseq, mseq, scseq in zip(
        ("pos", "neg"), (psi, psi_prime), sim_seq.spawn(2), mech_seq.spawn(2), score_seq.spawn(2), strict=True
    ):
        streams = ReleaseStreams(*(np.random.Generator(np.random.PCG64(q)) for q in (sseq, mseq, scseq)))
        sides[label] = system.release(g, total, None, streams=streams)
    if order_seq is not None:
        orng = np.random.Generator(np.random.PCG64(order_seq))
        for label, g in (("pos", psi), ("neg", psi_prime)):
            sides[label]["arrival-order"] = system.arrival_order(g, order_total, orng)
    return sides


def _audit_channel(
    system: PGCA3CSystem,
    name: str,
    pos: np.ndarray,
    neg: np.ndarray,
    n_train: int,
    confidence: float,
    psi: float,
    psi_prime: float,
) -> EnvironmentRow:
    """One channel through :func:`audit_system`: its test chosen on the first ``n_train`` rows per side,
    certified on the rest; the engine's judged row with this audit's scope and the channel's note."""
    samples = len(pos) - n_train
    served = DrawnReleases(system, {psi: {name: pos}, psi_prime: {name: neg}}, (name,))
    settings = AuditSettings(
        samples=samples,
        confidence=confidence,
        train_fraction=min(1.0, n_train / samples),
        train_minimum=n_train,
        float_exact=True,
        two_sided_rates=None,
        held_to_claim=True,
    )
    row = audit_system(served, psi, psi_prime, settings, channels=[name]).rows[0]
    return EnvironmentRow.of(
        row,
        scope=f"environment {psi:g} vs {psi_prime:g}",
        broadcast=None,
        note=_channel_note(name, system) or None,
        holm_rejected=None,
    )


def _channel_note(name: str, system: PGCA3CSystem) -> str:
    protect, score_mech = system.protect, system.score_mechanism
    if name.startswith("gradient×") and not name.endswith("split"):
        return "k submissions at full ε: claim k·ε by composition"
    if name.endswith("split"):
        return "§3.2.1 split: each submission spends ε/k"
    if name.startswith("score×") and score_mech is not None:
        return "k privatized scores: claim k·ε (total) by composition"
    if name == "arrival":
        return (
            "arrival tick on the fixed schedule: start + cap, a constant"
            if "timing" in protect
            else "arrival tick of a worker started at tick 0; arrival = start + score in the simulator"
            + (" (the TRUE score: privatizing the score does not protect it)" if score_mech is not None else "")
        )
    if name == "arrival-order":
        return (
            f"rank among {system.workers} workers arriving in the same tick (fixed schedule): uniform"
            if "timing" in protect
            else f"rank among {system.workers} workers started together, others ψ ~ U({list(system.population)})"
        )
    if name == "all":
        return "gradient, score and arrival together" + (
            " (protected: also the sum of the channels' calibrated likelihood ratios)" if protect else ""
        )
    if name == "score" and score_mech is not None:
        return (
            f"privatized score: clip to [0, {score_mech.cap:g}] + Lap({score_mech.scale:g}), "
            f"ε_score {score_mech.epsilon:g}"
        )
    return ""
