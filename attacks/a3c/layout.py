"""Crafted layouts: a θ whose clipped gradient for each candidate ψ lands where the Laplace test wants it.

The Laplace mechanism's privacy loss between two clipped gradients is ε·‖Δ‖₁/C, and a Bayes test
gains most when that L1 distance sits on as few coordinates as possible: two classes at ±(C/2)·e₁
("opposite") reach 1 − ½e^{−ε/2}; for three classes the best layout found is (C/2)·{e₁, −e₁, e₂}
("diamond": 0.495 at ε = 1; every pair at L1 distance C on two coordinates).
The audit's crafted family (:mod:`pgc.audits.adversarial`) puts each class on ±(C/2)·(r, 1 − r) over two
value coordinates (a two-sided detector |w·s| whose halves each own a coordinate), which halves the
per-coordinate distance. The layout family here keeps the controller and the value-flip idea but:

* **controller** (units 0, 1): z₁ = L·ReLU(k₁·s), z₀ = L·ReLU(k₀·s) with L = 10⁶ — greedy action
  a = 1[k₁·s > k₀·s on the active part]; k₀ = −k₁ is the audit's odd bang-bang controller, k₀ ≠ −k₁
  breaks the left/right symmetry, so failing episodes can fall to one side;
* **detectors** (units 2, 3, …, one per layout axis): row S·σ_u·w_u/‖w_u‖₁ (S = 10⁴, gain σ_u) and
  value weight τ_u/(S·σ_u), so V(s) = Σ_u τ_u·ReLU(w_u·s)/‖w_u‖₁ whatever the gains. Each detector
  is one-sided and owns one value coordinate θ(v)_u, whose gradient −2λ Σ_t A_t·S·σ_u·ReLU(w_u·s_t)/‖w_u‖₁
  dominates the L1 norm (σ_u sets each detector's share); its sign is that of
  Σ_t (V̂_t − V(s_t))·ReLU(w_u·s_t): a return term against a quadratic one, flipping when the
  episode's fate (balanced, falling early, falling late, to which side) changes.

The search maximises the exact Bayes accuracy of the Laplace mechanism at the attack's ε given the
candidates' clipped gradients on the detector coordinates (:func:`laplace_bayes_accuracy`, a grid
integral of the mixture densities): controllers are screened by how well the episode length alone
tells the candidates apart, random detectors are screened with the best of them, CMA-ES (``cmaes``)
refines all numbers on episodes of the search stream with common random numbers, and the finalists
are re-ranked on validation episodes of another stream.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.stats import laplace as laplace_dist

import pgc.schemas as schemas
from pgc.a3c.env import CartPoleParams, physics_array
from pgc.a3c.model import DIM, SLICE_VALUE, with_zero_biases
from pgc.a3c.rollout import A3CHyperparams, simulate_episodes
from pgc.errors import UserError
from pgc.files import write_json_atomic
from pgc.mechanisms import l1_clip
from pgc.optim import cmaes_maximize

LAYOUT_DETECTOR_SCALE = 1e4  # S
LAYOUT_LOGIT_SCALE = 1e6  # L
LAYOUT_LOG_THRESHOLD_RANGE = (-1.0, 5.0)  # log10 τ
LAYOUT_LOG_GAIN_RANGE = (-1.5, 1.0)  # log10 σ
FIRST_DETECTOR_UNIT = 2
MAX_AXES = 2  # detectors (layout axes) the grid integral handles


def layout_theta(
    right: Sequence[float],
    left: Sequence[float],
    detectors: Sequence[Sequence[float]],
    log10_thresholds: Sequence[float],
    log10_gains: Sequence[float] | None = None,
) -> np.ndarray:
    """θ (112-vector) of the layout family: controller rows ``right`` (k₁) and ``left`` (k₀), one
    one-sided detector per row of ``detectors`` with threshold 10^``log10_thresholds[u]`` and gradient
    gain σ_u = 10^``log10_gains[u]`` (default 1): row S·σ_u·w_u/‖w_u‖₁, value weight τ_u/(S·σ_u), so
    V is unchanged and the detector's value gradient scales with σ_u."""
    k1, k0 = np.asarray(right, np.float64), np.asarray(left, np.float64)
    w = np.atleast_2d(np.asarray(detectors, np.float64))
    tau = np.atleast_1d(np.asarray(log10_thresholds, np.float64))
    gains = np.zeros(len(w)) if log10_gains is None else np.atleast_1d(np.asarray(log10_gains, np.float64))
    if (
        k1.shape != (4,)
        or k0.shape != (4,)
        or w.shape[1:] != (4,)
        or not 1 <= len(w) <= 14
        or tau.shape != (len(w),)
        or gains.shape != (len(w),)
    ):
        raise UserError(
            "need two controller rows of 4 numbers, 1..14 detector rows of 4, one threshold and one gain per detector"
        )
    if not all(np.all(np.isfinite(a)) for a in (k1, k0, w, tau, gains)):
        raise UserError("layout parameters must be finite")
    norms = np.abs(w).sum(axis=1)
    if np.any(norms == 0) or (np.abs(k1).sum() == 0 and np.abs(k0).sum() == 0):
        raise UserError("controller and detectors must not be zero")
    theta = np.zeros(DIM)
    common = theta[:64].reshape(16, 4)
    policy = theta[64:96].reshape(2, 16)
    value = theta[SLICE_VALUE]
    common[0], common[1] = k1, k0
    policy[1, 0] = policy[0, 1] = LAYOUT_LOGIT_SCALE
    for u, (row, norm, t, gain) in enumerate(zip(w, norms, tau, gains, strict=False)):
        unit = FIRST_DETECTOR_UNIT + u
        scale = LAYOUT_DETECTOR_SCALE * 10.0 ** float(np.clip(gain, *LAYOUT_LOG_GAIN_RANGE))
        common[unit] = scale * row / norm
        value[unit] = 10.0 ** float(np.clip(t, *LAYOUT_LOG_THRESHOLD_RANGE)) / scale
    return theta


def layout_coordinates(axes: int) -> list[int]:
    """Indices in θ of the detectors' value weights: the coordinates the layout lives on."""
    return [SLICE_VALUE.start + FIRST_DETECTOR_UNIT + u for u in range(axes)]


DETECTOR_PARAMETERS = 6  # w_u (4), log10 τ_u, log10 σ_u


def vector_size(axes: int) -> int:
    return 8 + DETECTOR_PARAMETERS * axes


def theta_from_layout_vector(x: np.ndarray, axes: int) -> np.ndarray:
    """Search vector (k₁, k₀, then per detector w_u, log₁₀ τ_u, log₁₀ σ_u) → θ."""
    x = np.asarray(x, np.float64)
    if x.shape != (vector_size(axes),):
        raise UserError(f"a layout vector for {axes} axes has {vector_size(axes)} numbers")
    det = x[8:].reshape(axes, DETECTOR_PARAMETERS)
    w = det[:, :4].copy()
    w[np.abs(w).sum(axis=1) == 0] = 1.0
    return layout_theta(x[:4], x[4:8], w, det[:, 4], det[:, 5])


def clipped_layout_points(gradients: np.ndarray, clip: float, axes: int) -> np.ndarray:
    """The clipped gradients' detector coordinates in units of C/2 (non-finite rows count as 0)."""
    g = np.where(np.all(np.isfinite(gradients), axis=1, keepdims=True), gradients, 0.0)
    return l1_clip(g, clip / 2.0)[:, layout_coordinates(axes)] / (clip / 2.0)


def laplace_bayes_accuracy(
    classes: Sequence[np.ndarray],
    epsilon: float,
    *,
    cells: int = 600,
    tail_scales: float = 14.0,
    weights: Sequence[np.ndarray] | None = None,
) -> float:
    """Bayes accuracy (uniform prior) of the Laplace mechanism when class p's clipped gradient is drawn
    from the rows of ``classes[p]`` (n_p, m), m ∈ {1, 2}, in units of C/2 (noise scale 2/ε there).

    Exact up to the grid: the output plane is cut into ``cells`` cells per axis over the points'
    range ± ``tail_scales`` noise scales; each class's cell probabilities are exact (differences of
    the Laplace CDF, mixed over its rows, a product over axes), and the accuracy is
    (1/P)·Σ_cells max_p P_p(cell) — the accuracy of the best decision that reads only the cell, a
    lower bound of the continuous Bayes accuracy that approaches it as the cells shrink. The mass
    beyond the range (≤ e^{−tail_scales}) is counted as chance. ``weights`` (one non-negative array
    per class, default uniform) weighs each class's rows in its mixture."""
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise UserError("epsilon must be a positive finite number")
    arrays = [np.atleast_2d(np.asarray(c, np.float64)) for c in classes]
    if len(arrays) < 2 or any(a.size == 0 for a in arrays):
        raise UserError("need at least two non-empty classes")
    m = arrays[0].shape[1]
    if m not in (1, 2) or any(a.shape[1] != m for a in arrays):
        raise UserError("classes must all be (n, 1) or (n, 2)")
    scale = 2.0 / epsilon
    lo = min(float(a.min()) for a in arrays) - tail_scales * scale
    hi = max(float(a.max()) for a in arrays) + tail_scales * scale
    edges = np.linspace(lo, hi, cells + 1)
    if weights is None:
        mix = [np.full(len(a), 1.0 / len(a)) for a in arrays]
    else:
        mix = [np.asarray(w, np.float64) for w in weights]
        if len(mix) != len(arrays) or any(
            w.shape != (len(a),) or np.any(w < 0) or not w.sum() > 0 for w, a in zip(mix, arrays, strict=True)
        ):
            raise UserError("weights need one non-negative array per class, one weight per row, not all zero")
        mix = [w / w.sum() for w in mix]
    per_class = []
    for a, w in zip(arrays, mix, strict=True):
        # (cells, n) probabilities of each axis' cell, per row
        axis_probs = [np.diff(laplace_dist.cdf((edges[:, None] - a[None, :, i]) / scale), axis=0) for i in range(m)]
        if m == 1:
            per_class.append(axis_probs[0] @ w)
        else:
            per_class.append((axis_probs[0] * w) @ axis_probs[1].T)
    stacked = np.stack(per_class)
    inside = float(stacked.max(axis=0).sum())
    outside = 1.0 - float(stacked.sum(axis=tuple(range(1, stacked.ndim))).mean())
    return inside / len(arrays) + outside / len(arrays)


@dataclass(frozen=True)
class LayoutSettings:
    """Budget of the layout search (episodes are per candidate and per evaluation)."""

    screen: int = 300  # controllers screened by length separability, and detectors screened with the best
    generations: int = 40
    population: int = 14
    episodes: int = 200
    restarts: int = 3  # CMA-ES runs from the best screened starts
    validation_episodes: int = 2000

    def __post_init__(self) -> None:
        for name, value in self.__dict__.items():
            if not isinstance(value, (int, np.integer)) or value < 1:
                raise UserError(f"LayoutSettings.{name} must be a positive integer, got {value!r}")


QUICK_LAYOUT = LayoutSettings(
    screen=60, generations=10, population=10, episodes=120, restarts=1, validation_episodes=400
)


@dataclass
class LayoutResult:
    """The crafted layout θ and how it was found."""

    theta: np.ndarray
    vector: np.ndarray
    axes: int
    value: float  # Laplace Bayes accuracy of the chosen θ on the validation episodes
    epsilon: float
    evaluations: int
    wall_time_s: float
    means: list[list[float]]  # per candidate: mean clipped layout point (units of C/2), validation episodes
    spreads: list[list[float]]  # per candidate: standard deviation of the layout point
    history: list[float] = field(default_factory=list)
    objective: str = "laplace-layout"

    def to_dict(self) -> dict:
        return {
            "objective": self.objective,
            "axes": self.axes,
            "value": self.value,
            "epsilon": self.epsilon,
            "evaluations": self.evaluations,
            "wall_time_s": self.wall_time_s,
            "vector": self.vector.tolist(),
            "means": self.means,
            "spreads": self.spreads,
            "history": self.history,
        }


class LayoutSimulator:
    """Plays episodes at a θ for every candidate with common random numbers per call."""

    LENGTH_BIN = 10  # steps per bin of the episode-length histogram

    def length_separability(self, theta: np.ndarray, n: int, seed: np.random.SeedSequence) -> float:
        """Plug-in Bayes accuracy of the candidates from the episode length alone (bins of
        ``LENGTH_BIN`` steps): how distinct the fates are that a detector can turn into a layout."""
        theta = with_zero_biases(theta, self.hyper.biases)
        bins = np.arange(0, self.hyper.cap + self.LENGTH_BIN + 1, self.LENGTH_BIN)
        counts = []
        for g, s in zip(self.candidates, seed.spawn(len(self.candidates)), strict=True):
            batch = simulate_episodes(
                theta,
                physics_array(n, self.physics, gravity=g),
                np.random.Generator(np.random.PCG64(s)),
                hyper=self.hyper,
            )
            counts.append(np.histogram(batch.scores, bins)[0])
        counts = np.stack(counts)
        return float(counts.max(axis=0).sum() / counts.sum())

    def __init__(
        self, candidates: Sequence[float], clip: float, axes: int, hyper: A3CHyperparams, physics: CartPoleParams
    ):
        self.candidates = [float(c) for c in candidates]
        self.clip, self.axes, self.hyper, self.physics = clip, axes, hyper, physics

    def points(self, theta: np.ndarray, n: int, seed: np.random.SeedSequence) -> list[np.ndarray]:
        return self.points_and_lengths(theta, n, seed)[0]

    def points_and_lengths(
        self, theta: np.ndarray, n: int, seed: np.random.SeedSequence
    ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Per candidate: the clipped layout points (n, axes) and the episode lengths (n,)."""
        theta = with_zero_biases(theta, self.hyper.biases)
        points, lengths = [], []
        for g, s in zip(self.candidates, seed.spawn(len(self.candidates)), strict=True):
            batch = simulate_episodes(
                theta,
                physics_array(n, self.physics, gravity=g),
                np.random.Generator(np.random.PCG64(s)),
                hyper=self.hyper,
            )
            points.append(clipped_layout_points(batch.gradients, self.clip, self.axes))
            lengths.append(np.asarray(batch.scores))
        return points, lengths


def _seed_controllers() -> list[np.ndarray]:
    """Controller rows (k₁, k₀) that start the search: odd bang-bang controllers that balance the
    pole at low gravity (push toward the lean and its rate) and asymmetric variants of them."""
    base = [np.array([1.05, 2.1, 1.34, 1.78]), np.array([0.1, 1.9, 0.48, 1.58]), np.array([0.76, 0.83, 0.88, 0.75])]
    out = []
    for k in base:
        out.append(np.concatenate([k, -k]))
        out.append(np.concatenate([k, -0.5 * k]))
    return out


def search_layout(
    candidates: Sequence[float],
    epsilon: float,
    clip: float = 0.01,
    *,
    settings: LayoutSettings | None = None,
    seed: int | np.random.SeedSequence = 0,
    hyper: A3CHyperparams | None = None,
    physics: CartPoleParams | None = None,
    axes: int | None = None,
    progress=None,
) -> LayoutResult:
    """θ of the layout family maximising the Laplace Bayes accuracy over ``candidates`` at ``epsilon``.

    ``axes`` (detectors) defaults to 1 for two candidates and 2 for more."""
    cands = sorted(float(c) for c in candidates)
    if len(cands) < 2 or len(set(cands)) != len(cands):
        raise UserError("a layout needs at least two distinct candidates")
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise UserError("the layout search needs a finite ε > 0")
    axes = axes or (1 if len(cands) == 2 else 2)
    if not 1 <= axes <= MAX_AXES:
        raise UserError(f"axes must be 1..{MAX_AXES}")
    settings = settings or LayoutSettings()
    hyper = hyper or A3CHyperparams()
    start = time.perf_counter()
    root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    screen_seq, search_seq, validation_seq = root.spawn(3)
    sim = LayoutSimulator(cands, clip, axes, hyper, physics or CartPoleParams())

    def value(x: np.ndarray, n: int, seq: np.random.SeedSequence) -> float:
        return laplace_bayes_accuracy(sim.points(theta_from_layout_vector(x, axes), n, seq), epsilon, cells=240)

    # ---- stages 1–2: screen controllers by episode-length separability, then random detectors ----
    starts, screened, evals = _screen_starts(sim, value, settings, axes, screen_seq)
    order = np.argsort(-np.asarray(screened), kind="stable")
    candidates_x = [starts[i] for i in order[: settings.restarts]]
    # ---- stage 3: CMA-ES from the best screened starts ----
    history: list[float] = []
    bounds = _layout_bounds(axes)
    for r in range(settings.restarts):
        x0 = np.clip(starts[order[r]], bounds[:, 0], bounds[:, 1])
        # one SeedSequence per generation; each evaluation spawns the next children of it
        generation_seqs = [
            np.random.SeedSequence(search_seq.entropy, spawn_key=search_seq.spawn_key + (r, gen))
            for gen in range(settings.generations)
        ]

        def objective(x: np.ndarray, gen: int, seqs: list = generation_seqs) -> float:
            return value(x, settings.episodes, seqs[gen])

        found = cmaes_maximize(
            objective,
            x0,
            0.3,
            generations=settings.generations,
            population=settings.population,
            seed=int(search_seq.generate_state(1, np.uint32)[0]) + r,
            bounds=bounds,
            on_generation=None if progress is None else functools.partial(progress, r),
        )
        evals += found.evaluations
        history += found.history
        candidates_x.append(found.best_x)
    # ---- validation on fresh episodes: the screened starts and the searched optima ----
    validated = [value(x, settings.validation_episodes, validation_seq) for x in candidates_x]
    evals += len(candidates_x)
    best = candidates_x[int(np.argmax(validated))]
    theta = theta_from_layout_vector(best, axes)
    pts = sim.points(theta, settings.validation_episodes, validation_seq)
    return LayoutResult(
        theta,
        best,
        axes,
        float(max(validated)),
        float(epsilon),
        evals,
        time.perf_counter() - start,
        [p.mean(axis=0).tolist() for p in pts],
        [p.std(axis=0).tolist() for p in pts],
        history,
    )


def _screen_starts(
    sim: LayoutSimulator, value, settings: LayoutSettings, axes: int, screen_seq: np.random.SeedSequence
) -> tuple[list[np.ndarray], list[float], int]:
    """Starting points for the search, with their screened values and the evaluations spent.

    Stage 1: controllers whose episode lengths tell the candidates apart best (the fates the detectors
    can read), the seed controllers and random ones, odd and asymmetric. Stage 2: random detectors for
    each kept controller, ranked by the Laplace Bayes accuracy."""
    rng = np.random.Generator(np.random.PCG64(screen_seq))
    controllers = list(_seed_controllers())
    while len(controllers) < settings.screen:
        k1 = rng.normal(size=4)
        k1[2:] = np.abs(k1[2:])  # push toward the pole's lean and its rate: balances at low gravity
        k0 = -k1 if rng.random() < 0.5 else -k1 * rng.uniform(0.2, 1.5, size=4) + rng.normal(scale=0.3, size=4)
        controllers.append(np.concatenate([k1, k0]))
    crn = np.random.SeedSequence(screen_seq.entropy, spawn_key=screen_seq.spawn_key + (1,))
    fate = np.array(
        [
            sim.length_separability(
                layout_theta(c[:4], c[4:], [np.ones(4)] * axes, [2.0] * axes), settings.episodes, crn
            )
            for c in controllers
        ]
    )
    kept = [controllers[i] for i in np.argsort(-fate, kind="stable")[: 2 * settings.restarts]]
    starts, screened = [], []
    per_controller = max(4, settings.screen // (4 * len(kept)))
    for ctrl in kept:
        for _ in range(per_controller):
            det = np.concatenate(
                [
                    np.concatenate([rng.normal(size=4), [rng.uniform(0.0, 4.0), rng.uniform(-1.0, 0.5)]])
                    for _ in range(axes)
                ]
            )
            starts.append(np.concatenate([ctrl, det]))
            screened.append(value(starts[-1], settings.episodes, crn))
    return starts, screened, len(controllers) + len(starts)


def _layout_bounds(axes: int) -> np.ndarray:
    """Box bounds of the layout vector: ±10 everywhere, the detectors' threshold and gain in their ranges."""
    bounds = np.array([[-10.0, 10.0]] * vector_size(axes))
    for j in range(axes):
        bounds[8 + DETECTOR_PARAMETERS * j + 4] = LAYOUT_LOG_THRESHOLD_RANGE
        bounds[8 + DETECTOR_PARAMETERS * j + 5] = LAYOUT_LOG_GAIN_RANGE
    return bounds


def best_layout_points(count: int) -> np.ndarray:
    """The best layout found for ``count`` ∈ {2, 3} classes, in units of C/2: opposite, or diamond."""
    if count == 2:
        return np.array([[1.0, 0.0], [-1.0, 0.0]])
    if count == 3:
        return np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0]])
    raise UserError("best layouts are known for 2 or 3 classes")


def length_layout_bound(
    lengths: Sequence[np.ndarray], epsilon: float, *, bin_steps: int = 10, cap: int = 200, sweeps: int = 3
) -> float:
    """Laplace Bayes accuracy of the best map from episode length to a point of the best layout.

    Each ``bin_steps``-step bin of the episode length is sent to one point of the opposite/diamond
    layout (coordinate ascent over the bins from the per-bin majority, ``sweeps`` passes): what a
    detector that reads the episode's length perfectly, and nothing else, could reach with the
    candidates' measured ``lengths`` (one array per candidate). A search heuristic, not a proof: a
    detector may read more than the length, and the ascent may stop short of the best map."""
    vertices = best_layout_points(len(lengths))
    bins = np.arange(0, cap + bin_steps + 1, bin_steps)
    hist = np.stack([np.histogram(np.asarray(ls), bins)[0] / max(1, len(ls)) for ls in lengths])
    used = np.flatnonzero(hist.sum(axis=0) > 0)

    def accuracy(assign: np.ndarray) -> float:
        weights = np.zeros((len(lengths), len(vertices)))
        for b, v in zip(used, assign, strict=False):
            weights[:, v] += hist[:, b]
        return laplace_bayes_accuracy([vertices] * len(lengths), epsilon, cells=300, weights=list(weights))

    assign = np.array([int(np.argmax(hist[:, b])) % len(vertices) for b in used])
    best = accuracy(assign)
    for _ in range(sweeps):
        improved = False
        for i in range(len(used)):
            for v in range(len(vertices)):
                if v == assign[i]:
                    continue
                trial = assign.copy()
                trial[i] = v
                value = accuracy(trial)
                if value > best + 1e-9:
                    best, assign, improved = value, trial, True
        if not improved:
            break
    return best


def layout_gap(
    theta: np.ndarray,
    candidates: Sequence[float],
    epsilon: float,
    clip: float = 0.01,
    *,
    episodes: int = 3000,
    seed: int | np.random.SeedSequence = 0,
    hyper: A3CHyperparams | None = None,
    physics: CartPoleParams | None = None,
    command: str | None = None,
) -> schemas.LayoutGap:
    """Where a crafted θ's accuracy goes, measured on ``episodes`` fresh episodes per candidate.

    Reads the clipped gradients on the two value coordinates θ(v)₂, θ(v)₃ (the detectors of both the
    layout family and the audit's crafted family) and returns, in units of C/2: each candidate's mean
    and spread there, the share of the clipped L1 norm they hold, and three Laplace Bayes accuracies
    at ``epsilon``: ``measured`` (the candidates' measured distributions: what any attacker of one
    submission can reach at this θ, up to the little carried by the other coordinates),
    ``means_only`` (every candidate collapsed to its mean: the layout without the spread),
    ``best_layout`` (the best layout of that many points found: opposite, or diamond for three) and
    ``length_map`` (:func:`length_layout_bound` on the episode lengths at θ: what the best map from
    the controller's fates, read as lengths, to that layout would give). ``command`` is stored with the
    result."""
    cands = sorted(float(c) for c in candidates)
    root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    sim = LayoutSimulator(cands, clip, 2, hyper or A3CHyperparams(), physics or CartPoleParams())
    pts, lengths = sim.points_and_lengths(np.asarray(theta, np.float64), episodes, root)
    theta_b = with_zero_biases(np.asarray(theta, np.float64), sim.hyper.biases)
    means = [p.mean(axis=0) for p in pts]
    known = len(cands) in (2, 3)
    shares = [float(np.abs(p).sum(axis=1).mean()) for p in pts]
    accuracy = schemas.BayesAccuracy(
        measured=float(laplace_bayes_accuracy(pts, epsilon)),
        means_only=float(laplace_bayes_accuracy([m[None] for m in means], epsilon)),
        best_layout=float(laplace_bayes_accuracy([p[None] for p in best_layout_points(len(cands))], epsilon))
        if known
        else None,
        length_map=float(length_layout_bound(lengths, epsilon, cap=sim.hyper.cap)) if known else None,
    )
    return schemas.LayoutGap(
        candidates=cands,
        epsilon=float(epsilon),
        episodes=int(episodes),
        theta_dim=int(theta_b.shape[-1]),
        coordinates=[int(c) for c in layout_coordinates(2)],
        means=[m.tolist() for m in means],
        spreads=[p.std(axis=0).tolist() for p in pts],
        layout_share_of_l1=shares,
        bayes_accuracy=accuracy,
        command=command,
    )


def _main(argv: Sequence[str] | None = None) -> int:
    """``python -m attacks.a3c.layout THETA.pt --candidates ... --epsilon E --out JSON``: :func:`layout_gap`."""
    import argparse
    import sys

    from pgc.a3c.model import CheckpointError, load_checkpoint
    from pgc.options import add_out, add_seed

    p = argparse.ArgumentParser(prog="python -m attacks.a3c.layout", description=layout_gap.__doc__.splitlines()[0])
    p.add_argument("theta", help="checkpoint of the crafted θ")
    p.add_argument("--candidates", type=float, nargs="+", required=True)
    p.add_argument("--epsilon", type=float, default=1.0)
    p.add_argument("--clip", type=float, default=0.01)
    p.add_argument("--episodes", type=int, default=3000)
    add_seed(p)
    add_out(p, required=True, help="JSON file (written atomically)")
    args = p.parse_args(argv)
    try:
        if (
            len(set(args.candidates)) < 2
            or not (math.isfinite(args.epsilon) and args.epsilon > 0)
            or args.episodes < 2
            or args.seed < 0
            or not args.clip > 0
        ):
            raise UserError("need two distinct candidates, a finite ε > 0, clip > 0, episodes >= 2, seed >= 0")
        theta = load_checkpoint(args.theta)
        command = "python -m attacks.a3c.layout " + " ".join(sys.argv[1:] if argv is None else argv)
        report = layout_gap(
            theta, args.candidates, args.epsilon, args.clip, episodes=args.episodes, seed=args.seed, command=command
        )
    except (ValueError, OSError, CheckpointError) as exc:  # one clear line, exit 2, nothing written
        print(f"error: {exc}", file=sys.stderr)
        return 2
    write_json_atomic(args.out, report.to_dict())
    acc = report.bayes_accuracy
    best = (
        "" if acc.best_layout is None else f", best length map {acc.length_map:.3f}, best layout {acc.best_layout:.3f}"
    )
    print(
        f"Laplace Bayes accuracy at ε={args.epsilon:g}: measured {acc.measured:.3f}, means only "
        f"{acc.means_only:.3f}{best} -> {args.out}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
