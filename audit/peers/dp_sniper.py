"""DP-Sniper (Bichsel, Steffen, Bogunovic & Vechev, IEEE S&P 2021) re-implemented from the authors' code
(github.com/eth-sri/dp-sniper), as pure functions over the outputs a caller draws.

For one neighbouring pair (a, a′), DP-Sniper (the paper's Alg. 1; ``dpsniper/attack/dpsniper.py``):

1. trains a logistic-regression classifier to tell M(a) (label 0) from M(a′) (label 1): the outputs through the
   algorithm's feature transform (:func:`flags_features`: special values as flag columns), standardised on the
   first training batch, then ``epochs`` full-batch steps of SGD with momentum per training batch on the
   cross-entropy plus ``regularization``·‖θ‖² (:func:`train_logistic`; the authors' torch model, optimizer and
   step schedule), its probability of class 0 rounded to 3 decimals (:func:`class0_probabilities`);
2. sets the randomized threshold: on n fresh outputs of a′, the threshold t and tie probability q under which a
   fraction c of them lies (:func:`find_threshold`, ``DPSniper._find_threshold``); the attack S holds an output
   with probability 1[p > t] + q·1[p = t] (:func:`attack_probabilities`).

DD-Search (the paper's Alg. 2; ``dpsniper/search/ddsearch.py``) runs this on every input pair, estimates
ε(a, a′, S) = ln P[M(a) ∈ S] − ln P[M(a′) ∈ S] on ``n_check`` fresh outputs per side, keeps the pair with the
largest estimate, and re-estimates it on ``n_final`` fresh outputs per side; its lower bound
(:func:`epsilon_lower_bound`, ``EpsEstimator._compute_lcb``) takes the Clopper–Pearson lower bound of P[M(a) ∈ S]
and upper bound of P[M(a′) ∈ S], each at (1 − confidence)/2, on the counts ⌊p̂·n⌋ (the attack's expected
membership summed, as the authors count it).

Sample sizes (:class:`DPSniperConfig`): the authors' defaults are n_train = n = n_check = 10.7e6 and
n_final = 2e8 at confidence 0.9; :func:`scaled_config` keeps their proportions within a total per side.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace

import numpy as np
from scipy.stats import beta

from pgc.errors import UserError

# (name, side, n) -> n outputs of the pair's side 0 (a) or 1 (a') in DP-Sniper's format, shape (n, k)
Draw = Callable[[str, int, int], np.ndarray]
Init = Callable[[int], tuple[np.ndarray, float]]


@dataclass(frozen=True)
class DPSniperConfig:
    """DP-Sniper's ``DDConfig`` and the training settings of its logistic regression (``exp_default.py``)."""

    c: float = 0.01
    n_train: int = 10_700_000
    n: int = 10_700_000
    n_check: int = 10_700_000
    n_final: int = 200_000_000
    training_batch_size: int = 100_000
    confidence: float = 0.9
    epochs: int = 10
    learning_rate: float = 0.3
    momentum: float = 0.3
    step_size: int = 500
    gamma: float = 0.1
    regularization: float = 0.001

    def __post_init__(self) -> None:
        if not (0.0 < self.c < 1.0) or not (0.0 < self.confidence < 1.0):
            raise UserError("DP-Sniper needs c and confidence in (0, 1)")
        if min(self.n_train, self.n, self.n_check, self.n_final, self.training_batch_size) < 1:
            raise UserError("DP-Sniper's sample sizes must be positive")

    def releases_per_side(self, n_pairs: int) -> float:
        """Outputs drawn per side in all (training, threshold and check per pair, then the final estimate)."""
        return n_pairs * (self.n_train + self.n / 2 + self.n_check) + self.n_final


def scaled_config(total: int, n_pairs: int, **settings) -> DPSniperConfig:
    """The authors' stage sizes scaled to ``total`` outputs per side over ``n_pairs`` pairs (n_train = n = n_check,
    n_final = 2e8/10.7e6 of that), rounded down."""
    default = DPSniperConfig()
    final_share = default.n_final / default.n_train
    unit = int(total / (2.5 * n_pairs + final_share))
    if unit < 100:
        raise UserError(f"a total of {total} outputs per side is too small for DP-Sniper over {n_pairs} pairs")
    return replace(default, n_train=unit, n=unit, n_check=unit, n_final=int(unit * final_share), **settings)


# --- the classifier ----------------------------------------------------------------------------------------


def flags_features(x: np.ndarray, special_values: Sequence[float]) -> np.ndarray:
    """DP-Sniper's ``FlagsFeatureTransformer``: per special value v, a flag column block (x == v) after the
    outputs, where the outputs equal to v become 0; no special values: x itself."""
    if not special_values:
        return x
    blocks = [np.where(np.isin(x, special_values), 0.0, x)]
    blocks += [(x == v).astype(np.float64) for v in special_values]
    return np.concatenate(blocks, axis=1)


@dataclass(frozen=True)
class LogisticModel:
    """A trained classifier: the standardiser (mean, scale) of its first batch and the weights."""

    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    bias: float
    special_values: tuple[float, ...] = ()

    def features(self, outputs: np.ndarray) -> np.ndarray:
        return (flags_features(outputs, self.special_values) - self.mean) / self.scale


def standardiser(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's ``StandardScaler`` fit: the mean and the standard deviation (1 where it is 0)."""
    mean, scale = x.mean(axis=0), x.std(axis=0)
    return mean, np.where(scale < 10 * np.finfo(np.float64).eps * np.maximum(1.0, np.abs(mean)), 1.0, scale)


def torch_like_init(rng: np.random.Generator) -> Init:
    """The initial weights of torch's ``nn.Linear(d, 1)``: weights and bias uniform on [−1/√d, 1/√d]."""

    def init(d: int) -> tuple[np.ndarray, float]:
        bound = 1.0 / math.sqrt(d)
        return rng.uniform(-bound, bound, size=d), float(rng.uniform(-bound, bound))

    return init


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * z))


def train_logistic(
    batches: Iterator[tuple[np.ndarray, np.ndarray]],
    init: Init,
    config: DPSniperConfig,
    special_values: Sequence[float] = (),
) -> LogisticModel:
    """Logistic regression as the authors train it (``MultiLayerPerceptron`` without hidden layers): features
    standardised on the first batch; per batch, ``epochs`` full-batch SGD steps with momentum on the mean binary
    cross-entropy + regularization·(‖w‖² + b²), the learning rate multiplied by ``gamma`` every ``step_size``
    steps. ``batches`` yield (outputs, labels) with label 0 for a and 1 for a′."""
    model, velocity, step = None, None, 0
    for outputs, labels in batches:
        x = flags_features(outputs, special_values)
        if model is None:
            mean, scale = standardiser(x)
            w, b = init(x.shape[1])
            model = LogisticModel(mean, scale, np.asarray(w, dtype=np.float64), float(b), tuple(special_values))
            theta = np.append(model.weights, model.bias)
        x = np.hstack([(x - model.mean) / model.scale, np.ones((x.shape[0], 1))])
        for _ in range(config.epochs):
            grad = x.T @ (_sigmoid(x @ theta) - labels) / x.shape[0] + 2.0 * config.regularization * theta
            velocity = grad if velocity is None else config.momentum * velocity + grad
            theta = theta - config.learning_rate * config.gamma ** (step // config.step_size) * velocity
            step += 1
    if model is None:
        raise UserError("DP-Sniper's classifier needs at least one training batch")
    return replace(model, weights=theta[:-1], bias=float(theta[-1]))


def class0_probabilities(model: LogisticModel, outputs: np.ndarray) -> np.ndarray:
    """The classifier's probability that each output came from a (class 0), rounded to 3 decimals as the authors
    round it "for numerical stability"."""
    return np.around(1.0 - _sigmoid(model.features(outputs) @ model.weights + model.bias), decimals=3)


# --- the threshold, the attack and the bound ---------------------------------------------------------------


def find_threshold(sorted_probabilities: np.ndarray, target: float) -> tuple[float, float]:
    """``DPSniper._find_threshold``: on probabilities sorted in descending order, the threshold t at index
    ⌊target⌋ and the tie probability q = (target − #{p > t}) / #{p = t}, so that ``target`` of them lie in the
    attack in expectation."""
    p = np.asarray(sorted_probabilities, dtype=np.float64)
    t = float(p[min(math.floor(target), p.shape[0] - 1)])
    above, equal = int(np.sum(p > t)), int(np.sum(p == t))
    return t, (target - above) / equal


def attack_probabilities(probabilities: np.ndarray, t: float, q: float) -> np.ndarray:
    """``MlAttack``: the probability that each output lies in the attack, 1[p > t] + q·1[p = t]."""
    return (probabilities > t).astype(np.float64) + q * (probabilities == t)


def epsilon_estimate(p1: float, p2: float) -> float:
    """``EpsEstimator._compute_eps``: ln p1 − ln p2 (∞ when only p2 is 0, 0 when p1 is 0)."""
    if p1 > 0 and p2 == 0:
        return math.inf
    if p1 <= 0:
        return 0.0
    return math.log(p1) - math.log(p2)


def clopper_pearson_lower(n: int, k: int, alpha: float) -> float:
    """The largest p with P[Binom(n, p) ≥ k] ≤ α (``binomial_cdf.lcb``)."""
    return 0.0 if k == 0 else float(beta.ppf(alpha, k, n - k + 1))


def clopper_pearson_upper(n: int, k: int, alpha: float) -> float:
    """The smallest p with P[Binom(n, p) ≤ k] ≤ α (``binomial_cdf.ucb``)."""
    return 1.0 if k == n else float(beta.ppf(1 - alpha, k + 1, n - k))


def epsilon_lower_bound(p1: float, p2: float, n: int, confidence: float) -> float:
    """``EpsEstimator._compute_lcb``: ε of the Clopper–Pearson lower bound of p1 and upper bound of p2, each at
    (1 − confidence)/2 (a union bound), on the counts int(p·n) of n outputs per side."""
    alpha = (1.0 - confidence) / 2.0
    return epsilon_estimate(clopper_pearson_lower(n, int(p1 * n), alpha), clopper_pearson_upper(n, int(p2 * n), alpha))


# --- DP-Sniper on one pair, DD-Search over the pairs ----------------------------------------------------------


@dataclass(frozen=True)
class Attack:
    """An attack found for one pair: the classifier, t and q, and ε estimated on the check outputs."""

    pair: str
    model: LogisticModel
    t: float
    q: float
    p1: float = math.nan
    p2: float = math.nan
    epsilon: float = math.nan

    def membership(self, outputs: np.ndarray) -> np.ndarray:
        return attack_probabilities(class0_probabilities(self.model, outputs), self.t, self.q)


def batch_sizes(n: int, size: int) -> list[int]:
    """``split_by_batch_size``: n in batches of ``size``, the last one the rest."""
    return [size] * (n // size) + ([n % size] if n % size else [])


def dp_sniper(
    pair: str, draw: Draw, config: DPSniperConfig, init: Init, special_values: Sequence[float] = ()
) -> Attack:
    """DP-Sniper (Alg. 1) for one pair: the classifier on ``n_train`` outputs per side, t and q on ``n`` outputs
    of a′ at the target c·n."""

    def batches():
        for m in batch_sizes(config.n_train, config.training_batch_size):
            outputs = np.concatenate([draw(pair, 0, m), draw(pair, 1, m)])
            yield outputs, np.repeat([0.0, 1.0], m)

    model = train_logistic(batches(), init, config, special_values)
    probabilities = np.sort(class0_probabilities(model, draw(pair, 1, config.n)))[::-1]
    t, q = find_threshold(probabilities, config.c * probabilities.shape[0])
    return Attack(pair, model, t, q)


def estimate(attack: Attack, draw: Draw, n: int) -> tuple[float, float]:
    """P[M(a) ∈ S] and P[M(a′) ∈ S] on n fresh outputs per side (``PrEstimator``: the memberships summed)."""
    return tuple(math.fsum(attack.membership(draw(attack.pair, side, n))) / n for side in (0, 1))


@dataclass
class DDSearchResult:
    """DD-Search's witness: the pair, its attack, ε and the lower bound on the final outputs; per pair the
    check-stage estimate."""

    pair: str
    epsilon: float
    epsilon_lower_bound: float
    p1: float
    p2: float
    threshold: float
    tie_probability: float
    per_pair: dict[str, float] = field(default_factory=dict)
    config: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


def dd_search(
    pairs: Sequence[str],
    draw: Draw,
    config: DPSniperConfig,
    init: Init,
    special_values: Sequence[float] = (),
    on_pair: Callable[[Attack], None] | None = None,
) -> DDSearchResult:
    """DD-Search (Alg. 2) with DP-Sniper's attacks: every pair's attack estimated on ``n_check`` outputs per side,
    the largest estimate kept (the first among equals), its ε and lower bound on ``n_final`` outputs per side."""
    if not pairs:
        raise UserError("DD-Search needs at least one input pair")
    best: Attack | None = None
    per_pair: dict[str, float] = {}
    for pair in pairs:
        attack = dp_sniper(pair, draw, config, init, special_values)
        p1, p2 = estimate(attack, draw, config.n_check)
        attack = replace(attack, p1=p1, p2=p2, epsilon=epsilon_estimate(p1, p2))
        per_pair[pair] = attack.epsilon
        if on_pair is not None:
            on_pair(attack)
        if best is None or attack.epsilon > best.epsilon:
            best = attack
    p1, p2 = estimate(best, draw, config.n_final)
    return DDSearchResult(
        best.pair,
        epsilon_estimate(p1, p2),
        epsilon_lower_bound(p1, p2, config.n_final, config.confidence),
        p1,
        p2,
        best.t,
        best.q,
        per_pair,
        asdict(config),
    )


def pair_draw(pairs: Mapping[str, tuple], release: Callable[[object, int], np.ndarray]) -> Draw:
    """A :data:`Draw` from named pairs and ``release(secret, n)`` (the outputs in DP-Sniper's format)."""
    return lambda pair, side, n: release(pairs[pair][side], n)
