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

All trials of a batch share one pool of lanes: a finished trial hands its W lanes to the next
pending trial at once, so no lane idles while stragglers run.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields
from typing import Sequence

import numpy as np

from .env import PAPER_GRAVITIES, TARGET_SCORE, CartPoleParams
from .mechanisms import MECHANISMS, Mechanism, make_mechanism, nonfinite_rows, split_rounds
from .metrics import WINDOW, average_scores, first_success_time
from .model import DIM, glorot_uniform_theta
from .rollout import A3CHyperparams, LaneEngine
from .transcript import GroundTruth, Transcript


@dataclass(frozen=True)
class TrainConfig:
    """One trial's settings; defaults are the paper's (§4). Validated on construction."""

    mechanism: str = "laplace"
    epsilon: float = 1.0  # per agent; with rounds = T each submission spends ε/T (§3.2.1)
    clip: float | None = None  # None: the paper's C for the mechanism (0.01 Laplace/none, 1 PRS)
    reduced_dim: int | None = None  # PRS d̂; None: max{1, min{d, ⌊ε/2.5⌋}}
    buffer_size: int = 1  # MAX_BUF
    submissions: int = 10_000  # N
    workers: int = 9  # W
    gravities: tuple[float, ...] = PAPER_GRAVITIES  # Ψ
    learning_rate: float = 0.5  # η
    exploration_start: float = 0.5
    exploration_decay: float = 1800.0
    rounds: int = 1  # submissions per agent (T of §3.2.1)
    hyper: A3CHyperparams = field(default_factory=A3CHyperparams)
    physics: CartPoleParams = field(default_factory=CartPoleParams)  # gravity replaced by ψ_n
    target_score: float = TARGET_SCORE
    window: int = WINDOW
    stop_at_success: bool = False
    zero_information: bool = False  # control: the mechanism is fed a zero gradient
    seed: int = 0

    def __post_init__(self) -> None:
        if self.mechanism not in MECHANISMS:
            raise ValueError(f"unknown mechanism {self.mechanism!r}; known: {', '.join(sorted(MECHANISMS))}")
        object.__setattr__(self, "gravities", tuple(float(g) for g in self.gravities))
        if not self.gravities or not all(math.isfinite(g) for g in self.gravities):
            raise ValueError("gravities Ψ must be a non-empty tuple of finite numbers")
        for name in ("buffer_size", "submissions", "workers", "rounds", "window"):
            value = getattr(self, name)
            if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if self.submissions > 10_000_000:
            raise ValueError("submissions must be <= 10,000,000")
        if not (math.isfinite(self.learning_rate) and self.learning_rate > 0):
            raise ValueError(f"learning_rate must be > 0, got {self.learning_rate}")
        if not (0 <= self.exploration_start <= 1) or not self.exploration_decay > 0:
            raise ValueError("exploration_start must lie in [0, 1] and exploration_decay be > 0")
        if not isinstance(self.seed, (int, np.integer)) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {self.seed!r}")
        self.build_mechanism()  # validates ε, C, d̂ for the mechanism

    def build_mechanism(self) -> Mechanism:
        """The per-submission mechanism (ε split over ``rounds``)."""
        eps = math.inf if self.mechanism == "none" else self.epsilon
        return split_rounds(make_mechanism(self.mechanism, eps, self.clip, self.reduced_dim), self.rounds)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["gravities"] = list(self.gravities)
        d["epsilon"] = _json_float(self.epsilon)
        if self.clip is not None:
            d["clip"] = _json_float(self.clip)
        return d

    @classmethod
    def from_dict(cls, data: dict) -> "TrainConfig":
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown config keys: {sorted(unknown)}")
        data = dict(data)
        if isinstance(data.get("hyper"), dict):
            data["hyper"] = A3CHyperparams(**data["hyper"])
        if isinstance(data.get("physics"), dict):
            data["physics"] = CartPoleParams(**data["physics"])
        if "gravities" in data:
            data["gravities"] = tuple(data["gravities"])
        for key in ("epsilon", "clip"):  # JSON has no inf: "inf" strings are accepted
            if isinstance(data.get(key), str):
                try:
                    data[key] = float(data[key])
                except ValueError:
                    raise ValueError(f"config {key} must be a number, got {data[key]!r}") from None
        return cls(**data)

    def replace(self, **changes) -> "TrainConfig":
        return TrainConfig(**{**{f.name: getattr(self, f.name) for f in fields(self)}, **changes})


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

    @property
    def fst(self) -> float:
        return first_success_time(self.scores, self.config.target_score, self.config.window)

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
        }


@dataclass
class _Recorder:
    """Per-trial transcript being built (lists of per-tick chunks)."""

    chunks: dict[str, list[np.ndarray]] = field(default_factory=dict)
    theta_versions: dict[int, np.ndarray] = field(default_factory=dict)

    def add(self, **arrays: np.ndarray) -> None:
        for name, arr in arrays.items():
            self.chunks.setdefault(name, []).append(arr)

    def column(self, name: str, dtype) -> np.ndarray:
        parts = self.chunks.get(name)
        return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype)


def train(config: TrainConfig, *, record_transcript: bool = False, progress: bool = False) -> TrainResult:
    """Run one trial (see :func:`train_batch`)."""
    return train_batch([config], record_transcripts=record_transcript, progress=progress)[0]


def train_batch(configs: Sequence[TrainConfig], *, record_transcripts: bool | Sequence[bool] = False,
                max_lanes: int = 8192, progress: bool = False,
                mechanisms: Sequence[Mechanism] | None = None, processes: int = 1) -> list[TrainResult]:
    """Run K independent trials (any mix of settings and seeds) in one vectorised batch.

    Randomness: a trial's initial θ and its agents' ψ come from its own ``seed``; environment and
    mechanism noise come from one root ``SeedSequence`` of the seeds of the trials sharing a process,
    so the same call (same configs, same ``processes``) reproduces bit for bit.
    ``processes > 1`` deals the trials round-robin to that many forked processes (one compiled
    engine each, no per-step thread synchronisation). ``mechanisms`` overrides each trial's registry
    mechanism (e.g. a third-party implementation); ``record_transcripts`` keeps the transcript of
    the chosen trials.
    """
    configs = list(configs)
    if not configs:
        raise ValueError("need at least one config")
    k_trials = len(configs)
    record = [bool(record_transcripts)] * k_trials if isinstance(record_transcripts, bool) else list(record_transcripts)
    if len(record) != k_trials:
        raise ValueError("record_transcripts must have one flag per config")
    if mechanisms is not None and len(mechanisms) != k_trials:
        raise ValueError("mechanisms must have one entry per config")
    if not isinstance(processes, int) or processes < 1:
        raise ValueError(f"processes must be a positive integer, got {processes!r}")
    processes = min(processes, k_trials)
    if processes > 1:
        return _train_sharded(configs, record, max_lanes, progress, mechanisms, processes)
    return _train_one_process(configs, record, max_lanes, progress, mechanisms)


_SHARD_JOBS: list = []


def _run_shard(index: int) -> list[TrainResult]:
    configs, record, max_lanes, progress, mechanisms = _SHARD_JOBS[index]
    return _train_one_process(configs, record, max_lanes, progress, mechanisms)


def _train_sharded(configs, record, max_lanes, progress, mechanisms, processes) -> list[TrainResult]:
    import multiprocessing

    shards = [list(range(i, len(configs), processes)) for i in range(processes)]
    _SHARD_JOBS[:] = [([configs[i] for i in idx], [record[i] for i in idx], max(1, max_lanes // processes),
                       progress and n == 0, None if mechanisms is None else [mechanisms[i] for i in idx])
                      for n, idx in enumerate(shards)]
    try:
        with multiprocessing.get_context("fork").Pool(processes) as pool:
            parts = pool.map(_run_shard, range(processes))
    finally:
        _SHARD_JOBS.clear()
    out: list[TrainResult | None] = [None] * len(configs)
    for idx, part in zip(shards, parts):
        for i, r in zip(idx, part):
            out[i] = r
    return out  # type: ignore[return-value]


def _train_one_process(configs, record, max_lanes, progress, mechanisms) -> list[TrainResult]:
    k_trials = len(configs)
    hyper = configs[0].hyper
    if any(c.hyper != hyper for c in configs):
        raise ValueError("all trials of a batch must share A3CHyperparams (one compiled engine)")
    if max(c.workers for c in configs) > max_lanes:
        raise ValueError("max_lanes is smaller than a trial's worker count")

    root = np.random.SeedSequence([c.seed for c in configs] + [k_trials])
    env_rng, mech_seq = (np.random.Generator(np.random.PCG64(s)) for s in root.spawn(2))

    # ---- mechanisms, grouped so each distinct one is called once per tick -------------------
    mech_objs = [m for m in mechanisms] if mechanisms is not None else [c.build_mechanism() for c in configs]
    group_keys: dict[object, int] = {}
    trial_group = np.empty(k_trials, np.int64)
    group_mech: list[Mechanism] = []
    for k, m in enumerate(mech_objs):
        key = m if mechanisms is None else id(m)
        if key not in group_keys:
            group_keys[key] = len(group_mech)
            group_mech.append(m)
        trial_group[k] = group_keys[key]
    single_group = len(group_mech) == 1
    mech_rngs = [np.random.Generator(np.random.PCG64(s)) for s in np.random.SeedSequence(mech_seq.integers(2**63)).spawn(len(group_mech))]

    # ---- per-trial state -------------------------------------------------------------------
    n_sub = np.array([c.submissions for c in configs], np.int64)
    n_max = int(n_sub.max())
    buf_size = np.array([c.buffer_size for c in configs], np.int64)
    lr = np.array([c.learning_rate for c in configs])
    rounds = np.array([c.rounds for c in configs], np.int64)
    zero_info = np.array([c.zero_information for c in configs])
    any_zero_info = bool(zero_info.any())
    stop_early = np.array([c.stop_at_success for c in configs])
    window = np.array([c.window for c in configs], np.int64)
    target = np.array([c.target_score for c in configs])
    theta = np.empty((k_trials, DIM))
    max_agents = max(-(-c.submissions // c.rounds) + c.workers for c in configs)
    agent_psi = np.zeros((k_trials, max_agents))
    for k, c in enumerate(configs):
        trial_rng = np.random.default_rng(np.random.SeedSequence(c.seed))
        theta[k] = glorot_uniform_theta(trial_rng)
        n_agents = -(-c.submissions // c.rounds) + c.workers  # agents cut off mid-episode never submit
        agent_psi[k, :n_agents] = trial_rng.choice(np.asarray(c.gravities), size=n_agents)  # ψ_n ~ U(Ψ)
    trial_physics = np.stack([c.physics.as_row() for c in configs])
    explore_start = np.array([c.exploration_start for c in configs])
    explore_decay = np.array([c.exploration_decay for c in configs])
    initial_theta = theta.copy()
    buf_sum = np.zeros((k_trials, DIM))
    buf_count = np.zeros(k_trials, np.int64)
    version = np.zeros(k_trials, np.int64)
    submitted = np.zeros(k_trials, np.int64)
    agents_started = np.zeros(k_trials, np.int64)
    steps = np.zeros(k_trials, np.int64)
    nonfinite = np.zeros(k_trials, np.int64)
    finished_trial = np.zeros(k_trials, np.bool_)
    trial_start_tick = np.zeros(k_trials, np.int64)
    scores = np.zeros((k_trials, n_max), np.int16 if hyper.cap < 32_000 else np.int32)
    recorders = {k: _Recorder() for k in range(k_trials) if record[k]}
    for k, rec in recorders.items():
        rec.theta_versions[0] = theta[k].copy()

    # ---- lane pool -------------------------------------------------------------------------
    total_workers = sum(c.workers for c in configs)
    n_lanes = min(max_lanes, total_workers)
    engine = LaneEngine(n_lanes, hyper)
    lane_trial = np.full(n_lanes, -1, np.int64)
    lane_worker = np.zeros(n_lanes, np.int64)
    lane_agent = np.zeros(n_lanes, np.int64)
    lane_round = np.zeros(n_lanes, np.int64)
    lane_version = np.zeros(n_lanes, np.int64)
    lane_start = np.zeros(n_lanes, np.int64)
    free_lanes = list(range(n_lanes))
    pending = list(range(k_trials))
    tick = 0

    def start_agents(lanes: np.ndarray, same_agent: np.ndarray) -> None:
        """(Re)start episodes on ``lanes``; ``same_agent`` marks lanes continuing an agent's rounds."""
        k = lane_trial[lanes]
        new = ~same_agent
        if new.any():
            kn = k[new]
            # agent indices in start order, lanes ordered by (trial, worker)
            order = np.lexsort((lane_worker[lanes[new]], kn))
            ln = lanes[new][order]
            kn = kn[order]
            first = np.searchsorted(kn, kn, side="left")
            idx = agents_started[kn] + (np.arange(kn.size) - first)
            lane_agent[ln] = idx
            lane_round[ln] = 0
            np.add.at(agents_started, kn, 1)
        lane_round[lanes[same_agent]] += 1
        ag = lane_agent[lanes]
        phys = trial_physics[k]
        phys[:, 0] = agent_psi[k, ag]
        alpha = np.maximum(0.0, explore_start[k] - ag / explore_decay[k])  # §4: α = max{0, 0.5 − n/1800}
        lane_version[lanes] = version[k]
        lane_start[lanes] = tick - trial_start_tick[k]
        engine.start(lanes, theta[k], phys, alpha, env_rng)

    def launch_pending() -> None:
        while pending and len(free_lanes) >= configs[pending[0]].workers:
            k = pending.pop(0)
            w = configs[k].workers
            lanes = np.array(sorted(free_lanes[:w]))
            del free_lanes[:w]
            lane_trial[lanes] = k
            lane_worker[lanes] = np.arange(w)
            trial_start_tick[k] = tick
            start_agents(lanes, np.zeros(w, np.bool_))

    launch_pending()
    bar = _progress_bar(int(n_sub.sum()), progress)
    while not finished_trial.all():
        # ---- every worker plays one step -------------------------------------------------
        fin = engine.tick(env_rng)
        tick += engine.last_ticks
        if fin.size == 0:
            continue
        k = lane_trial[fin]
        order = np.argsort(k, kind="stable")  # by trial; lanes of a trial are in worker order
        fin, k = fin[order], k[order]
        uk, first_of, counts = np.unique(k, return_index=True, return_counts=True)
        rank = np.arange(k.size) - np.repeat(first_of, counts)
        keep = submitted[k] + rank < n_sub[k]  # a trial takes no more than its N submissions
        if not keep.all():
            fin, k, rank = fin[keep], k[keep], rank[keep]
            if fin.size == 0:
                continue
            uk, first_of, counts = np.unique(k, return_index=True, return_counts=True)
        # ---- agents privatize their gradients (Alg. 2 / Alg. 3) --------------------------
        clean = engine.gradients[fin]
        bad = nonfinite_rows(clean)
        if bad.any():
            np.add.at(nonfinite, k[bad], 1)
        if any_zero_info and zero_info[k].any():
            clean[zero_info[k]] = 0.0
        if single_group:
            noisy = group_mech[0](clean, mech_rngs[0])
        else:
            noisy = np.empty_like(clean)
            groups = trial_group[k]
            for g in np.unique(groups):
                rows = np.flatnonzero(groups == g)
                noisy[rows] = group_mech[g](clean[rows], mech_rngs[g])
        # ---- aggregator: buffer, then eq. 22 -----------------------------------------------
        # Per trial, its first m submissions of this tick complete the open buffer (and any further
        # full buffers); the remaining ones open the next buffer.
        b_u = buf_size[uk]
        n_closed = (buf_count[uk] + counts) // b_u
        m = np.minimum(counts, np.maximum(0, n_closed * b_u - buf_count[uk]))
        closed_sum, open_sum = _split_segment_sums(noisy, first_of, counts, m)
        had = n_closed > 0
        if had.any():
            kh = uk[had]
            theta[kh] -= (lr[kh] / buf_size[kh])[:, None] * (buf_sum[kh] + closed_sum[had])  # eq. 22
            buf_sum[kh] = 0.0
        buf_sum[uk] += open_sum
        version[uk] += n_closed
        buf_count[uk] = (buf_count[uk] + counts) % b_u
        closed_of = np.zeros(k_trials, np.int64)
        closed_of[uk] = n_closed
        # ---- bookkeeping: scores, transcript, success --------------------------------------
        pos = submitted[k] + rank
        lengths = engine.elapsed[fin]
        scores[k, pos] = lengths
        np.add.at(steps, k, lengths)
        submitted[uk] += counts
        bar.update(int(fin.size))
        for t in uk[np.isin(uk, list(recorders))].tolist() if recorders else ():
            rows = k == t
            lanes_t = fin[rows]
            rec = recorders[t]
            rec.add(agent=lane_agent[lanes_t], round=lane_round[lanes_t], worker=lane_worker[lanes_t],
                    model_version=lane_version[lanes_t], gradient=noisy[rows].astype(np.float32),
                    score=lengths[rows], start_tick=lane_start[lanes_t],
                    arrival_tick=np.full(lanes_t.size, tick - trial_start_tick[t]),
                    psi=engine.physics[lanes_t, 0], terminated=engine.terminated[lanes_t], nonfinite=bad[rows])
            if closed_of[t]:
                rec.theta_versions[int(version[t])] = theta[t].copy()
        done_now = submitted[uk] >= n_sub[uk]
        if stop_early[uk].any():
            for t in uk[stop_early[uk] & ~done_now].tolist():
                m = window[t]
                n = submitted[t]
                if n >= m and scores[t, n - m:n].mean() >= target[t]:
                    done_now[np.flatnonzero(uk == t)] = True
        # ---- finished trials free their lanes; other finished workers start new agents -----
        for t in uk[done_now].tolist():
            finished_trial[t] = True
            lanes_t = np.flatnonzero(lane_trial == t)
            running = lanes_t[engine.active[lanes_t]]
            steps[t] += int(engine.elapsed[running].sum())  # episodes cut off by the trial's end
            engine.stop(lanes_t)
            lane_trial[lanes_t] = -1
            free_lanes.extend(lanes_t.tolist())
            bar.update(int(n_sub[t] - submitted[t]))
        restart = fin[~finished_trial[k]]
        if restart.size:
            same = lane_round[restart] + 1 < rounds[lane_trial[restart]]
            start_agents(restart, same)
        if done_now.any():
            free_lanes.sort()
            launch_pending()
    bar.close()

    results = []
    for k, c in enumerate(configs):
        transcript = ground_truth = None
        if k in recorders:
            rec = recorders[k]
            rec.theta_versions[int(version[k])] = theta[k].copy()
            vers = np.array(sorted(rec.theta_versions), np.int64)
            transcript = Transcript(
                agent=rec.column("agent", np.int32), round=rec.column("round", np.int16),
                worker=rec.column("worker", np.int16), model_version=rec.column("model_version", np.int64),
                gradient=(np.concatenate(rec.chunks["gradient"]) if "gradient" in rec.chunks
                          else np.zeros((0, DIM), np.float32)),
                score=rec.column("score", np.int16), start_tick=rec.column("start_tick", np.int64),
                arrival_tick=rec.column("arrival_tick", np.int64), theta_versions=vers,
                thetas=np.stack([rec.theta_versions[int(v)] for v in vers]))
            ground_truth = GroundTruth(psi=rec.column("psi", np.float64), terminated=rec.column("terminated", np.bool_),
                                       nonfinite=rec.column("nonfinite", np.bool_))
        results.append(TrainResult(config=c, initial_theta=initial_theta[k], theta=theta[k].copy(),
                                   scores=scores[k, : submitted[k]].astype(np.int64), updates=int(version[k]),
                                   agent_steps=int(steps[k]), nonfinite_gradients=int(nonfinite[k]),
                                   transcript=transcript, ground_truth=ground_truth))
    return results


def _split_segment_sums(rows: np.ndarray, first: np.ndarray, counts: np.ndarray,
                        head: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For consecutive row segments [first, first+counts): sums of their first ``head`` rows and of
    the rest (zeros where a part is empty)."""
    padded = np.concatenate([rows, np.zeros((1, rows.shape[1]))])  # so that index n is valid
    bounds = np.empty(2 * first.size, np.int64)
    bounds[0::2] = first
    bounds[1::2] = first + head
    # reduceat sums from each boundary to the next one (the head, then the tail up to the next
    # segment); an empty part yields a stray row instead of 0, hence the masks
    sums = np.add.reduceat(padded, bounds, axis=0)
    head_sum = np.where((head > 0)[:, None], sums[0::2], 0.0)
    tail_sum = np.where((head < counts)[:, None], sums[1::2], 0.0)
    return head_sum, tail_sum


class _NullBar:
    def update(self, n: int) -> None: ...

    def close(self) -> None: ...


def _progress_bar(total: int, enabled: bool):
    if not enabled:
        return _NullBar()
    from tqdm import tqdm

    return tqdm(total=total, unit="sub", smoothing=0.05, mininterval=0.5)
