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

Execution: a trial runs start to end inside one compiled function (:func:`pgc.a3c.kernel.run_trial`):
its W lanes, trajectory buffers, θ and buffer (a few hundred KiB) stay in cache, and for the
built-in mechanisms no Python runs per step or per submission. Trials are independent, so a batch
is a loop over trials, optionally spread over forked processes; each trial draws only from
generators spawned from its own seed, which makes its result independent of the batch.
"""

from __future__ import annotations

import contextvars
import itertools
import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pgc.errors import UserError
from pgc.mechanisms import Mechanism, mechanism_record
from pgc.tasks import die_with_parent
from pgc.tasks.progress import NullProgress

from . import kernel
from .config import MAX_EPSILON, TrainConfig, json_float  # noqa: F401  (pgc.a3c.trainer.TrainConfig is public API)
from .env import PHYSICS_FIELDS
from .kernel import layout
from .metrics import average_scores, first_success_time
from .model import glorot_uniform_theta
from .rollout import kernel_gradient_rule
from .transcript import CanaryRecord, GroundTruth, Transcript
from .twins import compiled_spec

RMSPROP_EPS = 1e-7  # Keras RMSprop's ε (added to √s)
MAX_TRIALS = 100_000  # trials of one batch
MEMORY_FRACTION = 0.5  # a batch may hold at most this share of the machine's memory


def estimate_batch_bytes(configs: Sequence[TrainConfig], record: bool | Sequence[bool] = True) -> int:
    """Memory a batch holds at its end (results of every trial, transcripts included), in bytes."""
    flags = [bool(record)] * len(configs) if isinstance(record, bool) else list(record)
    total = 0
    for c, rec in zip(configs, flags, strict=False):
        n = c.total_submissions
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


def check_batch_size(configs: Sequence[TrainConfig], record: bool | Sequence[bool] = True) -> None:
    """Refuse, before anything is allocated, a batch with too many trials or too large for memory."""
    if len(configs) > MAX_TRIALS:
        raise UserError(f"a batch may hold at most {MAX_TRIALS:,} trials, got {len(configs):,}")
    need, limit = estimate_batch_bytes(configs, record), memory_limit_bytes()
    if need > limit:
        raise UserError(
            f"the batch would hold about {need / 2**30:.1f} GiB of results, more than the limit of "
            f"{limit / 2**30:.1f} GiB ({MEMORY_FRACTION:.0%} of this machine's memory); use fewer "
            "trials or submissions, or no transcripts"
        )


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
    # with canary agents (config.canaries > 0, recorded runs): what the auditor knows of them
    canaries: CanaryRecord | None = None

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
            "fst": json_float(self.fst),
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
            out.update(
                note="fst, final_mu and best_mu are computed from the privatized scores the aggregator saw",
                fst_true_scores=json_float(self.true_fst),
                final_mu_true_scores=float(true_mu[-1]) if true_mu.size else None,
            )
        return out


def train(config: TrainConfig, *, record_transcript: bool = False, progress: bool = False) -> TrainResult:
    """Run one trial (see :func:`train_batch`)."""
    return train_batch([config], record_transcripts=record_transcript, progress=progress)[0]


def train_batch(
    configs: Sequence[TrainConfig],
    *,
    record_transcripts: bool | Sequence[bool] = False,
    progress: bool = False,
    mechanisms: Sequence[Mechanism] | None = None,
    processes: int = 1,
    executor=None,
) -> list[TrainResult]:
    """Run K independent trials (any mix of settings and seeds); results in the order of ``configs``.

    Each trial runs start to end in one compiled loop (:func:`pgc.a3c.kernel.run_trial`): its W workers,
    mechanism and aggregator stay in L1 cache, and no Python code runs per step or per submission
    for the built-in mechanisms. A trial's randomness comes from its own ``seed`` only (θ₀ and ψ_n
    from ``SeedSequence(seed)``, environment and mechanism noise from its two spawned children), so
    a trial's result does not depend on the other trials of the batch nor on ``processes``.

    ``processes > 1`` hands the trials to that many forked processes. ``pgc.mechanisms`` overrides each
    trial's registry mechanism (e.g. a third-party implementation of the :class:`Mechanism`
    Protocol): such a mechanism is called once per submission with a ``(1, d)`` row (d = 112, or 131 with biases)
    and the trial's mechanism generator, exactly as the built-in fast path draws its noise, so a built-in
    mechanism passed this way reproduces the fast-path run. ``record_transcripts`` keeps the
    transcript of the chosen trials. ``executor`` (anything with ``Executor.map``'s signature, e.g. a
    Ray engine; default :data:`DEFAULT_EXECUTOR`'s value) runs the trials instead, with the same results.
    """
    executor = executor if executor is not None else DEFAULT_EXECUTOR.get()
    configs = list(configs)
    if not configs:
        raise UserError("need at least one config")
    k_trials = len(configs)
    record = [bool(record_transcripts)] * k_trials if isinstance(record_transcripts, bool) else list(record_transcripts)
    if len(record) != k_trials:
        raise UserError("record_transcripts must have one flag per config")
    if mechanisms is not None and len(mechanisms) != k_trials:
        raise UserError("mechanisms must have one entry per config")
    if not isinstance(processes, int) or isinstance(processes, bool) or processes < 1:
        raise UserError(f"processes must be a positive integer, got {processes!r}")
    check_batch_size(configs, record)
    mechs = [None] * k_trials if mechanisms is None else list(mechanisms)
    jobs = list(zip(configs, record, mechs, strict=True))
    bar = _progress_bar(sum(c.total_submissions for c in configs), progress)
    try:
        if executor is not None:
            results = list(executor.map(_train_trial, configs, record, mechs))
            bar.update(sum(c.total_submissions for c in configs))
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
        with ProcessPoolExecutor(
            processes,
            mp_context=multiprocessing.get_context("fork"),
            initializer=die_with_parent,
            initargs=(os.getpid(),),
        ) as pool:  # workers die with this process
            for future in as_completed([pool.submit(_train_job, batch, i) for i in order]):
                i, result = future.result()
                out[i] = result
                bar.update(int(jobs[i][0].total_submissions))
    finally:
        del _FORK_JOBS[batch]
    return out  # type: ignore[return-value]


_PROGRESS_EVERY = 2000  # submissions between progress updates of a single trial


def _train_trial(config: TrainConfig, record: bool, mechanism: Mechanism | None, bar=None) -> TrainResult:
    """One trial of Algorithm 1: set up its arrays, then drive :func:`pgc.a3c.kernel.run_trial`."""
    c = config
    draws = _TrialDraws.from_seed(c)
    score_mech = c.build_score_mechanism()
    mech, record_mech, spec = _trial_mechanism(c, mechanism)
    icfg, fcfg = _kernel_settings(c, spec, score_mech, record, canary_agent_base=draws.agent_psi.size)
    _kind, _epsilon, _clip, reduced_dim, _scale = spec
    state = _TrialState.allocate(c, reduced_dim=reduced_dim, record=record, scored=score_mech is not None)
    _run_kernel(c, draws, state, icfg, fcfg, mech, bar)
    return _trial_result(c, draws, state, record, record_mech, scored=score_mech is not None)


@dataclass
class _TrialDraws:
    """θ₀, ψ_n, the canaries' draws and the trial's four generators, all from the trial's seed."""

    theta: np.ndarray
    initial_theta: np.ndarray
    agent_psi: np.ndarray
    generators: tuple  # environment, mechanism noise, score noise, shuffler
    canary_psi: np.ndarray
    canary_theta: np.ndarray

    @classmethod
    def from_seed(cls, c: TrainConfig) -> _TrialDraws:
        trial_rng = np.random.default_rng(np.random.SeedSequence(c.seed))
        theta = glorot_uniform_theta(trial_rng, biases=c.hyper.biases)  # biases start at 0: same draws
        n_agents = -(-c.submissions // c.rounds) + c.workers  # agents cut off mid-episode never submit
        agent_psi = trial_rng.choice(np.asarray(c.gravities), size=n_agents)  # ψ_n ~ U(Ψ)
        # child 0: environment, 1: mechanism noise; 2 (score noise) and 3 (shuffler) are drawn from only when protected
        generators = tuple(np.random.Generator(np.random.PCG64(s)) for s in np.random.SeedSequence(c.seed).spawn(4))
        # child 4 (canaries only): the canaries' fair coins, then ψ for the regular agents that the M
        # canaries' places in the schedule may add beyond n_agents; a run without canaries never draws from it
        canary_psi, canary_theta = np.zeros(0), np.zeros(0)
        if c.canaries:
            canary_gen = np.random.Generator(np.random.PCG64(np.random.SeedSequence(c.seed, spawn_key=(4,))))
            coins = canary_gen.integers(0, 2, size=c.canaries)
            canary_psi = np.asarray(c.canary_pair, dtype=np.float64)[coins]
            agent_psi = np.concatenate(
                [agent_psi, canary_gen.choice(np.asarray(c.gravities), size=c.canaries + c.workers)]
            )
            if c.canary_model == "crafted":
                canary_theta = np.asarray(c.canary_theta, dtype=np.float64)
        return cls(theta, theta.copy(), agent_psi, generators, canary_psi, canary_theta)


def _trial_mechanism(c: TrainConfig, mechanism: Mechanism | None):
    """The mechanism (a compiled built-in, or the Protocol called from the loop), its record and kernel spec."""
    mech = c.build_mechanism() if mechanism is None else mechanism
    if mechanism is None:
        record_mech = mechanism_record(
            mech,
            name=c.mechanism,
            rounds=c.rounds,
            factory_args={
                # the gradient's share of the agent's ε (all of it unless the score is privatized too)
                "epsilon": c.gradient_epsilon,
                "clip": c.clip,
                "reduced_dim": c.reduced_dim,
                **({} if c.delta is None else {"delta": c.delta}),
            },
        )  # δ of an (ε, δ) claim, per agent
    else:
        record_mech = mechanism_record(mech)
    spec = compiled_spec(mech, c.hyper.dim)
    return mech, record_mech, spec if spec is not None else (kernel.MECH_EXTERNAL, 0.0, 0.0, 1, 0.0)


def _kernel_settings(c: TrainConfig, spec, score_mech, record: bool, canary_agent_base: int):
    """The integer and float settings vectors that :func:`pgc.a3c.kernel.run_trial` reads."""
    hyper = c.hyper
    kind, epsilon, clip, reduced_dim, mech_scale = spec
    reward_kind, n_step, mean_loss = kernel_gradient_rule(hyper)
    icfg = layout.pack(
        layout.INT_SETTINGS,
        {
            "workers": c.workers,
            "submissions": c.total_submissions,
            "rounds": c.rounds,
            "buffer": c.buffer_size,
            "window": c.window,
            "stop_at_success": c.stop_at_success,
            "zero_info": c.zero_information,
            "mech": kind,
            "reduced_dim": reduced_dim,
            "cap": hyper.cap,
            "bootstrap": hyper.bootstrap_truncated,
            "sample": hyper.action_selection == "sample",
            "record": record,
            "protect_score": "score" in c.protect,
            "protect_timing": "timing" in c.protect,
            "protect_order": "order" in c.protect,
            "reward": reward_kind,
            "n_step": n_step,
            "mean_loss": mean_loss,
            "optimizer": layout.OPTIMIZER_RMSPROP if c.optimizer == "rmsprop" else layout.OPTIMIZER_SGD,
            "alpha_clock": layout.ALPHA_PER_STEP if c.exploration_clock == "steps" else layout.ALPHA_PER_AGENT,
            "canaries": c.canaries,
            "canary_crafted": c.canary_model == "crafted",
            "canary_update": c.canary_update == "include",
            "canary_agent_base": canary_agent_base,
            "canary_spread": max(c.canaries, c.total_submissions - c.canary_start - 2 * c.workers),
            "canary_start": c.canary_start,
        },
        np.int64,
    )
    fcfg = layout.pack(
        layout.FLOAT_SETTINGS,
        {
            "lr": c.learning_rate,
            "explore_start": c.exploration_start,
            "explore_decay": c.exploration_decay,
            "target": c.target_score,
            "epsilon": epsilon,
            "clip": clip,
            "mech_scale": mech_scale,
            "gamma": hyper.gamma,
            "lam": hyper.lam,
            "beta": hyper.beta,
            "score_scale": 0.0 if score_mech is None else score_mech.scale,
            "rms_decay": c.rmsprop_decay,
            "rms_eps": RMSPROP_EPS,
            "planted_noise_factor": c.planted_noise_factor,
        },
        np.float64,
    )
    return icfg, fcfg


@dataclass
class _TrialState:
    """The kernel's working arrays (θ's buffer, the W lanes, trajectories) and its output records."""

    buf_sum: np.ndarray
    opt_state: np.ndarray  # RMSprop's running mean of squares (unused by SGD)
    ctr: np.ndarray
    lane_i: np.ndarray
    lane_state: np.ndarray
    lane_phys: np.ndarray
    lane_alpha: np.ndarray
    lane_theta: np.ndarray
    traj: np.ndarray
    lane_grad: np.ndarray
    fin: np.ndarray
    pending: np.ndarray
    noisy: np.ndarray
    prs_matrix: np.ndarray
    scores: np.ndarray
    score_out: np.ndarray
    rec_i: np.ndarray
    rec_psi: np.ndarray
    rec_grad: np.ndarray
    kept_versions: np.ndarray
    kept_thetas: np.ndarray

    @classmethod
    def allocate(cls, c: TrainConfig, reduced_dim: int, record: bool, scored: bool) -> _TrialState:
        w, d = c.workers, c.hyper.dim  # d: 112, or 131 with biases
        total = c.total_submissions + (c.workers if c.canaries else 0)  # canaries: up to W arrivals after N + M
        n_rec = total if record else 0
        n_kept = total // c.buffer_size + 2 if record else 0
        return cls(
            buf_sum=np.zeros(d),
            opt_state=np.zeros(d),
            ctr=np.zeros(kernel.N_COUNTERS, np.int64),
            lane_i=np.zeros((w, kernel.N_LANE_I), np.int64),
            lane_state=np.zeros((w, 4)),
            lane_phys=np.zeros((w, len(PHYSICS_FIELDS))),
            lane_alpha=np.zeros(w),
            lane_theta=np.zeros((w, d)),
            traj=np.zeros((w, c.hyper.cap, kernel.TRAJ_FIELDS)),
            lane_grad=np.zeros((w, d)),
            fin=np.zeros(w, np.int64),
            pending=np.zeros(d),
            noisy=np.zeros(d),
            prs_matrix=np.zeros((max(1, reduced_dim), d)),
            scores=np.zeros(total, np.int64),
            score_out=np.zeros(total if scored else 0),
            rec_i=np.zeros((n_rec, kernel.N_REC_I), np.int64),
            rec_psi=np.zeros(n_rec),
            rec_grad=np.zeros((n_rec, d), np.float32),
            kept_versions=np.zeros(n_kept, np.int64),
            kept_thetas=np.zeros((n_kept, d)),
        )


def _run_kernel(c: TrainConfig, draws: _TrialDraws, s: _TrialState, icfg, fcfg, mech, bar) -> None:
    """The compiled loop; it returns only to ask for a mechanism or to report progress."""
    env_gen, mech_gen, score_gen, order_gen = draws.generators
    base_physics = c.physics.as_row()  # gravity replaced by each agent's ψ_n
    pause_after = _PROGRESS_EVERY if bar is not None and not isinstance(bar, NullProgress) else 0
    reported = 0
    while True:
        status = kernel.run_trial(
            env_gen,
            mech_gen,
            score_gen,
            order_gen,
            icfg,
            fcfg,
            draws.agent_psi,
            base_physics,
            draws.theta,
            s.buf_sum,
            s.opt_state,
            s.ctr,
            s.lane_i,
            s.lane_state,
            s.lane_phys,
            s.lane_alpha,
            s.lane_theta,
            s.traj,
            s.lane_grad,
            s.fin,
            s.pending,
            s.noisy,
            s.prs_matrix,
            pause_after,
            s.scores,
            s.score_out,
            s.rec_i,
            s.rec_psi,
            s.rec_grad,
            s.kept_versions,
            s.kept_thetas,
            draws.canary_psi,
            draws.canary_theta,
        )
        if status == kernel.STATUS_DONE:
            break
        if status == kernel.STATUS_NEED_MECHANISM:
            s.noisy[:] = _call_external(mech, s.pending, mech_gen, c.hyper.dim)
        if bar is not None and (
            status == kernel.STATUS_PAUSED or s.ctr[kernel.C_SUBMITTED] - reported >= _PROGRESS_EVERY
        ):
            bar.update(int(s.ctr[kernel.C_SUBMITTED]) - reported)
            reported = int(s.ctr[kernel.C_SUBMITTED])
    if bar is not None:
        bar.update(max(0, c.total_submissions - reported))  # a trial stopped at its first success counts as done


def _trial_result(
    c: TrainConfig, draws: _TrialDraws, s: _TrialState, record: bool, record_mech, scored: bool
) -> TrainResult:
    """The trial's scores, final θ and (when recorded) its transcript, ground truth and canaries."""
    n = int(s.ctr[kernel.C_SUBMITTED])
    true_scores = None
    seen = s.scores[:n]
    if scored:  # the aggregator saw the privatized scores; the true ones are evaluation-only
        true_scores, seen = s.scores[:n].copy(), s.score_out[:n]
    transcript = ground_truth = canaries = None
    if record:
        kept = int(s.ctr[kernel.C_KEPT])
        versions, thetas = s.kept_versions[:kept], s.kept_thetas[:kept]
        if versions[-1] != s.ctr[kernel.C_VERSION]:  # never happens: kept after every tick that updated
            raise AssertionError("final θ version was not kept")
        ri = s.rec_i[:n]
        transcript = Transcript(
            agent=ri[:, kernel.R_AGENT].astype(np.int32),
            round=ri[:, kernel.R_ROUND].astype(np.int16),
            worker=ri[:, kernel.R_WORKER].astype(np.int16),
            model_version=ri[:, kernel.R_VERSION].copy(),
            gradient=s.rec_grad[:n].copy(),
            score=(seen.copy() if scored else seen.astype(np.int16 if c.hyper.cap < 32_000 else np.int32)),
            start_tick=ri[:, kernel.R_START].copy(),
            arrival_tick=ri[:, kernel.R_ARRIVAL].copy(),
            theta_versions=versions.copy(),
            thetas=thetas.copy(),
            protection=c.protection() if c.protect else None,
        )
        ground_truth = GroundTruth(
            psi=s.rec_psi[:n].copy(),
            terminated=ri[:, kernel.R_TERMINATED].astype(np.bool_),
            nonfinite=ri[:, kernel.R_NONFINITE].astype(np.bool_),
            true_score=true_scores,
        )
        if c.canaries:
            positions = np.flatnonzero(ri[:, kernel.R_CANARY] >= 0)
            canaries = CanaryRecord(
                positions=positions,
                index=ri[positions, kernel.R_CANARY].copy(),
                theta=draws.canary_theta.copy() if c.canary_model == "crafted" else None,
                setup=c.canary_setup(),
            )
    return TrainResult(
        config=c,
        initial_theta=draws.initial_theta,
        theta=draws.theta,
        scores=seen.copy(),
        updates=int(s.ctr[kernel.C_VERSION]),
        agent_steps=int(s.ctr[kernel.C_STEPS]),
        nonfinite_gradients=int(s.ctr[kernel.C_NONFINITE]),
        transcript=transcript,
        ground_truth=ground_truth,
        mechanism=record_mech,
        true_scores=true_scores,
        ticks=int(s.ctr[kernel.C_TICK]),
        canaries=canaries,
    )


def _call_external(mechanism: Mechanism, clean: np.ndarray, rng: np.random.Generator, d: int) -> np.ndarray:
    """A third-party mechanism on one sanitized submission; its output must be a finite (1, d) row."""
    out = np.asarray(mechanism(clean[None, :].copy(), rng), dtype=np.float64)
    if out.shape != (1, d):
        raise UserError(f"mechanism {type(mechanism).__name__} returned shape {out.shape}, expected (1, {d})")
    if not np.all(np.isfinite(out)):
        raise UserError(f"mechanism {type(mechanism).__name__} returned a non-finite gradient")
    return out[0]


def _progress_bar(total: int, enabled: bool):
    from pgc.tasks.progress import progress_bar

    return progress_bar(total, "submission", "training", enabled)
