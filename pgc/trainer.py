"""PGC-A3C (Algorithm 1) for many independent trials at once.

Protocol, per trial: W workers run agents asynchronously; agent n copies θ when its episode starts
(so its gradient may be stale by the time it arrives), plays CartPole with its private gravity
ψ_n ~ U(Ψ), computes the gradient of eqs. 15–18, privatizes it with the trial's mechanism and submits
it. The aggregator appends it to the buffer B; when |B| reaches MAX_BUF it applies eq. 22,
θ ← θ − η·mean(B), and clears B. The trial ends after N submissions (or, with ``stop_at_success``,
at its first success time, eq. 26).

Simulation of asynchrony: time is the environment-step clock. Every worker plays one step per tick;
the submissions that arrive in one tick are applied in worker order, and all finishing workers then
copy the resulting θ for their next agent. Exploration follows §4: α = max{0, 0.5 − n/1800} with n
the agent's index in start order.

Execution: a trial runs start to end inside one compiled function (:func:`pgc.kernel.run_trial`):
its W lanes, trajectory buffers, θ and buffer (a few hundred KiB) stay in cache, and for the
built-in mechanisms no Python runs per step or per submission. Trials are independent, so a batch
is a loop over trials, optionally spread over forked processes; each trial draws only from
generators spawned from its own seed, which makes its result independent of the batch.
"""

from __future__ import annotations

import contextvars
import itertools
import math
import os
from dataclasses import asdict, dataclass, field, fields
from typing import Sequence

import numpy as np

from . import kernel
from .env import PAPER_GRAVITIES, PHYSICS_FIELDS, TARGET_SCORE, CartPoleParams
from .mechanisms import (MECHANISMS, Mechanism, ProjectedRandomSign, compiled_spec, make_mechanism, mechanism_record,
                         split_rounds)
from .metrics import WINDOW, average_scores, first_success_time
from .model import glorot_uniform_theta
from .protect import ScoreLaplace, parse_protect, split_budget
from .rollout import A3CHyperparams, kernel_gradient_rule
from .transcript import GroundTruth, Transcript


RMSPROP_EPS = 1e-7  # Keras RMSprop's ε (added to √s)


@dataclass(frozen=True)
class TrainConfig:
    """One trial's settings; defaults are the paper's (§4). Validated on construction."""

    mechanism: str = "laplace"
    epsilon: float = 1.0  # per agent; with rounds = T each submission spends ε/T (§3.2.1)
    clip: float | None = None  # None: the paper's C for the mechanism (0.01 Laplace/none, 1 PRS)
    reduced_dim: int | None = None  # PRS d̂; None: max{1, min{d, ⌊ε/2.5⌋}}
    delta: float | None = None  # the (ε, δ) claim's δ per agent (Gaussian mechanisms only)
    buffer_size: int = 1  # MAX_BUF
    submissions: int = 10_000  # N
    workers: int = 9  # W
    gravities: tuple[float, ...] = PAPER_GRAVITIES  # Ψ
    learning_rate: float = 0.5  # η
    # aggregator's update rule: "sgd" is eq. 22; "rmsprop" (decay ρ, the Keras A3C example's
    # optimizer, lr 5e-3 there) is a reading knob, applied to mean(B) in place of the SGD step
    optimizer: str = "sgd"
    rmsprop_decay: float = 0.99
    exploration_start: float = 0.5
    exploration_decay: float = 1800.0
    # §4's α = max{0, 0.5 − n/1800}: n counts "agents" (in start order, the paper's text) or global
    # environment "steps" (the Keras example's 200 steps × 9 workers)
    exploration_clock: str = "agents"
    rounds: int = 1  # submissions per agent (T of §3.2.1)
    hyper: A3CHyperparams = field(default_factory=A3CHyperparams)
    physics: CartPoleParams = field(default_factory=CartPoleParams)  # gravity replaced by ψ_n
    target_score: float = TARGET_SCORE
    window: int = WINDOW
    stop_at_success: bool = False
    zero_information: bool = False  # control: the mechanism is fed a zero gradient
    seed: int = 0
    # mitigations (pgc.protect): any of "score", "timing", "order" ("all": the three)
    protect: tuple[str, ...] = ()
    score_epsilon: float | None = None  # per agent, out of ε; None: 10 % of ε (with "score")

    def __post_init__(self) -> None:
        if not isinstance(self.mechanism, str):
            raise ValueError(f"mechanism must be a name (string), got {self.mechanism!r}")
        if self.mechanism not in MECHANISMS:
            raise ValueError(f"unknown mechanism {self.mechanism!r}; known: {', '.join(sorted(MECHANISMS))}")
        _check_types(self)
        object.__setattr__(self, "gravities", tuple(float(g) for g in self.gravities))
        if not self.gravities or not all(math.isfinite(g) for g in self.gravities):
            raise ValueError("gravities Ψ must be a non-empty tuple of finite numbers")
        for name in ("buffer_size", "submissions", "workers", "rounds", "window"):
            value = getattr(self, name)
            if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if self.submissions > 10_000_000:
            raise ValueError("submissions must be <= 10,000,000")
        if self.workers > 10_000 or self.rounds > 10_000:  # the transcript stores them as int16
            raise ValueError("workers and rounds must be <= 10,000")
        if not math.isinf(self.epsilon) and self.epsilon > MAX_EPSILON:
            raise ValueError(f"epsilon must be <= {MAX_EPSILON:g} (or inf for no privacy), got {self.epsilon!r}")
        if not (math.isfinite(self.learning_rate) and self.learning_rate > 0):
            raise ValueError(f"learning_rate must be > 0, got {self.learning_rate}")
        if self.optimizer not in ("sgd", "rmsprop"):
            raise ValueError(f"optimizer must be 'sgd' or 'rmsprop', got {self.optimizer!r}")
        if not (0.0 <= self.rmsprop_decay < 1.0):
            raise ValueError(f"rmsprop_decay must lie in [0, 1), got {self.rmsprop_decay!r}")
        if self.exploration_clock not in ("agents", "steps"):
            raise ValueError(f"exploration_clock must be 'agents' or 'steps', got {self.exploration_clock!r}")
        if not (0 <= self.exploration_start <= 1) or not self.exploration_decay > 0:
            raise ValueError("exploration_start must lie in [0, 1] and exploration_decay be > 0")
        if not isinstance(self.seed, (int, np.integer)) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {self.seed!r}")
        object.__setattr__(self, "protect", parse_protect(self.protect))
        if self.score_epsilon is not None:
            object.__setattr__(self, "score_epsilon", float(self.score_epsilon))
        if "score" in self.protect and self.mechanism == "none":
            raise ValueError("a privatized score needs a private gradient mechanism (not 'none')")
        split_budget(self.epsilon, self.score_epsilon, self.protect)  # validates score_epsilon
        mechanism = self.build_mechanism()  # validates ε and C for the mechanism
        if isinstance(mechanism, ProjectedRandomSign):
            mechanism.reduced_dim_for(self.hyper.dim)  # d̂ ≤ d

    @property
    def gradient_epsilon(self) -> float:
        """ε of the gradient mechanism per agent: ε − ε_score with a privatized score, else ε."""
        return math.inf if self.mechanism == "none" else split_budget(self.epsilon, self.score_epsilon, self.protect)[0]

    @property
    def score_epsilon_total(self) -> float:
        """ε_score per agent (0 when the score is not protected)."""
        return 0.0 if "score" not in self.protect else split_budget(self.epsilon, self.score_epsilon, self.protect)[1]

    def build_mechanism(self) -> Mechanism:
        """The per-submission gradient mechanism (ε − ε_score, split over ``rounds``)."""
        return split_rounds(make_mechanism(self.mechanism, self.gradient_epsilon, self.clip, self.reduced_dim,
                                           delta=self.delta), self.rounds)

    def build_score_mechanism(self) -> ScoreLaplace | None:
        """The per-submission score mechanism (ε_score / rounds, sensitivity cap), or None."""
        if "score" not in self.protect:
            return None
        return ScoreLaplace(self.score_epsilon_total / self.rounds, float(self.hyper.cap))

    def protection(self) -> dict:
        """What is protected and the total claim per agent (recorded in run folders and transcripts)."""
        eps_s = self.score_epsilon_total
        return {"protect": list(self.protect), "claimed_epsilon_total": _json_float(self.epsilon),
                "gradient_epsilon": _json_float(self.gradient_epsilon), "score_epsilon": eps_s,
                "claim_covers": ["gradient"] + (["score"] if "score" in self.protect else [])
                + (["arrival", "arrival-order"] if "timing" in self.protect else []),
                "metrics_from": "privatized scores" if "score" in self.protect else "reported (true) scores"}

    def to_dict(self) -> dict:
        d = asdict(self)
        d["gravities"] = list(self.gravities)
        d["epsilon"] = _json_float(self.epsilon)
        if self.clip is not None:
            d["clip"] = _json_float(self.clip)
        d["protect"] = list(self.protect)
        if not self.protect and self.score_epsilon is None:  # unprotected configs: no protection keys
            del d["protect"], d["score_epsilon"]
        if self.delta is None:  # pure ε configs: no delta key
            del d["delta"]
        return d

    @classmethod
    def from_dict(cls, data: dict) -> "TrainConfig":
        """A config from JSON-like data; wrongly typed values raise ``ValueError`` naming the key."""
        if not isinstance(data, dict):
            raise ValueError(f"a config must be a JSON object, got {type(data).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown config keys: {sorted(unknown)}")
        data = dict(data)
        for key, kind in (("hyper", A3CHyperparams), ("physics", CartPoleParams)):
            if key not in data:
                continue
            value = data[key]
            if isinstance(value, dict):
                sub = {f.name: f for f in fields(kind)}
                bad = sorted(set(value) - set(sub), key=str)
                if bad:
                    raise ValueError(f"unknown config {key} keys: {bad}")
                for name, v in value.items():
                    _check_value(f"{key}.{name}", sub[name].type, v)
                data[key] = kind(**value)
            elif not isinstance(value, kind):
                raise ValueError(f"config {key} must be an object of {kind.__name__} fields, got {value!r}")
        if "gravities" in data:
            if not isinstance(data["gravities"], (list, tuple)):
                raise ValueError(f"config gravities must be a list of numbers, got {data['gravities']!r}")
            data["gravities"] = tuple(data["gravities"])
        if isinstance(data.get("protect"), list):
            data["protect"] = tuple(data["protect"])
        for key in ("epsilon", "clip"):  # JSON has no inf: "inf" strings are accepted
            if isinstance(data.get(key), str):
                try:
                    data[key] = float(data[key])
                except ValueError:
                    raise ValueError(f"config {key} must be a number, got {data[key]!r}") from None
        return cls(**data)

    def replace(self, **changes) -> "TrainConfig":
        return TrainConfig(**{**{f.name: getattr(self, f.name) for f in fields(self)}, **changes})


MAX_EPSILON = 1e6  # per-agent ε beyond this is no privacy at all: use the 'none' mechanism (ε = inf)
MAX_TRIALS = 100_000  # trials of one batch
MEMORY_FRACTION = 0.5  # a batch may hold at most this share of the machine's memory


def _check_value(name: str, annotation, value) -> None:
    """``value`` has the JSON type the field's annotation asks for (bool is not a number)."""
    text = str(annotation)
    if value is None and "None" in text:
        return
    if text.startswith("tuple"):
        ok = isinstance(value, (list, tuple)) and all(
            isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) for v in value)
        kind = "a list of numbers"
    elif "float" in text:
        ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))
        kind = "a number"
    elif "bool" in text:
        ok = isinstance(value, (bool, np.bool_))
        kind = "true or false"
    elif "int" in text:
        ok = isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
        kind = "an integer"
    elif "str" in text:
        ok = isinstance(value, str)
        kind = "a string"
    else:
        return
    if not ok:
        raise ValueError(f"config {name} must be {kind}, got {value!r}")
    if kind == "a number" and isinstance(value, (float, np.floating)) and math.isnan(value):
        raise ValueError(f"config {name} must be a number, got NaN")


def _check_types(config: "TrainConfig") -> None:
    for f in fields(config):
        if f.name in ("hyper", "physics"):
            kind = A3CHyperparams if f.name == "hyper" else CartPoleParams
            if not isinstance(getattr(config, f.name), kind):
                raise ValueError(f"config {f.name} must be {kind.__name__}, got {getattr(config, f.name)!r}")
            continue
        if f.name == "protect":  # names of channels, parsed and validated by pgc.protect.parse_protect
            continue
        _check_value(f.name, f.type, getattr(config, f.name))


def estimate_batch_bytes(configs: Sequence["TrainConfig"], record: bool | Sequence[bool] = True) -> int:
    """Memory a batch holds at its end (results of every trial, transcripts included), in bytes."""
    flags = [bool(record)] * len(configs) if isinstance(record, bool) else list(record)
    total = 0
    for c, rec in zip(configs, flags):
        n = c.submissions
        d = c.hyper.dim
        per = n * 8 + c.workers * (c.hyper.cap * kernel.TRAJ_FIELDS + 4 * d) * 8 + 16 * d * 8
        if rec:  # rec_i, ψ, float32 gradients, then the kept θ versions (copied once into the transcript)
            per += 2 * (n * (kernel.N_REC_I * 8 + 8 + d * 4) + (n // c.buffer_size + 2) * (d * 8 + 8))
        total += per
    return total


def memory_limit_bytes() -> int:
    """The share :data:`MEMORY_FRACTION` of this machine's physical memory."""
    try:
        return int(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") * MEMORY_FRACTION)
    except (ValueError, OSError, AttributeError):
        return 8 * 2**30


def check_batch_size(configs: Sequence["TrainConfig"], record: bool | Sequence[bool] = True) -> None:
    """Refuse, before anything is allocated, a batch with too many trials or too large for memory."""
    if len(configs) > MAX_TRIALS:
        raise ValueError(f"a batch may hold at most {MAX_TRIALS:,} trials, got {len(configs):,}")
    need, limit = estimate_batch_bytes(configs, record), memory_limit_bytes()
    if need > limit:
        raise ValueError(f"the batch would hold about {need / 2**30:.1f} GiB of results, more than the limit of "
                         f"{limit / 2**30:.1f} GiB ({MEMORY_FRACTION:.0%} of this machine's memory); use fewer "
                         "trials or submissions, or no transcripts")


def _json_float(x: float) -> float | str:
    return x if math.isfinite(x) else ("inf" if x > 0 else "-inf")


@dataclass
class TrainResult:
    """One trial's outcome. ``transcript``/``ground_truth`` are set when recording was asked for."""

    config: TrainConfig
    initial_theta: np.ndarray
    theta: np.ndarray
    scores: np.ndarray  # ζ per submission, arrival order (length = submissions received)
    updates: int  # number of eq. 22 updates
    agent_steps: int
    nonfinite_gradients: int  # evaluation-only count of clean gradients that hit the non-finite rule
    transcript: Transcript | None = None
    ground_truth: GroundTruth | None = None
    mechanism: dict | None = None  # pgc.mechanisms.mechanism_record of the mechanism actually used
    # evaluation-only: the true ζ when the score is privatized (``scores`` then holds what the
    # aggregator saw, and μ / FST / stop_at_success work from it)
    true_scores: np.ndarray | None = None
    ticks: int = 0  # environment-step clock at the end of the trial (at the stop, with stop_at_success)

    @property
    def fst(self) -> float:
        return first_success_time(self.scores, self.config.target_score, self.config.window)

    @property
    def true_fst(self) -> float:
        """Evaluation-only: FST on the true scores (equals :attr:`fst` without a privatized score)."""
        scores = self.scores if self.true_scores is None else self.true_scores
        return first_success_time(scores, self.config.target_score, self.config.window)

    @property
    def average_scores(self) -> np.ndarray:
        return average_scores(self.scores, self.config.window)

    def summary(self) -> dict:
        mu = self.average_scores
        return {
            "seed": self.config.seed,
            "fst": _json_float(self.fst),
            "final_mu": float(mu[-1]) if mu.size else None,
            "best_mu": float(mu.max()) if mu.size else None,
            "submissions": int(self.scores.size),
            "updates": self.updates,
            "agent_steps": self.agent_steps,
            "nonfinite_gradients": self.nonfinite_gradients,
            **(self._protection_summary() if self.config.protect else {}),
        }

    def _protection_summary(self) -> dict:
        out = self.config.protection()
        if self.true_scores is not None:
            true_mu = average_scores(self.true_scores, self.config.window)
            out.update(note="fst, final_mu and best_mu are computed from the privatized scores the aggregator saw",
                       fst_true_scores=_json_float(self.true_fst),
                       final_mu_true_scores=float(true_mu[-1]) if true_mu.size else None)
        return out


def train(config: TrainConfig, *, record_transcript: bool = False, progress: bool = False) -> TrainResult:
    """Run one trial (see :func:`train_batch`)."""
    return train_batch([config], record_transcripts=record_transcript, progress=progress)[0]


def train_batch(configs: Sequence[TrainConfig], *, record_transcripts: bool | Sequence[bool] = False,
                progress: bool = False, mechanisms: Sequence[Mechanism] | None = None,
                processes: int = 1, executor=None) -> list[TrainResult]:
    """Run K independent trials (any mix of settings and seeds); results in the order of ``configs``.

    Each trial runs start to end in one compiled loop (:func:`pgc.kernel.run_trial`): its W workers,
    mechanism and aggregator stay in L1 cache, and no Python code runs per step or per submission
    for the built-in mechanisms. A trial's randomness comes from its own ``seed`` only (θ₀ and ψ_n
    from ``SeedSequence(seed)``, environment and mechanism noise from its two spawned children), so
    a trial's result does not depend on the other trials of the batch nor on ``processes``.

    ``processes > 1`` hands the trials to that many forked processes. ``mechanisms`` overrides each
    trial's registry mechanism (e.g. a third-party implementation of the :class:`Mechanism`
    Protocol): such a mechanism is called once per submission with a ``(1, d)`` row (d = 112, or 131 with biases) and the
    trial's mechanism generator, exactly as the built-in fast path draws its noise, so a built-in
    mechanism passed this way reproduces the fast-path run. ``record_transcripts`` keeps the
    transcript of the chosen trials. ``executor`` (anything with ``Executor.map``'s signature, e.g. a
    Ray engine; default :data:`DEFAULT_EXECUTOR`'s value) runs the trials instead, with the same results.
    """
    executor = executor if executor is not None else DEFAULT_EXECUTOR.get()
    configs = list(configs)
    if not configs:
        raise ValueError("need at least one config")
    k_trials = len(configs)
    record = [bool(record_transcripts)] * k_trials if isinstance(record_transcripts, bool) else list(record_transcripts)
    if len(record) != k_trials:
        raise ValueError("record_transcripts must have one flag per config")
    if mechanisms is not None and len(mechanisms) != k_trials:
        raise ValueError("mechanisms must have one entry per config")
    if not isinstance(processes, int) or isinstance(processes, bool) or processes < 1:
        raise ValueError(f"processes must be a positive integer, got {processes!r}")
    check_batch_size(configs, record)
    mechs = [None] * k_trials if mechanisms is None else list(mechanisms)
    jobs = list(zip(configs, record, mechs))
    bar = _progress_bar(sum(c.submissions for c in configs), progress)
    try:
        if executor is not None:
            results = list(executor.map(_train_trial, configs, record, mechs))
            bar.update(sum(c.submissions for c in configs))
        elif min(processes, k_trials) > 1:
            results = _train_forked(jobs, min(processes, k_trials), bar)
        else:
            results = [_train_trial(*job, bar=bar) for job in jobs]
    finally:
        bar.close()
    return results


DEFAULT_EXECUTOR: contextvars.ContextVar = contextvars.ContextVar("train_batch_executor", default=None)
_FORK_JOBS: dict[int, list] = {}  # batch id -> jobs, inherited by the forked workers
_BATCH_IDS = itertools.count()


def _train_job(batch: int, index: int) -> tuple[int, TrainResult]:
    return index, _train_trial(*_FORK_JOBS[batch][index], bar=None)


def _train_forked(jobs, processes: int, bar) -> list[TrainResult]:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    batch = next(_BATCH_IDS)
    _FORK_JOBS[batch] = jobs  # set before the workers fork: third-party mechanisms need not pickle
    out: list[TrainResult | None] = [None] * len(jobs)
    # longest trials first, handed out one at a time: the processes finish together. A worker that
    # dies (e.g. out of memory) raises BrokenProcessPool here instead of hanging.
    order = sorted(range(len(jobs)), key=lambda i: -jobs[i][0].submissions)
    try:
        with ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("fork")) as pool:
            for future in as_completed([pool.submit(_train_job, batch, i) for i in order]):
                i, result = future.result()
                out[i] = result
                bar.update(int(jobs[i][0].submissions))
    finally:
        del _FORK_JOBS[batch]
    return out  # type: ignore[return-value]


_PROGRESS_EVERY = 2000  # submissions between progress updates of a single trial


def _train_trial(config: TrainConfig, record: bool, mechanism: Mechanism | None, bar=None) -> TrainResult:
    """One trial of Algorithm 1: set up its arrays, then drive :func:`pgc.kernel.run_trial`."""
    c = config
    hyper = c.hyper
    # ---- randomness: θ₀ and ψ_n from the seed; env and mechanism noise from its children ----
    trial_rng = np.random.default_rng(np.random.SeedSequence(c.seed))
    theta = glorot_uniform_theta(trial_rng, biases=hyper.biases)  # biases start at 0: same draws
    initial_theta = theta.copy()
    n_agents = -(-c.submissions // c.rounds) + c.workers  # agents cut off mid-episode never submit
    agent_psi = trial_rng.choice(np.asarray(c.gravities), size=n_agents)  # ψ_n ~ U(Ψ)
    # children 0 and 1 as ever; 2 (score noise) and 3 (shuffler) are drawn from only when protected
    env_gen, mech_gen, score_gen, order_gen = (np.random.Generator(np.random.PCG64(s))
                                               for s in np.random.SeedSequence(c.seed).spawn(4))
    score_mech = c.build_score_mechanism()

    # ---- mechanism: a compiled built-in, or the Protocol called from here -------------------
    mech = c.build_mechanism() if mechanism is None else mechanism
    if mechanism is None:
        record_mech = mechanism_record(mech, name=c.mechanism, rounds=c.rounds, factory_args={
            # the gradient's share of the agent's ε (all of it unless the score is privatized too)
            "epsilon": c.gradient_epsilon, "clip": c.clip, "reduced_dim": c.reduced_dim})
    else:
        record_mech = mechanism_record(mech)
    spec = compiled_spec(mech, hyper.dim)
    kind, epsilon, clip, reduced_dim, mech_scale = spec if spec is not None else (kernel.MECH_EXTERNAL, 0.0, 0.0, 1, 0.0)

    # ---- settings and state arrays ----------------------------------------------------------
    icfg = np.zeros(kernel.N_ICFG, np.int64)
    icfg[[kernel.I_WORKERS, kernel.I_SUBMISSIONS, kernel.I_ROUNDS, kernel.I_BUFFER, kernel.I_WINDOW,
          kernel.I_STOP_AT_SUCCESS, kernel.I_ZERO_INFO, kernel.I_MECH, kernel.I_REDUCED_DIM, kernel.I_CAP,
          kernel.I_BOOTSTRAP, kernel.I_SAMPLE, kernel.I_RECORD, kernel.I_PROTECT_SCORE, kernel.I_PROTECT_TIMING,
          kernel.I_PROTECT_ORDER, kernel.I_REWARD, kernel.I_N_STEP, kernel.I_MEAN_LOSS, kernel.I_OPTIMIZER,
          kernel.I_ALPHA_CLOCK]] = [
        c.workers, c.submissions, c.rounds, c.buffer_size, c.window, c.stop_at_success, c.zero_information,
        kind, reduced_dim, hyper.cap, hyper.bootstrap_truncated, hyper.action_selection == "sample", record,
        "score" in c.protect, "timing" in c.protect, "order" in c.protect, *kernel_gradient_rule(hyper),
        kernel.OPTIMIZER_RMSPROP if c.optimizer == "rmsprop" else kernel.OPTIMIZER_SGD,
        kernel.ALPHA_PER_STEP if c.exploration_clock == "steps" else kernel.ALPHA_PER_AGENT]
    fcfg = np.zeros(kernel.N_FCFG)
    fcfg[[kernel.F_LR, kernel.F_EXPLORE_START, kernel.F_EXPLORE_DECAY, kernel.F_TARGET, kernel.F_EPSILON,
          kernel.F_CLIP, kernel.F_MECH_SCALE, kernel.F_GAMMA, kernel.F_LAM, kernel.F_BETA, kernel.F_SCORE_SCALE,
          kernel.F_RMS_DECAY, kernel.F_RMS_EPS]] = [
        c.learning_rate, c.exploration_start, c.exploration_decay, c.target_score, epsilon, clip, mech_scale,
        hyper.gamma, hyper.lam, hyper.beta, 0.0 if score_mech is None else score_mech.scale,
        c.rmsprop_decay, RMSPROP_EPS]
    w = c.workers
    base_physics = c.physics.as_row()  # gravity replaced by each agent's ψ_n
    d = hyper.dim  # 112, or 131 with biases
    buf_sum = np.zeros(d)
    opt_state = np.zeros(d)  # RMSprop's running mean of squares (unused by SGD)
    ctr = np.zeros(kernel.N_COUNTERS, np.int64)
    lane_i = np.zeros((w, kernel.N_LANE_I), np.int64)
    lane_state = np.zeros((w, 4))
    lane_phys = np.zeros((w, len(PHYSICS_FIELDS)))
    lane_alpha = np.zeros(w)
    lane_theta = np.zeros((w, d))
    traj = np.zeros((w, hyper.cap, kernel.TRAJ_FIELDS))
    lane_grad = np.zeros((w, d))
    fin = np.zeros(w, np.int64)
    pending = np.zeros(d)
    noisy = np.zeros(d)
    prs_matrix = np.zeros((max(1, reduced_dim), d))
    scores = np.zeros(c.submissions, np.int64)
    score_out = np.zeros(c.submissions if score_mech is not None else 0)
    n_rec = c.submissions if record else 0
    rec_i = np.zeros((n_rec, kernel.N_REC_I), np.int64)
    rec_psi = np.zeros(n_rec)
    rec_grad = np.zeros((n_rec, d), np.float32)
    n_kept = c.submissions // c.buffer_size + 2 if record else 0
    kept_versions = np.zeros(n_kept, np.int64)
    kept_thetas = np.zeros((n_kept, d))
    pause_after = _PROGRESS_EVERY if bar is not None and not isinstance(bar, _NullBar) else 0
    reported = 0

    # ---- run: the compiled loop returns only to ask for a mechanism or to report progress ----
    while True:
        status = kernel.run_trial(env_gen, mech_gen, score_gen, order_gen, icfg, fcfg, agent_psi, base_physics,
                                  theta, buf_sum, opt_state, ctr, lane_i, lane_state, lane_phys, lane_alpha, lane_theta, traj,
                                  lane_grad, fin, pending, noisy, prs_matrix, pause_after,
                                  scores, score_out, rec_i, rec_psi, rec_grad, kept_versions, kept_thetas)
        if status == kernel.STATUS_DONE:
            break
        if status == kernel.STATUS_NEED_MECHANISM:
            noisy[:] = _call_external(mech, pending, mech_gen, d)
        if bar is not None and (status == kernel.STATUS_PAUSED or ctr[kernel.C_SUBMITTED] - reported >= _PROGRESS_EVERY):
            bar.update(int(ctr[kernel.C_SUBMITTED]) - reported)
            reported = int(ctr[kernel.C_SUBMITTED])
    if bar is not None:
        bar.update(c.submissions - reported)  # a trial stopped at its first success counts as done

    n = int(ctr[kernel.C_SUBMITTED])
    true_scores = None
    seen = scores[:n]
    if score_mech is not None:  # the aggregator saw the privatized scores; the true ones are evaluation-only
        true_scores, seen = scores[:n].copy(), score_out[:n]
    transcript = ground_truth = None
    if record:
        kept = int(ctr[kernel.C_KEPT])
        versions, thetas = kept_versions[:kept], kept_thetas[:kept]
        if versions[-1] != ctr[kernel.C_VERSION]:  # never happens: kept after every tick that updated
            raise AssertionError("final θ version was not kept")
        ri = rec_i[:n]
        transcript = Transcript(
            agent=ri[:, kernel.R_AGENT].astype(np.int32), round=ri[:, kernel.R_ROUND].astype(np.int16),
            worker=ri[:, kernel.R_WORKER].astype(np.int16), model_version=ri[:, kernel.R_VERSION].copy(),
            gradient=rec_grad[:n].copy(),
            score=(seen.copy() if score_mech is not None else seen.astype(np.int16 if hyper.cap < 32_000 else np.int32)),
            start_tick=ri[:, kernel.R_START].copy(), arrival_tick=ri[:, kernel.R_ARRIVAL].copy(),
            theta_versions=versions.copy(), thetas=thetas.copy(),
            protection=c.protection() if c.protect else None)
        ground_truth = GroundTruth(psi=rec_psi[:n].copy(), terminated=ri[:, kernel.R_TERMINATED].astype(np.bool_),
                                   nonfinite=ri[:, kernel.R_NONFINITE].astype(np.bool_), true_score=true_scores)
    return TrainResult(config=c, initial_theta=initial_theta, theta=theta, scores=seen.copy(),
                       updates=int(ctr[kernel.C_VERSION]), agent_steps=int(ctr[kernel.C_STEPS]),
                       nonfinite_gradients=int(ctr[kernel.C_NONFINITE]), transcript=transcript,
                       ground_truth=ground_truth, mechanism=record_mech,
                       true_scores=true_scores, ticks=int(ctr[kernel.C_TICK]))


def _call_external(mechanism: Mechanism, clean: np.ndarray, rng: np.random.Generator, d: int) -> np.ndarray:
    """A third-party mechanism on one sanitized submission; its output must be a finite (1, d) row."""
    out = np.asarray(mechanism(clean[None, :].copy(), rng), dtype=np.float64)
    if out.shape != (1, d):
        raise ValueError(f"mechanism {type(mechanism).__name__} returned shape {out.shape}, expected (1, {d})")
    if not np.all(np.isfinite(out)):
        raise ValueError(f"mechanism {type(mechanism).__name__} returned a non-finite gradient")
    return out[0]


class _NullBar:
    def update(self, n: int) -> None: ...

    def close(self) -> None: ...


def _progress_bar(total: int, enabled: bool):
    if not enabled:
        return _NullBar()
    from tqdm import tqdm

    return tqdm(total=total, unit="sub", smoothing=0.05, mininterval=0.5)
