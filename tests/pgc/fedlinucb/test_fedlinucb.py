"""The federated LinUCB core: privacy math against hand-computed numbers, the distributed tree's
sums, config validation, the batched simulator against the straightforward loop, the Systems'
channels and canaries, the first-user attack and the CLI's bad-input handling.

Statistical assertions use seeded generators; each states its false-failure rate for a fresh seed."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pgc.fedlinucb.algorithms import DistributedTree, _pack, _unpack, fedlinucb, private_fedlinucb
from pgc.fedlinucb.config import BanditConfig, DP20Config, PrivacyConfig
from pgc.fedlinucb.env import SyntheticFamily, UserStream
from pgc.fedlinucb.privacy import accuracy_ceiling, lowest_set_bit, private_fedlinucb_sigma, set_bits, tree_levels
from pgc.fedlinucb.systems import BanditSystem, dp20_system, fedlinucb_system, private_fedlinucb_system

ROOT = Path(__file__).resolve().parents[3]


def test_lowest_set_bit_and_levels():
    assert [lowest_set_bit(k) for k in (1, 2, 3, 4, 6, 8, 12, 40)] == [0, 1, 0, 2, 1, 3, 2, 3]
    assert list(lowest_set_bit(np.array([5, 16]))) == [0, 4]
    assert list(set_bits(6, 4)) == [False, True, True, False]
    assert (tree_levels(1), tree_levels(7), tree_levels(8), tree_levels(1000)) == (1, 3, 4, 10)
    with pytest.raises(ValueError):
        lowest_set_bit(0)


def test_sigma_and_ceiling_hand_numbers():
    # eps=1, delta=0.1, T=1e4, B=10: kappa = 1 + ln 1000 = 7.9078; sigma^2 = 8*7.9078*(ln 20 + 1) = 252.78
    assert private_fedlinucb_sigma(1.0, 0.1, 10_000, 10) == pytest.approx(15.899, abs=1e-3)
    # eps=0.2, delta=0.1, T=B: kappa = 1; sigma^2 = 8*(ln 20 + 0.2)/0.04 = 639.15
    assert private_fedlinucb_sigma(0.2, 0.1, 50, 50) == pytest.approx(25.282, abs=1e-3)
    assert accuracy_ceiling(0.0, 0.0) == 0.5
    assert accuracy_ceiling(math.log(3.0), 0.0) == pytest.approx(0.75)
    assert accuracy_ceiling(1.0, 0.1) == pytest.approx((math.e + 0.1) / (1 + math.e))
    assert accuracy_ceiling(math.inf, 0.0) == 1.0


def test_configs_reject_bad_input():
    for kwargs in ({"epsilon": 0.0}, {"epsilon": -1.0}, {"delta": 0.0}, {"delta": 1.0}, {"epsilon": math.inf}):
        with pytest.raises(ValueError):
            PrivacyConfig(**kwargs)
    for kwargs in (
        {"batch": 101, "horizon": 100},
        {"dim": 1},
        {"dim": 10**6},
        {"n_arms": 0},
        {"n_silos": 0},
        {"noise_std": -1.0},
        {"confidence": 1.0},
    ):
        with pytest.raises(ValueError):
            BanditConfig(**kwargs)
    with pytest.raises(ValueError):
        DP20Config(threshold=-1.0)
    assert BanditConfig(n_silos=100, horizon=10_000).batch_size == 10


def test_pack_unpack_roundtrip(rng):
    A = rng.standard_normal((3, 4, 4))
    W = A + np.swapaxes(A, -1, -2)
    U = rng.standard_normal((3, 4))
    W2, U2 = _unpack(_pack(W, U), 4)
    np.testing.assert_allclose(W2, W)
    np.testing.assert_allclose(U2, U)


def test_tree_without_noise_sums_every_step(rng):
    R, M, width, steps = 3, 4, 5, 13
    tree = DistributedTree(R, M, tree_levels(steps), width, 0.0, rng)
    exact = np.zeros((R, width))
    for k in range(steps):
        active = np.array([True, k % 2 == 0, k % 3 == 0])
        gamma = rng.standard_normal((R, M, width))
        messages, total = tree.step(gamma, active)
        exact[active] += gamma[active].sum(axis=1)
        np.testing.assert_allclose(total[active], exact[active], atol=1e-9)


def test_tree_noise_is_popcount_nodes():
    # s~_k carries popcount(k) nodes, each the sum of M silos' N(0, sigma^2): variance popcount(k)*M*sigma^2.
    # 20000 runs: the sample variance is within 5% with false-failure rate < 1e-6 per check.
    rng = np.random.default_rng(np.random.SeedSequence(7))
    R, M, sigma = 20_000, 3, 2.0
    tree = DistributedTree(R, M, 3, 1, sigma, rng)
    for k in range(1, 8):
        _, total = tree.step(np.zeros((R, M, 1)), np.ones(R, dtype=bool))
        expected = bin(k).count("1") * M * sigma**2
        assert total[:, 0].var() == pytest.approx(expected, rel=0.05)


def test_batched_simulator_matches_reference_loop():
    from pgc.benchmarks.bandit import reference_fedlinucb

    cfg = BanditConfig(n_silos=5, horizon=30, n_arms=6, dim=4, runs=1, batch=4)
    seed = np.random.SeedSequence(3)
    fast = fedlinucb(SyntheticFamily(1, 5, 6, 4, 0.5, np.random.default_rng(seed)), cfg, record_actions=True)
    agree = reference_fedlinucb(
        SyntheticFamily(1, 5, 6, 4, 0.5, np.random.default_rng(seed)), cfg, 30, fast.extra["actions"][0]
    )
    assert agree == 1.0


def test_regret_learns_and_private_pays():
    cfg = BanditConfig(n_silos=10, horizon=400, n_arms=10, dim=4, runs=4)
    seed = np.random.SeedSequence(5)
    env = lambda: SyntheticFamily(4, 10, 10, 4, 0.5, np.random.default_rng(seed))  # noqa: E731
    plain = fedlinucb(env(), cfg)
    private = private_fedlinucb(env(), cfg, PrivacyConfig(0.2, 0.1), np.random.default_rng(1))
    first, last = plain.regret[:, :50].mean(), plain.regret[:, -50:].mean()
    assert last < 0.5 * first  # non-private learns
    assert private.regret.sum() > plain.regret.sum()  # privacy costs regret at eps = 0.2
    assert private.schedule.sum(axis=1).tolist() == [400 // cfg.batch_size] * 4


def test_systems_channels_and_toy_pair():
    for factory in (dp20_system, private_fedlinucb_system, fedlinucb_system):
        system = factory()
        pairs = system.canaries()
        assert {"a-toy-first-user", "b-first-user", "b-steering-user"} <= set(pairs)
        assert set(system.claim.covers) == {"messages", "schedule"}
        out = system.release(pairs["a-toy-first-user"][0], 7, np.random.default_rng(0))
        assert set(out) == {"messages", "schedule"}
        assert all(v.dtype == np.float64 and v.ndim == 2 and v.shape[0] == 7 for v in out.values())
    dp20 = dp20_system()
    pos, neg = dp20.canaries()["a-toy-first-user"]
    rng = np.random.default_rng(1)
    # the slides' toy attack: at t = 1 the sync is a function of the first user alone
    assert dp20.release(pos, 50, rng)["schedule"][:, 0].min() == 1.0
    assert dp20.release(neg, 50, rng)["schedule"][:, 0].max() == 0.0
    private = private_fedlinucb_system()
    for pos, neg in private.canaries().values():
        np.testing.assert_array_equal(
            private.release(pos, 20, rng)["schedule"], private.release(neg, 20, rng)["schedule"]
        )


def test_schedule_distinguisher_clopper_pearson():
    """A Clopper–Pearson interval on the schedule test "sync after round 1": DP20's toy pair is
    separated near-deterministically, Private-FedLinUCB's is not (fixed schedule)."""
    from statsmodels.stats.proportion import proportion_confint

    rng = np.random.default_rng(np.random.SeedSequence(11))
    n = 300
    for system, separated in ((dp20_system(), True), (private_fedlinucb_system(), False)):
        pos, neg = system.canaries()["a-toy-first-user"]
        guess_pos = system.release(pos, n, rng)["schedule"][:, 0] == 1
        guess_neg = system.release(neg, n, rng)["schedule"][:, 0] == 1
        correct = int(guess_pos.sum() + (~guess_neg).sum())
        lo, hi = proportion_confint(correct, 2 * n, alpha=0.05, method="beta")
        if separated:
            assert lo > 0.99
        else:
            assert correct == n  # identical schedules: the test is a coin, accuracy exactly 1/2
            assert lo < 0.5 < hi


def test_broadcast_is_used_and_bounded():
    system = private_fedlinucb_system()
    lower, upper = system.broadcast_space
    assert lower.shape == upper.shape and np.all(lower < upper)
    stream = system.canaries()["b-first-user"][0]
    honest = system.release(stream, 5, np.random.default_rng(2))
    pushed = system.release(stream, 5, np.random.default_rng(2), broadcast=upper)
    assert np.all(np.isfinite(pushed["messages"]))
    assert not np.array_equal(honest["messages"], pushed["messages"])


def test_user_stream_rejects_bad_users():
    with pytest.raises(ValueError):
        UserStream(contexts=np.full((2, 3, 4), 1.0), rewards=np.zeros((2, 3)))
    with pytest.raises(ValueError):
        UserStream(contexts=np.zeros((2, 3, 4)), rewards=np.full((2, 3), 2.0))


def test_attack_dp20_schedule_beats_ceiling():
    from attacks.bandit import first_user_attack

    rows = first_user_attack(
        BanditSystem("dp20-feducb", epsilon=0.1, delta=1e-3),
        "a-toy-first-user",
        300,
        400,
        np.random.default_rng(np.random.SeedSequence(4)),
    )
    by = {r.target.channel: r for r in rows}
    assert by["schedule"].measured.accuracy > 0.98 and by["schedule"].reference.above_ceiling
    assert by["schedule"].reference.ceiling == pytest.approx((math.exp(0.1) + 1e-3) / (1 + math.exp(0.1)))


def test_dp_event_when_accountant_present():
    pytest.importorskip("dp_accounting")
    assert private_fedlinucb_system().dp_event() is not None


def _cli(*args, cwd=ROOT):
    env = {**os.environ, "PGC_PROGRESS_INTERVAL_S": "0.02"}  # progress lines within the run, not after 30 s
    return subprocess.run([sys.executable, "-m", "pgc.cli", *args], cwd=cwd, capture_output=True, text=True, env=env)


@pytest.mark.parametrize(
    "args",
    [
        ["--epsilons", "0"],
        ["--delta", "1.5"],
        ["--arms", "0"],
        ["--dim", "1"],
        ["--batch", "20000"],
        ["--dp20-threshold", "-1"],
    ],
)
def test_cli_bad_input_one_line_exit_2(args, tmp_path, capsys):
    from pgc.cli.main import main

    assert main(["bandit", "regret", "--out", str(tmp_path / "r.json"), *args]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert not (tmp_path / "r.json").exists()


@pytest.mark.slow
def test_cli_regret_and_attack_small(tmp_path):
    """From a folder outside the repository: --out into folders that do not exist yet, dated progress lines
    on a non-terminal stderr, a default path new for every run, an existing result kept without --force."""
    out = tmp_path / "new" / "deeper" / "r.json"
    proc = _cli(
        "bandit",
        "regret",
        "--silos",
        "4",
        "--horizon",
        "400",
        "--arms",
        "5",
        "--dim",
        "3",
        "--runs",
        "3",
        "--sweep-silos",
        "2",
        "4",
        "--workers",
        "1",
        "--label",
        "test",
        "--out",
        str(out),
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"^\[\d\d:\d\d:\d\d\] bandit regret jobs: started, 7 jobs to go$", proc.stderr, re.M)
    data = json.loads(out.read_text())
    assert data["kind"] == "bandit-regret" and data["format_version"] == 1
    assert len(data["curves"]) == 5 and all(len(c["t"]) <= 200 for c in data["curves"])
    assert (out.parent / "r.png").stat().st_size > 0
    attack = ["bandit", "attack", "--systems", "dp20-feducb", "--epsilon", "0.5", "--train", "50", "--test", "60"]
    for _ in range(2):
        proc = _cli(*attack, cwd=tmp_path)
        assert proc.returncode in (0, 1), proc.stderr
    first, second = sorted((tmp_path / "runs" / "bandit").glob("attack-*.json"))  # two runs, two results
    above = any(r["above_ceiling"] for r in json.loads(second.read_text())["rows"])
    assert proc.returncode == (1 if above else 0), proc.stderr  # an attack above its bar is a finding
    before = first.read_bytes()
    data = json.loads(before)
    assert data["kind"] == "bandit-attack" and {r["channel"] for r in data["rows"]} == {"messages", "schedule", "all"}
    proc = _cli(*attack, "--out", str(first), cwd=tmp_path)
    assert proc.returncode == 2 and "--force" in proc.stderr and first.read_bytes() == before


def test_cli_regret_and_attack_write_their_typed_results(tmp_path, no_result_parsing):
    """Both results are built typed and written as they are: nothing is parsed back from a dict."""
    from pgc.cli.main import main

    regret = tmp_path / "r.json"
    argv = ["--silos", "2", "--horizon", "60", "--arms", "3", "--dim", "2", "--runs", "2", "--workers", "1"]
    assert main(["bandit", "regret", *argv, "--sweep-silos", "1", "2", "--out", str(regret), "--no-progress"]) == 0
    data = json.loads(regret.read_text())
    assert data["kind"] == "bandit-regret" and len(data["curves"]) == 5 and "lambda" in data["curves"][0]
    attack = tmp_path / "a.json"
    argv = ["--systems", "dp20-feducb", "--epsilon", "0.5", "--train", "20", "--test", "20", "--no-progress"]
    code = main(["bandit", "attack", *argv, "--out", str(attack)])
    rows = json.loads(attack.read_text())["rows"]
    assert code == (1 if any(r["above_ceiling"] for r in rows) else 0)
    assert {r["channel"] for r in rows} == {"messages", "schedule", "all"}
    assert {"accuracy", "interval", "ceiling", "claim", "above_ceiling"} <= set(rows[0])
