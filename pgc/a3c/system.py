"""PGC-A3C as a :class:`pgc.contracts.System`: one agent, its private gravity ψ, what the aggregator sees.

The secret is the agent's gravity ψ. One release: the agent plays one CartPole episode with the
broadcast model θ (the aggregator's; default: the model the system was built with), computes the A3C
gradient (:func:`pgc.a3c.rollout.simulate_episodes`, the trainer's kernel) and submits

* ``gradient`` — the privatized gradient g̃ (stored as float32, as the transcript stores it): the only
  channel the paper's ε covers;
* ``score`` — the reported score ζ (Alg. 1 sends it in the clear; with ``protect`` "score" the
  privatized score clip(ζ, 0, cap) + Lap(cap/ε_score));
* ``arrival`` — the arrival tick of a worker started at tick 0: start + ζ (start + cap on the fixed
  schedule of ``protect`` "timing");
* ``arrival-order`` (``order=True``) — the rank of the agent's arrival among W workers started at the
  same tick, the others playing ψ ~ U(population): W episodes per release;
* ``gradient×k``, ``gradient×k split``, ``score×k`` for each k of ``compositions`` — k submissions from
  one environment (claims k·ε, ε for the §3.2.1 split, k·ε for the scores);
* ``all`` — score, arrival and gradient side by side (the system assembles it, in that column order).

The claim is the total ε per submission (ε_gradient + ε_score with a privatized score), with the
gradient mechanism's δ; it covers the channels :func:`protected_channels` lists.
``crafted_broadcasts`` is the crafted family of :mod:`pgc.a3c.crafted` (a bang-bang controller with a
value-flip detector), searched for the pair; ``canaries`` are the paper's pair and a wide one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pgc.contracts import PrivacyClaim
from pgc.errors import UserError
from pgc.mechanisms import Mechanism, claimed_delta, split_rounds
from pgc.mechanisms.accounting import mechanism_event, mechanism_gdp_mu
from pgc.schemas.channels import ChannelFamily, ChannelKind

from .env import PAPER_GRAVITIES, CartPoleParams, physics_array
from .model import glorot_uniform_theta
from .protect import ScoreLaplace, parse_protect
from .rollout import A3CHyperparams, simulate_episodes

PROTECTED = ("gradient", "gradient×k", "gradient×k split")
CANARIES = {"paper 9.7 vs 9.9": (9.7, 9.9), "wide 5 vs 15": (5.0, 15.0)}


def protected_channels(protect: Sequence[str] = (), compositions: Sequence[int] = ()) -> set[str]:
    """The audited channels a claim covers under the given mitigations."""
    protect = parse_protect(protect)
    out = {"gradient"} | {f"gradient×{k}" for k in compositions} | {f"gradient×{k} split" for k in compositions}
    if "score" in protect:
        out |= {"score"} | {f"score×{k}" for k in compositions}
    if "timing" in protect:
        out |= {"arrival", "arrival-order"}
    if "score" in protect and "timing" in protect:
        out.add("all")
    return out


@dataclass(frozen=True)
class ReleaseStreams:
    """The generators one side's releases draw from: episodes, gradient noise, score noise."""

    episodes: np.random.Generator
    noise: np.random.Generator
    score: np.random.Generator


def pgc_a3c_channel_kinds(compositions: Sequence[int]) -> dict[str, ChannelKind]:
    """The kind of every channel PGC-A3C's participant may release: one submission's gradient, score, arrival tick and
    arrival rank and all of them together; per composition k, k linked gradients (at full ε, or split) and scores."""
    single = ChannelKind.single
    kinds = {
        "gradient": single(ChannelFamily.GRADIENT, "gradient"),
        "score": single(ChannelFamily.SCORE, "score"),
        "arrival": single(ChannelFamily.TIMING, "arrival"),
        "arrival-order": single(ChannelFamily.TIMING, "arrival-order"),
        "all": single(ChannelFamily.ALL, "all"),
    }
    for k in compositions:
        kinds[f"gradient×{k}"] = ChannelKind(ChannelFamily.GRADIENT, k, "gradient")
        kinds[f"gradient×{k} split"] = ChannelKind(ChannelFamily.GRADIENT, k, "gradient split")
        kinds[f"score×{k}"] = ChannelKind(ChannelFamily.SCORE, k, "score")
    return kinds


class PGCA3CSystem:
    """PGC-A3C's participant (see the module docstring)."""

    name = "pgc-a3c"
    joint_layout = ("score", "arrival", "gradient")  # the column order of its own ``all`` channel

    def __init__(
        self,
        mechanism: Mechanism,
        theta: np.ndarray | None = None,
        *,
        hyper: A3CHyperparams | None = None,
        physics: CartPoleParams | None = None,
        workers: int = 9,
        population: Sequence[float] = PAPER_GRAVITIES,
        compositions: Sequence[int] = (),
        order: bool = False,
        exploration: float = 0.0,
        protect: Sequence[str] = (),
        score_epsilon: float | None = None,
        search_settings=None,
    ):
        if not hasattr(mechanism, "epsilon") or not callable(mechanism):
            raise TypeError("mechanism must follow the Mechanism contract (an epsilon and a __call__)")
        self.mechanism = mechanism
        self.hyper = hyper or A3CHyperparams()
        self.physics = physics or CartPoleParams()
        self.protect = parse_protect(protect)
        if "score" in self.protect:
            if score_epsilon is None:
                raise UserError("protect 'score' needs score_epsilon (the score mechanism's ε per submission)")
            self.score_mechanism = ScoreLaplace(score_epsilon, float(self.hyper.cap))
        elif score_epsilon is not None:
            raise UserError("score_epsilon is given but the score channel is not protected")
        else:
            self.score_mechanism = None
        if not isinstance(workers, (int, np.integer)) or workers < 1:
            raise UserError(f"workers must be a positive integer, got {workers!r}")
        if any((not isinstance(k, (int, np.integer))) or k < 2 for k in compositions):
            raise UserError("compositions must be integers >= 2")
        self.workers, self.population = int(workers), tuple(float(p) for p in population)
        self.compositions, self.order, self.exploration = tuple(int(k) for k in compositions), bool(order), exploration
        self.search_settings = search_settings
        if theta is None:  # an initial model (Glorot, seed 0), as the trainer starts
            theta = glorot_uniform_theta(np.random.default_rng(0), self.hyper.biases)
        self.theta = self._check_theta(theta)
        total = float(mechanism.epsilon) + (self.score_mechanism.epsilon if self.score_mechanism else 0.0)
        self.claim = PrivacyClaim(
            total,
            claimed_delta(mechanism),
            tuple(sorted(protected_channels(self.protect, self.compositions))),
            gdp_mu=None if self.score_mechanism else mechanism_gdp_mu(mechanism),
        )
        channels = ["gradient", "score", "arrival"] + (["arrival-order"] if self.order and self.workers > 1 else [])
        for k in self.compositions:
            channels += [f"gradient×{k}", f"gradient×{k} split", f"score×{k}"]
        self.channels = tuple(channels + ["all"])
        self.channel_kinds = pgc_a3c_channel_kinds(self.compositions)

    # -- the contract --------------------------------------------------------------------------

    def claim_for(self, channel: str) -> PrivacyClaim:
        eps, delta = self.claim.epsilon, self.claim.delta
        if channel.startswith("gradient×") and not channel.endswith("split"):
            k = int(channel.split("×")[1])
            mu = None if self.claim.gdp_mu is None else self.claim.gdp_mu * math.sqrt(k)  # k releases compose to √k·μ
            return PrivacyClaim(eps * k, min(delta * k, 0.999999), self.claim.covers, mu)
        if channel.startswith("gradient×") and self.claim.gdp_mu is not None:  # k rounds at (ε/k, δ/k): √k·μ_round
            k = int(channel.split("×")[1].split()[0])
            return PrivacyClaim(
                eps, delta, self.claim.covers, math.sqrt(k) * mechanism_gdp_mu(split_rounds(self.mechanism, k))
            )
        if channel.startswith("score×") and self.score_mechanism is not None:
            return PrivacyClaim(eps * int(channel.split("×")[1]), delta, self.claim.covers)
        return self.claim

    def release(
        self,
        secret: float,
        n: int,
        rng: np.random.Generator | None,
        *,
        broadcast=None,
        streams: ReleaseStreams | None = None,
    ) -> dict[str, np.ndarray]:
        """n releases of an agent with gravity ``secret`` at model ``broadcast`` (None: the system's θ).
        ``streams`` names the three generators to draw from; without it they are spawned from ``rng``."""
        psi = _check_gravity(secret)
        theta = self.theta if broadcast is None else self._check_theta(broadcast)
        if streams is None:
            episodes_rng, noise_rng, score_rng, order_rng = rng.spawn(4)
            streams = ReleaseStreams(episodes_rng, noise_rng, score_rng)
        else:
            order_rng = None
        batch = self._episodes(theta, psi, n, streams.episodes)
        noisy = np.asarray(self.mechanism(batch.gradients, streams.noise), dtype=np.float32)  # as the transcript
        true_scores = batch.scores.astype(np.float64)[:, None]
        scores = true_scores if self.score_mechanism is None else self.score_mechanism(true_scores, streams.score)
        arrival = np.full_like(true_scores, float(self.hyper.cap)) if "timing" in self.protect else 0.0 + true_scores
        out = {
            "gradient": noisy,
            "score": scores,
            "arrival": arrival,
            "all": np.concatenate([scores, arrival, noisy], axis=1).astype(np.float32),
        }
        for k in self.compositions:
            more = self._episodes(theta, psi, n * (k - 1), streams.episodes)
            grads = np.concatenate([batch.gradients[None], more.gradients.reshape(k - 1, n, -1)])
            sc = np.concatenate([batch.scores[None], more.scores.reshape(k - 1, n)]).T.astype(np.float64)
            out[f"gradient×{k}"] = np.concatenate(
                [self.mechanism(grads[i], streams.noise) for i in range(k)], axis=1
            ).astype(np.float32)
            per_round = split_rounds(self.mechanism, k)
            out[f"gradient×{k} split"] = np.concatenate(
                [per_round(grads[i], streams.noise) for i in range(k)], axis=1
            ).astype(np.float32)
            out[f"score×{k}"] = sc if self.score_mechanism is None else self.score_mechanism(sc, streams.score)
        if "arrival-order" in self.channels and order_rng is not None:
            out["arrival-order"] = self.arrival_order(psi, n, order_rng, broadcast=theta)
        return out

    # -- optional members ----------------------------------------------------------------------

    def arrival_order(self, secret: float, n: int, rng: np.random.Generator, *, broadcast=None) -> np.ndarray:
        """(n, 1) ranks of the agent's arrival among W workers started at the same tick."""
        psi = _check_gravity(secret)
        theta = self.theta if broadcast is None else self._check_theta(broadcast)
        if "timing" in self.protect:  # all W arrive in the same tick; the target's place is uniform
            self._episodes(theta, psi, n, rng)  # (played: the episodes exist, their lengths are not seen)
            return rng.integers(0, self.workers, size=n).astype(np.float64)[:, None]
        target = self._episodes(theta, psi, n, rng).scores
        others_psi = rng.choice(np.asarray(self.population, dtype=np.float64), size=n * (self.workers - 1))
        others = simulate_episodes(
            theta,
            physics_array(others_psi.size, self.physics, gravity=others_psi),
            rng,
            alpha=self.exploration,
            hyper=self.hyper,
        ).scores.reshape(n, self.workers - 1)
        return arrival_rank(target, others, rng)[:, None]

    def crafted_broadcasts(self, secret: float, secret_prime: float, rng: np.random.Generator) -> list[np.ndarray]:
        """θ crafted for this pair: the gradient objective's and the score objective's (:mod:`pgc.a3c.crafted`)."""
        from .crafted import SEARCH_CHANNELS, search_crafted_model
        from .model import with_zero_biases

        seqs = np.random.SeedSequence(int(rng.integers(2**63))).spawn(len(SEARCH_CHANNELS))
        return [
            with_zero_biases(
                search_crafted_model(
                    _check_gravity(secret),
                    _check_gravity(secret_prime),
                    objective=objective,
                    settings=self.search_settings,
                    seed=seq,
                    physics=self.physics,
                    hyper=self.hyper,
                ).theta,
                self.hyper.biases,
            )
            for objective, seq in zip(SEARCH_CHANNELS, seqs, strict=True)
        ]

    def canaries(self) -> dict[str, tuple[float, float]]:
        return dict(CANARIES)

    def dp_event(self):
        return mechanism_event(self.mechanism)

    def describe_secret(self, secret: float) -> str:
        return f"ψ={float(secret):g}"

    # -- helpers -------------------------------------------------------------------------------

    def _episodes(self, theta: np.ndarray, psi: float, n: int, rng: np.random.Generator):
        return simulate_episodes(
            theta, physics_array(n, self.physics, gravity=psi), rng, alpha=self.exploration, hyper=self.hyper
        )

    def _check_theta(self, theta) -> np.ndarray:
        theta = np.asarray(theta, dtype=np.float64)
        want = self.hyper.dim
        if theta.shape != (want,) or not np.all(np.isfinite(theta)):
            raise UserError(
                f"a PGC-A3C broadcast is a finite model θ of shape ({want},) for a model "
                f"{'with' if self.hyper.biases else 'without'} biases (A3CHyperparams.biases="
                f"{bool(self.hyper.biases)}), got shape {theta.shape}"
            )
        return theta


def arrival_rank(target_scores: np.ndarray, other_scores: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Rank (0 = first) of the target among W concurrent workers started at the same tick.

    ``other_scores`` is (n, W−1); the target's worker slot is uniform, ties go to the lower slot.
    """
    n, others = other_scores.shape
    slot = rng.integers(0, others + 1, size=n)
    before = (other_scores < target_scores[:, None]).sum(axis=1)
    ties = other_scores == target_scores[:, None]
    # among tied others, those with a lower slot arrive first: the others' slots are a random
    # permutation of the remaining W−1 slots, so each tied other is below the target w.p. slot/W−1
    tied_before = rng.binomial(ties.sum(axis=1), slot / max(others, 1))
    return (before + tied_before).astype(np.float64)


def _check_gravity(secret) -> float:
    try:
        psi = float(secret)
    except (TypeError, ValueError):
        raise UserError(f"a PGC-A3C secret is a gravity ψ (a number), got {secret!r}") from None
    if not math.isfinite(psi):
        raise UserError(f"a PGC-A3C secret is a finite gravity ψ, got {secret!r}")
    return psi


def pgc_a3c_system(
    mechanism: str = "laplace", epsilon: float = 1.0, delta: float | None = None, theta_seed: int = 0
) -> PGCA3CSystem:
    """A ready PGC-A3C system (``pgc audit --system pgc.a3c.system:pgc_a3c_system``): the paper's
    Laplace mechanism at ε = 1 (C = 0.01) at an initial model (Glorot, ``theta_seed``)."""
    from pgc.mechanisms import make_mechanism

    hyper = A3CHyperparams()
    theta = glorot_uniform_theta(np.random.default_rng(theta_seed), hyper.biases)
    return PGCA3CSystem(make_mechanism(mechanism, epsilon, delta=delta), theta, hyper=hyper)


def pgc_a3c_gaussian_system() -> PGCA3CSystem:
    """PGC-A3C with the analytic Gaussian mechanism at (2, 1e-5) (C = 0.01) at an initial model
    (``pgc audit --system pgc.a3c.system:pgc_a3c_gaussian_system``)."""
    return pgc_a3c_system("gaussian-analytic", 2.0, 1e-5)
