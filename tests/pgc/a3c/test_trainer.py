"""Trainer (Alg. 1 + eq. 22): aggregation, staleness, transcript, determinism, many trials per batch."""

import math
from dataclasses import dataclass

import numpy as np
import pytest

from pgc.a3c.rollout import A3CHyperparams
from pgc.a3c.rundir import load_run, save_run
from pgc.a3c.trainer import TrainConfig, train, train_batch
from pgc.a3c.transcript import GroundTruth, Transcript
from pgc.mechanisms import Laplace


@dataclass(frozen=True)
class Float32Laplace:
    """Laplace whose output is exactly representable in float32, so the transcript replays θ exactly."""

    epsilon: float = 1.0

    def __call__(self, gradients, rng):
        return Laplace(self.epsilon)(gradients, rng).astype(np.float32).astype(np.float64)


@pytest.mark.parametrize("buffer_size, biases", [(1, False), (7, False), (100, False), (7, True)])
def test_eq22_replay_from_transcript(buffer_size, biases):
    cfg = TrainConfig(
        mechanism="laplace",
        epsilon=1.0,
        submissions=523,
        buffer_size=buffer_size,
        seed=3,
        hyper=A3CHyperparams(biases=biases),
    )
    res = train_batch([cfg], record_transcripts=True, mechanisms=[Float32Laplace()])[0]
    tr = res.transcript
    g = tr.gradient.astype(np.float64)
    closed = (len(g) // buffer_size) * buffer_size
    expected = res.initial_theta.copy()
    for start in range(0, closed, buffer_size):  # eq. 22, buffer by buffer
        expected -= cfg.learning_rate * g[start : start + buffer_size].mean(axis=0)
    np.testing.assert_allclose(res.theta, expected, rtol=0, atol=1e-12)
    assert res.updates == closed // buffer_size
    assert g.shape[1] == res.theta.size == (131 if biases else 112)
    if biases:  # the biases start at 0 (Keras) and learn
        assert not res.initial_theta[112:].any() and res.theta[112:].any()
    # every θ version used by a submission is the replayed θ at that version
    for v in np.unique(tr.model_version)[:20]:
        replay = (
            res.initial_theta
            - cfg.learning_rate
            * sum(g[s : s + buffer_size].mean(axis=0) for s in range(0, v * buffer_size, buffer_size))
            if v
            else res.initial_theta
        )
        np.testing.assert_allclose(tr.theta_at(v), replay, atol=1e-12)


def test_staleness_timing_and_transcript_fields():
    cfg = TrainConfig(mechanism="laplace", epsilon=2.0, submissions=400, workers=9, seed=1)
    res = train(cfg, record_transcript=True)
    tr, gt = res.transcript, res.ground_truth
    assert len(tr) == 400 and tr.gradient.shape == (400, 112) and tr.gradient.dtype == np.float32
    np.testing.assert_array_equal(tr.arrival_tick, tr.start_tick + tr.score)  # one step per tick
    assert np.all(np.diff(tr.arrival_tick) >= 0)  # arrival order
    # with 9 asynchronous workers and |B| = 1, some gradients are computed at a stale θ
    updates_before = np.arange(400)
    assert np.all(tr.model_version <= updates_before)
    assert np.mean(tr.model_version < updates_before) > 0.5
    assert set(np.unique(tr.worker)) == set(range(9))
    np.testing.assert_array_equal(np.asarray(res.scores), tr.score)
    assert set(np.unique(gt.psi)) <= {9.7, 9.8, 9.9} and len(np.unique(gt.psi)) == 3
    assert not hasattr(tr, "psi")  # ground truth lives apart


def test_exploration_schedule_and_agents():
    cfg = TrainConfig(mechanism="none", submissions=300, seed=0)
    tr = train(cfg, record_transcript=True).transcript
    assert len(np.unique(tr.agent)) == 300  # each agent submits once (T = 1)
    assert tr.agent.max() < 300 + cfg.workers  # agents are numbered in start order
    assert np.any(np.diff(tr.agent) < 0)  # ... and arrive out of that order (asynchronous workers)


def test_multi_round_split():
    cfg = TrainConfig(mechanism="laplace", epsilon=3.0, rounds=3, submissions=90, seed=2)
    assert cfg.build_mechanism().epsilon == 1.0  # ε/T per submission (§3.2.1)
    res = train(cfg, record_transcript=True)
    tr, gt = res.transcript, res.ground_truth
    counts = np.bincount(tr.agent)
    assert counts.max() == 3 and np.all(np.isin(tr.round, [0, 1, 2]))
    for a in np.unique(tr.agent):  # an agent keeps its environment across rounds
        assert len(np.unique(gt.psi[tr.agent == a])) == 1


def test_same_seed_same_run_bit_for_bit():
    cfgs = [TrainConfig(mechanism="prs", epsilon=5.0, buffer_size=10, submissions=300, seed=s) for s in (4, 5)]
    a = train_batch(cfgs, record_transcripts=True)
    b = train_batch(cfgs, record_transcripts=True)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x.theta, y.theta)
        np.testing.assert_array_equal(x.transcript.gradient, y.transcript.gradient)
        np.testing.assert_array_equal(x.scores, y.scores)
    assert not np.array_equal(a[0].theta, a[1].theta)
    c = train_batch([cfgs[0].replace(seed=6), cfgs[1]])
    assert not np.array_equal(c[0].theta, a[0].theta)


def test_mixed_trials_each_get_their_submissions_and_do_not_interact():
    cfgs = [
        TrainConfig(mechanism="laplace", submissions=n, workers=w, seed=i)
        for i, (n, w) in enumerate([(50, 9), (120, 4), (30, 9), (80, 2)])
    ]
    res = train_batch(cfgs)
    assert [r.scores.size for r in res] == [50, 120, 30, 80]
    assert all(r.updates == r.scores.size for r in res)
    # a trial's run depends on its own seed only: not on the batch, its position, or processes
    alone = train(cfgs[1])
    np.testing.assert_array_equal(alone.theta, res[1].theta)
    np.testing.assert_array_equal(alone.scores, res[1].scores)


def test_stop_at_success_and_zero_information():
    cfg = TrainConfig(mechanism="none", submissions=200, stop_at_success=True, target_score=5.0, seed=0)
    res = train(cfg)
    assert res.scores.size == res.fst < 200  # stopped at its first success
    # many workers finish in the same tick: the trial still stops at the submission that succeeded
    stopped = 0
    for seed in range(6):
        wide = train(
            TrainConfig(
                mechanism="none", submissions=300, stop_at_success=True, target_score=15.0, workers=30, seed=seed
            ),
            record_transcript=True,
        )
        expected = 300 if math.isinf(wide.fst) else wide.fst
        assert wide.scores.size == wide.updates == len(wide.transcript) == expected
        stopped += expected < 300
    assert stopped >= 2  # (seed 2 succeeds at submission 28, mid-tick)
    zero = train(TrainConfig(mechanism="none", submissions=50, zero_information=True, seed=0))
    np.testing.assert_array_equal(zero.theta, zero.initial_theta)  # no noise and no information: θ never moves


def test_nonfinite_gradients_are_counted_and_never_reach_theta():
    @dataclass(frozen=True)
    class Passthrough:  # a broken third-party mechanism would let NaN through; ours must not
        epsilon: float = math.inf

        def __call__(self, g, rng):
            return np.where(np.isfinite(g), g, 0.0) * 1e-3

    huge = TrainConfig(mechanism="laplace", submissions=60, seed=0, hyper=A3CHyperparams())
    res = train_batch([huge], mechanisms=[Passthrough()])[0]
    assert np.all(np.isfinite(res.theta))


def test_config_validation():
    with pytest.raises(ValueError, match="unknown mechanism"):
        TrainConfig(mechanism="gauss")
    with pytest.raises(ValueError, match="epsilon"):
        TrainConfig(epsilon=0.0)
    with pytest.raises(ValueError, match="epsilon"):
        TrainConfig(epsilon=math.nan)
    with pytest.raises(ValueError, match="clip"):
        TrainConfig(clip=-1.0)
    with pytest.raises(ValueError, match="buffer_size"):
        TrainConfig(buffer_size=0)
    with pytest.raises(ValueError, match="gravities"):
        TrainConfig(gravities=())
    with pytest.raises(ValueError, match="workers and rounds"):
        TrainConfig(workers=40_000)
    with pytest.raises(ValueError, match="reduced_dim"):
        TrainConfig(mechanism="prs", epsilon=10.0, reduced_dim=200)
    with pytest.raises(ValueError, match="action_selection"):
        A3CHyperparams(action_selection="softmax")
    cfg = TrainConfig(mechanism="prs", epsilon=10.0, hyper=A3CHyperparams(cap=50))
    assert TrainConfig.from_dict(cfg.to_dict()) == cfg
    unclipped = TrainConfig(mechanism="none", epsilon=math.inf, clip=math.inf)
    assert unclipped.to_dict()["clip"] == "inf"  # JSON has no ∞
    assert TrainConfig.from_dict(unclipped.to_dict()) == unclipped
    with pytest.raises(ValueError, match="clip must be a number"):
        TrainConfig.from_dict({"clip": "big"})
    with pytest.raises(ValueError, match="unknown config keys"):
        TrainConfig.from_dict({"epsilon": 1.0, "lr": 3})


@pytest.mark.parametrize("biases", [False, True])
def test_run_folder_roundtrip(tmp_path, biases, no_result_parsing):
    res = train_batch(
        [TrainConfig(submissions=40, seed=s, hyper=A3CHyperparams(biases=biases)) for s in range(2)],
        record_transcripts=[True, False],
    )
    out = save_run(res, tmp_path / "run", wall_time=1.0)
    summary, trials = load_run(out)
    assert len(trials) == 2 and summary["trials"][0]["transcript"] and not summary["trials"][1]["transcript"]
    np.testing.assert_array_equal(trials[0].theta(), res[0].theta)
    np.testing.assert_array_equal(trials[1].scores(), res[1].scores)
    assert trials[0].config == res[0].config
    assert isinstance(trials[0].transcript(), Transcript) and isinstance(trials[0].ground_truth(), GroundTruth)
    assert trials[0].transcript().gradient.shape[1] == trials[0].theta().size == (131 if biases else 112)
    with pytest.raises(FileExistsError):
        save_run(res, out, wall_time=1.0)
    assert not list(tmp_path.glob("*.partial"))


def test_process_shards_are_deterministic_and_keep_order():
    cfgs = [TrainConfig(mechanism="laplace", submissions=60 + 10 * s, seed=s) for s in range(5)]
    a = train_batch(cfgs, processes=2)
    b = train_batch(cfgs, processes=2)
    assert [r.config.seed for r in a] == list(range(5))
    assert [r.scores.size for r in a] == [60, 70, 80, 90, 100]
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x.theta, y.theta)
    with pytest.raises(ValueError, match="processes"):
        train_batch(cfgs, processes=0)


# ---- compiled fast path vs the public Mechanism Protocol ------------------------------------


@dataclass(frozen=True)
class ThroughProtocol:
    """Wraps a built-in mechanism so the trainer cannot recognise it: every submission goes through
    ``__call__`` from Python, with the trial's mechanism generator."""

    inner: object

    @property
    def epsilon(self):
        return self.inner.epsilon

    def __call__(self, gradients, rng):
        return self.inner(gradients, rng)


@pytest.mark.parametrize(
    "mechanism, epsilon, clip, buffer_size, biases",
    [
        ("laplace", 1.0, None, 1, False),
        ("laplace-secure", 2.0, None, 3, False),
        ("prs", 10.0, None, 20, False),
        ("prs", 5.0, 0.5, 1, False),
        ("none", math.inf, None, 1, False),
        ("none", math.inf, math.inf, 5, False),
        ("laplace", 1.0, None, 1, True),
        ("prs", 10.0, None, 20, True),
        ("gaussian-analytic", 2.0, None, 1, False),
        ("gaussian-analytic", 2.0, None, 7, True),
        ("gaussian", 0.8, 0.05, 1, False),
    ],
)
def test_compiled_mechanisms_equal_the_protocol_path(mechanism, epsilon, clip, buffer_size, biases):
    cfg = TrainConfig(
        mechanism=mechanism,
        epsilon=epsilon,
        clip=clip,
        buffer_size=buffer_size,
        submissions=150,
        delta=1e-5 if mechanism.startswith("gaussian") else None,
        learning_rate=0.5 if clip != math.inf else 1e-3,
        seed=11,
        hyper=A3CHyperparams(biases=biases),
    )
    fast = train(cfg, record_transcript=True)
    slow = train_batch([cfg], record_transcripts=True, mechanisms=[ThroughProtocol(cfg.build_mechanism())])[0]
    np.testing.assert_array_equal(fast.scores, slow.scores)  # same episodes: same draws in the same order
    if mechanism.startswith("laplace") and biases:
        # d = 131: the compiled L1 norm sums in one sequence, numpy's in two pairwise blocks
        np.testing.assert_allclose(fast.transcript.gradient, slow.transcript.gradient, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(fast.theta, slow.theta, rtol=0, atol=1e-10)
    else:
        np.testing.assert_array_equal(fast.transcript.gradient, slow.transcript.gradient)
        np.testing.assert_array_equal(fast.theta, slow.theta)
    assert fast.updates == slow.updates == 150 // buffer_size


@pytest.mark.parametrize("rounds", [1, 2])
def test_the_mechanism_record_of_a_gaussian_run_rebuilds_it(rounds):
    from pgc.mechanisms import rebuild_mechanism

    cfg = TrainConfig(mechanism="gaussian-analytic", epsilon=2.0, delta=1e-5, rounds=rounds, submissions=20)
    result = train(cfg)
    assert result.mechanism["factory_args"]["delta"] == 1e-5
    assert rebuild_mechanism(result.mechanism) == cfg.build_mechanism()  # δ/T and ε/T per submission


def test_results_do_not_depend_on_processes_or_progress(monkeypatch):
    import pgc.a3c.trainer as trainer

    cfgs = [
        TrainConfig(mechanism="prs", epsilon=5.0, buffer_size=10, submissions=90 + 20 * s, seed=s) for s in range(4)
    ]
    serial = train_batch(cfgs)
    forked = train_batch(cfgs, processes=2)
    monkeypatch.setattr(trainer, "_PROGRESS_EVERY", 7)  # pause and resume the compiled loop often
    paused = train_batch(cfgs, progress=True)
    updates = []

    class Bar:
        def update(self, n):
            updates.append(n)

        def close(self):
            pass

    monkeypatch.setattr(trainer, "_progress_bar", lambda total, enabled: Bar())
    protocol = train_batch(cfgs[:1], progress=True, mechanisms=[ThroughProtocol(cfgs[0].build_mechanism())])[0]
    assert sum(updates) == cfgs[0].submissions and len(updates) >= cfgs[0].submissions // 7  # reported as it goes
    np.testing.assert_allclose(protocol.theta, serial[0].theta, atol=1e-12)
    for a, b, c in zip(serial, forked, paused, strict=True):
        np.testing.assert_array_equal(a.theta, b.theta)
        np.testing.assert_array_equal(a.theta, c.theta)
        np.testing.assert_array_equal(a.scores, c.scores)
        assert a.agent_steps == b.agent_steps == c.agent_steps


def test_a_broken_third_party_mechanism_is_stopped():
    @dataclass(frozen=True)
    class WrongShape:
        epsilon: float = 1.0

        def __call__(self, g, rng):
            return g[:, :10]

    @dataclass(frozen=True)
    class EmitsNaN:
        epsilon: float = 1.0

        def __call__(self, g, rng):
            return g * np.nan

    cfg = TrainConfig(submissions=20, seed=0)
    with pytest.raises(ValueError, match="shape"):
        train_batch([cfg], mechanisms=[WrongShape()])
    with pytest.raises(ValueError, match="non-finite"):
        train_batch([cfg], mechanisms=[EmitsNaN()])


@pytest.mark.parametrize("buffer_size", [1, 5])
def test_rmsprop_aggregator_replays_from_transcript(buffer_size):
    """The aggregator's RMSprop knob: s ← ρs + (1−ρ)ḡ², θ ← θ − η ḡ/(√s + 1e-7) on ḡ = mean(B)."""
    cfg = TrainConfig(
        mechanism="laplace",
        epsilon=1.0,
        submissions=311,
        buffer_size=buffer_size,
        seed=4,
        optimizer="rmsprop",
        learning_rate=5e-3,
        rmsprop_decay=0.9,
    )
    res = train_batch([cfg], record_transcripts=True, mechanisms=[Float32Laplace()])[0]
    g = res.transcript.gradient.astype(np.float64)
    expected, square = res.initial_theta.copy(), np.zeros(112)
    for start in range(0, (len(g) // buffer_size) * buffer_size, buffer_size):
        mean = g[start : start + buffer_size].mean(axis=0)
        square = 0.9 * square + 0.1 * mean**2
        expected -= 5e-3 * mean / (np.sqrt(square) + 1e-7)
    np.testing.assert_allclose(res.theta, expected, rtol=0, atol=1e-12)
    sgd = train_batch(
        [
            TrainConfig(
                mechanism="laplace", epsilon=1.0, submissions=311, buffer_size=buffer_size, seed=4, learning_rate=5e-3
            )
        ],
        mechanisms=[Float32Laplace()],
    )[0]
    assert not np.allclose(sgd.theta, res.theta)  # the knob changes the update


def test_exploration_clock_counts_agents_or_environment_steps():
    """α = max{0, α₀ − n/decay}: n = agent index ("agents") or global environment steps ("steps")."""

    def run(clock, decay):
        return train(
            TrainConfig(
                mechanism="none",
                submissions=60,
                seed=2,
                exploration_start=1.0,
                exploration_decay=decay,
                exploration_clock=clock,
            )
        )

    # a decay far beyond the run: α ≈ 1 throughout under either clock, the same draws, the same trial
    np.testing.assert_array_equal(run("agents", 1e15).theta, run("steps", 1e15).theta)
    # decay 30: the agents clock explores for 30 agents (thousands of steps), the steps clock for 30 steps
    by_agents, by_steps = run("agents", 30.0), run("steps", 30.0)
    assert by_steps.agent_steps != by_agents.agent_steps or not np.array_equal(by_steps.theta, by_agents.theta)


def test_reading_knobs_are_validated_and_round_trip():
    from pgc.a3c.trainer import TrainConfig as C

    for bad in ({"optimizer": "adam"}, {"rmsprop_decay": 1.0}, {"exploration_clock": "ticks"}):
        with pytest.raises(ValueError):
            C(**bad)
    for bad in ({"reward": "shaped"}, {"n_step": -1}, {"n_step": True}, {"loss_reduction": "max"}):
        with pytest.raises(ValueError):
            A3CHyperparams(**bad)
    with pytest.raises(ValueError, match="biases"):
        A3CHyperparams(biases="yes")
    cfg = C(
        optimizer="rmsprop",
        learning_rate=5e-3,
        exploration_clock="steps",
        hyper=A3CHyperparams(
            reward="terminal", n_step=5, loss_reduction="mean", action_selection="sample", biases=True
        ),
    )
    assert C.from_dict(cfg.to_dict()) == cfg


def test_a_running_trial_lets_other_threads_run(monkeypatch):
    """The compiled trial releases the GIL: a thread beside it (a tuning worker's heartbeat) runs while
    the trial does. The thread is released when the compiled call begins and wakes 20 ms later; were
    the GIL held, it could not run again until the call returned. (A false failure needs the thread
    kept off the CPU for the whole call, which lasts tens of times longer.)"""
    import threading
    import time

    from pgc.a3c import kernel

    compiled = kernel.run_trial
    calls: list[tuple[float, float]] = []
    entered = threading.Event()

    def timed_run_trial(*args):
        start = time.monotonic()
        entered.set()
        status = compiled(*args)
        calls.append((start, time.monotonic()))
        return status

    woke: list[float] = []

    def beside() -> None:
        entered.wait()
        time.sleep(0.02)
        woke.append(time.monotonic())

    train(TrainConfig(submissions=50, workers=8, gravities=(9.8,), seed=3))  # compiled before the check
    monkeypatch.setattr(kernel, "run_trial", timed_run_trial)
    thread = threading.Thread(target=beside)
    thread.start()
    train(TrainConfig(submissions=150_000, workers=8, gravities=(9.8,), seed=3))
    thread.join()
    ((start, end),) = calls
    assert end - start > 0.5, "the trial is too short to tell"
    assert start < woke[0] < end, (start, woke, end)
