"""The crafted family of PGC-A3C models and its search: what an adversarial aggregator broadcasts.

In LDP the aggregator is the adversary and it broadcasts the model every agent plays, so a claimed ε
must hold for every θ it could send. The tight audit therefore searches θ for the strongest
distinguisher of two environments ψ, ψ' that the threat model allows (Nasr et al. 2021, 2023;
Jagielski et al. 2020), and certifies it on fresh episodes with the usual protocol.

The crafted family
------------------
The network has 16 bias-free ReLU units. The crafted θ uses four of them:

* **controller** (units 0, 1): rows ±k and a huge policy weight make the greedy action
  a = 1[k·s > 0] — a linear bang-bang controller. Its logits are saturated (gap ≈ 10⁶·|k·s|), so
  the policy-gradient and entropy terms vanish. Some k balance the pole at one gravity and let it
  fall at the other: the episode's fate (and the score) then depends on ψ.
* **value-flip detector** (units 2, 3): rows ±S·w (S = 10⁴) and value weights κ = τ/S, so
  V(s) = τ·|w·s|. Their value gradients −2λ Σ_t A_t ReLU(±S w·s_t) dominate the gradient (S is
  large; every other coordinate scales with 1 or with κ ≪ 1), so after any L1 clip the
  submission points along ±(e₉₈ + e₉₉). Their sign is that of
      Σ_t (V̂_t − τ|w·s_t|)·|w·s_t|,
  a linear term in the state's amplitude against a quadratic one: negative while the pole stays
  balanced (small |w·s|, large returns V̂), positive when it falls (large |w·s| near the end, where
  V̂ is small). The value head flips the advantage's sign exactly when the episode fails, so the
  clipped gradient is ≈ −(C/2)·(r, 1 − r) in one environment and ≈ +(C/2)·(r', 1 − r') in the other:
  at L1 distance ≈ C, the most a sensitivity-C mechanism allows (Laplace privacy loss ε·‖Δ‖₁/C).

The search first ranks bang-bang controllers by how differently their scores are distributed
(a random screen, then CMA-ES over k, candidates re-ranked on validation episodes); the score
objective stops there. The gradient objective then gives the best controllers a value-flip detector
(a random screen of (w, τ)) and refines all nine numbers (k, w, log₁₀ τ) with CMA-ES (the ``cmaes``
package). Objectives are computed on simulated episodes from the SEARCH stream of the
run's seed, with common random numbers (the same seed for every candidate of a generation); the
certification draws fresh episodes from another stream, so the search is selection done on data the
bound never sees: the α of the certified bound is spent once, on the fresh samples.

Objectives (mechanism-agnostic: they look at clean gradients, before any mechanism):

* ``gradient`` — the signed detector share t = (g₉₈ + g₉₉)/‖g‖₁ ∈ [−1, 1] of each episode;
  score = W₁(t, t') + max(0, robust separation)/2, where W₁ is the 1-Wasserstein distance of the
  two sides' shares (2 = all at opposite corners) and the robust separation is the gap between
  their 2 % and 98 % quantiles. W₁ drives the search while the sides overlap, the quantile gap once
  they are apart (what an ε-test's tail needs). Both are in units of t: the L1 distance a noisy
  mechanism's test can see.
* ``score`` — Kolmogorov–Smirnov distance between the two score distributions (a plug-in total
  variation over 201 bins is dominated by its own noise at a few hundred episodes).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from pgc.errors import UserError
from pgc.optim import cmaes_maximize

from .env import CartPoleParams, physics_array
from .model import DIM, SLICE_VALUE, with_zero_biases
from .rollout import A3CHyperparams, simulate_episodes

CONTROLLER_UNITS = (0, 1)
DETECTOR_UNITS = (2, 3)
DETECTOR_COORDINATES = tuple(SLICE_VALUE.start + u for u in DETECTOR_UNITS)  # θ(v) of the detectors
DETECTOR_SCALE = 1e4  # S: detector rows dominate the gradient's L1 norm
LOGIT_SCALE = 1e6  # policy weight of the controller: saturated greedy actions
LOG_THRESHOLD_RANGE = (-1.0, 5.0)  # log10 τ
SEARCH_CHANNELS = ("gradient", "score")
WORST_PAIR_SEARCH_KEY = 0x70616972  # "pair": the spawn key of the worst-pair search's streams (no spawn() reaches it)

# ---------------------------------------------------------------------------------------------
# The crafted family (pure functions)
# ---------------------------------------------------------------------------------------------


def crafted_theta(
    controller: Sequence[float],
    detector: Sequence[float],
    log10_threshold: float,
    *,
    detector_scale: float = DETECTOR_SCALE,
    logit_scale: float = LOGIT_SCALE,
) -> np.ndarray:
    """θ (canonical 112-vector) of the crafted family; see the module docstring. A model with biases
    plays it with zero biases (:func:`pgc.a3c.model.with_zero_biases`): the same network function."""
    k = np.asarray(controller, dtype=np.float64)
    w = np.asarray(detector, dtype=np.float64)
    if k.shape != (4,) or w.shape != (4,) or not (np.all(np.isfinite(k)) and np.all(np.isfinite(w))):
        raise UserError("controller and detector must be four finite numbers each")
    norm = np.abs(w).sum()
    if norm == 0 or np.abs(k).sum() == 0:
        raise UserError("controller and detector must not be zero")
    if not math.isfinite(log10_threshold):
        raise UserError("log10_threshold must be finite")
    theta = np.zeros(DIM)
    common = theta[:64].reshape(16, 4)
    policy = theta[64:96].reshape(2, 16)
    value = theta[SLICE_VALUE]
    a, b = CONTROLLER_UNITS
    common[a], common[b] = k, -k
    policy[1, a] = logit_scale  # z1 − z0 = logit_scale·(ReLU(k·s) − ReLU(−k·s)) = logit_scale·k·s
    policy[0, b] = logit_scale
    c, d = DETECTOR_UNITS
    common[c], common[d] = detector_scale * w / norm, -detector_scale * w / norm
    value[c] = value[d] = 10.0**log10_threshold / detector_scale  # V(s) = τ·|w·s|/‖w‖₁
    return theta


def theta_from_vector(x: np.ndarray) -> np.ndarray:
    """The 9-number search vector (k, w, log₁₀ τ) → θ."""
    x = np.asarray(x, dtype=np.float64)
    w = x[4:8] if np.abs(x[4:8]).sum() > 0 else np.ones(4)
    return crafted_theta(x[:4], w, float(np.clip(x[8], *LOG_THRESHOLD_RANGE)))


def detector_share(gradients: np.ndarray) -> np.ndarray:
    """Signed share t = (g₉₈ + g₉₉)/‖g‖₁ of the detectors in each (clean) gradient; 0 for non-finite rows."""
    g = np.asarray(gradients, dtype=np.float64)
    finite = np.all(np.isfinite(g), axis=1)
    norm = np.where(finite, np.abs(np.where(finite[:, None], g, 0.0)).sum(axis=1), 0.0)
    top = g[:, list(DETECTOR_COORDINATES)].sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(finite & (norm > 0), top / np.where(norm > 0, norm, 1.0), 0.0)


def ks_distance(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sample Kolmogorov–Smirnov distance sup_t |F_a(t) − F_b(t)|."""
    a, b = np.sort(np.asarray(a, np.float64)), np.sort(np.asarray(b, np.float64))
    grid = np.concatenate([a, b])
    fa = np.searchsorted(a, grid, side="right") / a.size
    fb = np.searchsorted(b, grid, side="right") / b.size
    return float(np.max(np.abs(fa - fb)))


def quantile_separation(a: np.ndarray, b: np.ndarray, q: float = 0.02) -> float:
    """Gap between the sides' q and 1 − q quantiles, in the better orientation (> 0: apart)."""
    qa = np.quantile(a, [q, 1 - q])
    qb = np.quantile(b, [q, 1 - q])
    return float(max(qa[0] - qb[1], qb[0] - qa[1]))


def wasserstein_1(a: np.ndarray, b: np.ndarray) -> float:
    """1-Wasserstein distance of two equal-size samples: mean |sorted(a) − sorted(b)|."""
    a, b = np.sort(np.asarray(a, np.float64)), np.sort(np.asarray(b, np.float64))
    if a.size != b.size:
        raise UserError("wasserstein_1 needs samples of equal size")
    return float(np.abs(a - b).mean())


def gradient_objective(t_pos: np.ndarray, t_neg: np.ndarray) -> float:
    """W₁ + max(0, robust separation)/2 ∈ [0, 3] of the detector shares (module docstring).

    Both terms are measured in units of the share itself, which is what a noisy mechanism's test
    sees: a rank statistic such as KS would reward differences in the fifth decimal that no noise
    level lets through."""
    return wasserstein_1(t_pos, t_neg) + 0.5 * max(0.0, quantile_separation(t_pos, t_neg))


# ---------------------------------------------------------------------------------------------
# The search
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SearchSettings:
    """Budget of the crafted-model search (episodes are per side and per evaluation)."""

    screen_controllers: int = 400  # random bang-bang controllers screened by score separation
    screen_episodes: int = 500
    generations: int = 40  # CMA-ES generations of the gradient search
    population: int = 12
    episodes: int = 400
    restarts: int = 2  # gradient searches started from the best screened controllers
    detector_screen: int = 40  # random (detector, threshold) pairs tried per restart before CMA-ES
    exploration: float = 0.0

    def __post_init__(self) -> None:
        for name in (
            "screen_controllers",
            "screen_episodes",
            "generations",
            "population",
            "episodes",
            "restarts",
            "detector_screen",
        ):
            value = getattr(self, name)
            if not isinstance(value, (int, np.integer)) or value < 1:
                raise UserError(f"SearchSettings.{name} must be a positive integer, got {value!r}")
        if self.screen_episodes > 100_000 or self.episodes > 100_000 or self.screen_controllers > 100_000:
            raise UserError("search episode counts are limited to 100,000")
        if not (0.0 <= self.exploration <= 1.0):
            raise UserError("exploration must lie in [0, 1]")

    def to_dict(self) -> dict:
        return dict(self.__dict__)


QUICK_SEARCH = SearchSettings(
    screen_controllers=100,
    screen_episodes=300,
    generations=15,
    population=10,
    episodes=250,
    restarts=1,
    detector_screen=20,
)  # wide pairs; about a quarter of the time


@dataclass
class SearchResult:
    """The crafted θ of one objective, with how it was found."""

    objective: str
    theta: np.ndarray
    vector: np.ndarray  # (k, w, log10 τ); the score search leaves w, τ at their defaults
    value: float  # the objective of the chosen θ on the validation episodes (search stream)
    evaluations: int
    wall_time_s: float
    history: list[float] = field(default_factory=list)  # best value per generation

    def to_dict(self) -> dict:
        return {
            "objective": self.objective,
            "value": self.value,
            "evaluations": self.evaluations,
            "wall_time_s": self.wall_time_s,
            "vector": self.vector.tolist(),
            "history": self.history,
        }


class _Simulator:
    """Plays episodes at a candidate θ for both sides with common random numbers per call site."""

    def __init__(
        self, psi: float, psi_prime: float, physics: CartPoleParams, hyper: A3CHyperparams, exploration: float
    ):
        self.psi, self.psi_prime = psi, psi_prime
        self.physics, self.hyper, self.exploration = physics, hyper, exploration

    def play(self, theta: np.ndarray, n: int, seed: np.random.SeedSequence):
        theta = with_zero_biases(theta, self.hyper.biases)  # the crafted family sets weights only
        pos_seq, neg_seq = seed.spawn(2)
        out = []
        for g, s in ((self.psi, pos_seq), (self.psi_prime, neg_seq)):
            out.append(
                simulate_episodes(
                    theta,
                    physics_array(n, self.physics, gravity=g),
                    np.random.Generator(np.random.PCG64(s)),
                    alpha=self.exploration,
                    hyper=self.hyper,
                )
            )
        return out


def _random_controllers(rng: np.random.Generator, n: int) -> np.ndarray:
    """Half with the balancing sign pattern (push towards the pole's lean), half unrestricted."""
    k = rng.normal(size=(n, 4))
    k[: n // 2, 2:] = np.abs(k[: n // 2, 2:])
    return k


def _seed_of(seq: np.random.SeedSequence) -> int:
    return int(seq.generate_state(1, np.uint32)[0])


def _copy(seed: np.random.SeedSequence) -> np.random.SeedSequence:
    """A fresh SeedSequence of the same stream: :meth:`_Simulator.play` spawns from the one it is given, so every call
    that must play the same episodes as another (common random numbers) gets its own copy."""
    return np.random.SeedSequence(seed.entropy, spawn_key=seed.spawn_key)


def screen_controllers(sim: _Simulator, settings: SearchSettings, seq: np.random.SeedSequence) -> np.ndarray:
    """Random bang-bang controllers, best first by the KS distance of their score distributions."""
    rng_seq, crn = seq.spawn(2)
    ks = _random_controllers(np.random.Generator(np.random.PCG64(rng_seq)), settings.screen_controllers)
    separation = np.empty(len(ks))
    for i, k in enumerate(ks):
        theta = crafted_theta(k, np.ones(4), 2.0)
        a, b = sim.play(theta, settings.screen_episodes, _copy(crn))
        separation[i] = ks_distance(a.scores, b.scores)
    return ks[np.argsort(-separation, kind="stable")]


def search_crafted_model(
    psi: float,
    psi_prime: float,
    *,
    objective: str = "gradient",
    settings: SearchSettings | None = None,
    seed: int | np.random.SeedSequence = 0,
    physics: CartPoleParams | None = None,
    hyper: A3CHyperparams | None = None,
) -> SearchResult:
    """Search the crafted family for the θ that best separates ψ from ψ' through ``objective``."""
    if objective not in SEARCH_CHANNELS:
        raise UserError(f"objective must be one of {SEARCH_CHANNELS}, got {objective!r}")
    check_pair(psi, psi_prime)
    settings = settings or SearchSettings()
    hyper = hyper or A3CHyperparams()
    start = time.perf_counter()
    root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    screen_seq, search_seq, final_seq = root.spawn(3)
    sim = _Simulator(psi, psi_prime, physics or CartPoleParams(), hyper, settings.exploration)
    ks = screen_controllers(sim, settings, screen_seq)
    # validation episodes: 10× as many, from their own stream (no winner's curse)
    validation = np.random.SeedSequence(final_seq.entropy, spawn_key=final_seq.spawn_key + (1,))
    ranked, best_score, evals, history = _rank_controllers(sim, ks, settings, search_seq, validation)
    if objective == "score":
        x = ranked[0]
        vector = np.concatenate([x, np.ones(4), [2.0]])
        return SearchResult(
            "score",
            crafted_theta(x, np.ones(4), 2.0),
            vector,
            best_score,
            len(ks) + evals,
            time.perf_counter() - start,
            history,
        )
    x, value, detector_evals, detector_history = _search_detector(
        sim, ranked, settings, search_seq, final_seq, validation
    )
    return SearchResult(
        "gradient",
        theta_from_vector(x),
        x,
        value,
        len(ks) + evals + detector_evals,
        time.perf_counter() - start,
        history + detector_history,
    )


def _rank_controllers(
    sim: _Simulator,
    ks: np.ndarray,
    settings: SearchSettings,
    search_seq: np.random.SeedSequence,
    validation: np.random.SeedSequence,
) -> tuple[list[np.ndarray], float, int, list[float]]:
    """Stage 1 (both objectives): controllers whose score distributions differ most — the screened ones
    and CMA-ES refinements of the best — ranked by the score KS on validation episodes."""

    def score_fun(x, gen):
        a, b = sim.play(
            crafted_theta(x, np.ones(4), 2.0),
            settings.episodes,
            np.random.SeedSequence(search_seq.entropy, spawn_key=search_seq.spawn_key + (gen,)),
        )
        return ks_distance(a.scores, b.scores)

    def validate_score(theta: np.ndarray) -> float:
        a, b = sim.play(theta, 10 * settings.episodes, _copy(validation))
        return ks_distance(a.scores, b.scores)

    controllers = list(ks[:10])
    history: list[float] = []
    evals = 0
    for r in range(settings.restarts):
        found = cmaes_maximize(
            score_fun,
            ks[r % len(ks)],
            0.2,
            generations=max(1, settings.generations // 2),
            population=settings.population,
            seed=_seed_of(search_seq) + r,
            stop_early=True,
        )
        evals += found.evaluations
        history += found.history
        controllers.append(found.best_x)
    score_values = np.array([validate_score(crafted_theta(x, np.ones(4), 2.0)) for x in controllers])
    ranked = [controllers[i] for i in np.argsort(-score_values, kind="stable")]
    return ranked, float(score_values.max()), evals + len(controllers), history


def _search_detector(
    sim: _Simulator,
    ranked: list[np.ndarray],
    settings: SearchSettings,
    search_seq: np.random.SeedSequence,
    final_seq: np.random.SeedSequence,
    validation: np.random.SeedSequence,
) -> tuple[np.ndarray, float, int, list[float]]:
    """Stage 2 (gradient): for the best controllers, a value-flip detector: a random screen of
    (detector, threshold), then CMA-ES over all nine numbers; the best on validation episodes."""

    def grad_fun(x, gen):
        a, b = sim.play(
            theta_from_vector(x),
            settings.episodes,
            np.random.SeedSequence(search_seq.entropy, spawn_key=search_seq.spawn_key + (1_000 + gen,)),
        )
        return gradient_objective(detector_share(a.gradients), detector_share(b.gradients))

    bounds = np.array([[-10.0, 10.0]] * 8 + [list(LOG_THRESHOLD_RANGE)])
    wrng = np.random.Generator(np.random.PCG64(final_seq))
    candidates, history, evals = [], [], 0
    for r in range(settings.restarts):
        starts = []
        for _ in range(settings.detector_screen):
            w0 = wrng.normal(size=4)
            starts.append(np.concatenate([ranked[r % len(ranked)], w0 / np.abs(w0).sum(), [wrng.uniform(0.0, 4.0)]]))
        crn = np.random.SeedSequence(search_seq.entropy, spawn_key=search_seq.spawn_key + (10_000 + r,))
        values = []
        for x in starts:
            a, b = sim.play(theta_from_vector(x), settings.screen_episodes // 2, _copy(crn))
            values.append(gradient_objective(detector_share(a.gradients), detector_share(b.gradients)))
        evals += len(starts)
        x0 = starts[int(np.argmax(values))]
        candidates.append(x0)
        found = cmaes_maximize(
            grad_fun,
            x0,
            0.3,
            generations=settings.generations,
            population=settings.population,
            seed=_seed_of(search_seq) + 100 + r,
            bounds=bounds,
            stop_early=True,
        )
        evals += found.evaluations
        history += found.history
        x = found.best_x
        candidates.append(np.concatenate([x[:8], [float(np.clip(x[8], *LOG_THRESHOLD_RANGE))]]))
    validated = []
    for x in candidates:
        a, b = sim.play(theta_from_vector(x), 10 * settings.episodes, _copy(validation))
        validated.append(gradient_objective(detector_share(a.gradients), detector_share(b.gradients)))
    best = int(np.argmax(validated))
    return candidates[best], float(validated[best]), evals + len(candidates), history


def check_pair(psi: float, psi_prime: float) -> None:
    if (
        not (isinstance(psi, (int, float)) and isinstance(psi_prime, (int, float)))
        or not (math.isfinite(psi) and math.isfinite(psi_prime))
        or psi == psi_prime
    ):
        raise UserError(f"need two different finite gravities, got {psi!r} and {psi_prime!r}")


# ---------------------------------------------------------------------------------------------
# Worst pair in a range
# ---------------------------------------------------------------------------------------------


@dataclass
class WorstPairResult:
    psi: float
    psi_prime: float
    value: float  # the search objective at the chosen pair (search stream)
    trials: list[dict]
    wall_time_s: float


def worst_pair_search(
    lo: float,
    hi: float,
    *,
    objective: str = "gradient",
    trials: int = 12,
    min_distance: float = 0.0,
    max_distance: float | None = None,
    seed: int = 0,
    settings: SearchSettings | None = None,
    physics: CartPoleParams | None = None,
    hyper: A3CHyperparams | None = None,
) -> WorstPairResult:
    """Optuna (TPE) search of the pair ψ < ψ' in [lo, hi] that the crafted model separates best.

    Each trial runs a short crafted-model search (a quarter of ``settings``' budget) on the search
    stream; the caller certifies the chosen pair on fresh samples (:func:`adversarial_audit`).
    """
    import optuna

    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise UserError(f"need a range lo < hi, got {lo!r}..{hi!r}")
    width = hi - lo if max_distance is None else min(max_distance, hi - lo)
    if not 0 <= min_distance < width:
        raise UserError("min_distance must be >= 0 and below the largest distance the range allows")
    if not isinstance(trials, (int, np.integer)) or not 1 <= trials <= 1000:
        raise UserError("trials must be an integer in [1, 1000]")
    settings = settings or SearchSettings()
    quick = SearchSettings(
        screen_controllers=max(20, settings.screen_controllers // 4),
        screen_episodes=settings.screen_episodes,
        generations=max(5, settings.generations // 4),
        population=settings.population,
        episodes=settings.episodes,
        restarts=1,
        detector_screen=max(5, settings.detector_screen // 4),
        exploration=settings.exploration,
    )
    start = time.perf_counter()
    root = np.random.SeedSequence(seed)
    # the search's own streams, under a spawn key no child of SeedSequence(seed) has: the audit that certifies the
    # chosen pair draws from SeedSequence(seed)'s children, so no trial may share one of them
    sampler_seed = _seed_of(np.random.SeedSequence(root.entropy, spawn_key=(WORST_PAIR_SEARCH_KEY,)))
    records: list[dict] = []

    def run(trial: optuna.Trial) -> float:
        a = trial.suggest_float("psi", lo, hi - min_distance)
        gap = (
            trial.suggest_float("distance", min_distance, min(width, hi - a))
            if min(width, hi - a) > min_distance
            else min_distance
        )
        b = a + gap
        if b == a:
            return 0.0
        res = search_crafted_model(
            a,
            b,
            objective=objective,
            settings=quick,
            seed=np.random.SeedSequence(root.entropy, spawn_key=(WORST_PAIR_SEARCH_KEY, 1, trial.number)),
            physics=physics,
            hyper=hyper,
        )
        records.append({"psi": a, "psi_prime": b, "value": res.value, "evaluations": res.evaluations})
        return res.value

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="maximize", sampler=optuna.samplers.TPESampler(seed=sampler_seed))
    study.optimize(run, n_trials=trials)
    best = max(records, key=lambda r: r["value"])
    return WorstPairResult(best["psi"], best["psi_prime"], best["value"], records, time.perf_counter() - start)


def canary_model(
    pair, hyper_fields: dict | None, *, theta_file: str | None = None, quick: bool = False, seed: int = 0
) -> np.ndarray:
    """The crafted model the canary agents play (``pgc train --canary-model crafted``): ``theta_file`` (a
    checkpoint or .npy, read as weights only), or the crafted family's search for ``pair`` on the gradient
    objective (``quick``: :data:`QUICK_SEARCH`), seeded by ``seed``, with the run's A3C settings
    ``hyper_fields``."""
    from pathlib import Path

    from .model import load_checkpoint, with_zero_biases
    from .rollout import A3CHyperparams

    if theta_file:
        path = Path(theta_file)
        if not path.is_file():
            raise UserError(f"--canary-theta {path} does not exist")
        try:
            theta = np.load(path, allow_pickle=False) if path.suffix == ".npy" else load_checkpoint(path)
        except Exception as exc:  # any unreadable file: one line
            first = str(exc).splitlines()[0] if str(exc) else exc
            raise UserError(f"--canary-theta {path} is not a model: {first}") from exc
        return np.asarray(theta, dtype=np.float64).ravel()
    if not pair or len(pair) != 2:
        raise UserError("--canary-model crafted needs --canary-pair PSI:PSI_PRIME")
    from pgc.tasks.progress import progress_line

    hyper = A3CHyperparams(**{k: v for k, v in (hyper_fields or {}).items()})
    progress_line(f"searching a crafted model for the canary pair {pair[0]:g} vs {pair[1]:g} ...")
    result = search_crafted_model(
        float(pair[0]),
        float(pair[1]),
        objective="gradient",
        settings=QUICK_SEARCH if quick else None,
        seed=np.random.SeedSequence(seed),
        hyper=hyper,
    )
    return with_zero_biases(result.theta, hyper.biases)
