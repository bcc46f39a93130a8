"""Flower clients as Systems, through Flower's real Message path and its real mods (no mocks of Flower)."""

import math
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

flwr = pytest.importorskip("flwr", reason="Flower is installed by scripts/setup.sh (the flower extra)")

from audit.engine.system_audit import audit_system  # noqa: E402
from pgc.flower import claim_from_mods, crafted_update_system, local_dp_sigma, local_dp_update_system  # noqa: E402
from pgc.flower.reference import NumpyLocalDp  # noqa: E402


def test_claim_is_read_from_local_dp_mod():
    from flwr.client.mod import LocalDpMod

    mod = LocalDpMod(clipping_norm=1.0, sensitivity=2.0, epsilon=1.0, delta=1e-5)
    claim = claim_from_mods([mod])
    sigma = 2.0 * math.sqrt(2.0 * math.log(1.25 / 1e-5)) / 1.0
    assert local_dp_sigma(mod) == pytest.approx(sigma)
    assert (claim.epsilon, claim.delta, claim.covers) == (1.0, 1e-5, ("update",))
    assert claim.gdp_mu == pytest.approx(2.0 / sigma)
    assert claim_from_mods([]) is None


def test_releases_through_flower_equal_the_numpy_reference_bit_for_bit():
    flower = local_dp_update_system(1.0, 1e-5)
    reference = NumpyLocalDp(1.0, 1e-5)
    for secret in ("+", "-"):
        a = flower.release(secret, 300, np.random.default_rng(7))["update"]
        b = reference.release(secret, 300, np.random.default_rng(7))["update"]
        np.testing.assert_array_equal(a, b)
    # the global generator is left as it was
    state = np.random.get_state()[1].copy()
    flower.release("+", 5, np.random.default_rng(1))
    np.testing.assert_array_equal(np.random.get_state()[1], state)


def test_a_release_does_not_depend_on_how_many_processes_send_its_blocks():
    from pgc.flower.system import RELEASE_BLOCK

    n = 2 * RELEASE_BLOCK + 17  # two full blocks and a partial one
    one, two = local_dp_update_system(1.0, 1e-5), local_dp_update_system(1.0, 1e-5)
    one.workers, two.workers = 1, 2
    a = one.release("-", n, np.random.default_rng(11))["update"]
    b = two.release("-", n, np.random.default_rng(11))["update"]
    c = NumpyLocalDp(1.0, 1e-5).release("-", n, np.random.default_rng(11))["update"]
    assert a.shape == (n, 8)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)
    assert not np.array_equal(a[:RELEASE_BLOCK], a[RELEASE_BLOCK : 2 * RELEASE_BLOCK])  # each block its own seed
    with pytest.raises(ValueError, match="workers"):
        type(one)(one.app, [np.zeros(8)], {"p": ("+", "-")}, workers=0)


RECORDS = np.linspace(0.0, 1.0, 400).reshape(40, 10)  # a client's 40 local records, and without the first
LOCAL_DATA = {"D": RECORDS, "D-removed": RECORDS[1:]}


def counting_app(metrics=lambda records: {}):
    """A ClientApp under LocalDpMod (1, 1e-5) that steps towards its records' mean and replies, as Flower's
    examples do, with its number of records and the metrics ``metrics(records)``."""
    from flwr.client import ClientApp, NumPyClient
    from flwr.client.mod import LocalDpMod

    from pgc.flower import DATASET_KEY

    class Client(NumPyClient):
        def __init__(self, records):
            self.records = records

        def fit(self, parameters, config):
            step = 0.5 * (self.records.mean(axis=0) - parameters[0])
            return [parameters[0] + step], len(self.records), metrics(self.records)

    def client_fn(context):
        return Client(LOCAL_DATA[context.run_config[DATASET_KEY]]).to_client()

    mod = LocalDpMod(clipping_norm=1.0, sensitivity=2.0, epsilon=1.0, delta=1e-5)
    return ClientApp(client_fn=client_fn, mods=[mod])


def reporting(records):
    return {"mean": float(records.mean()), "converged": True, "note": "text is no channel"}


def test_every_part_of_the_reply_is_a_channel_and_the_mods_claim_covers_the_update_only():
    from audit.testing import check_system
    from pgc.flower import FlowerClientSystem
    from pgc.flower.system import RELEASE_BLOCK

    system = FlowerClientSystem(counting_app(reporting), [np.zeros(10)], {"removed": ("D", "D-removed")}, workers=1)
    assert system.channels == ("update", "num_examples", "metrics.converged", "metrics.mean")  # sorted keys
    assert system.claim.covers == ("update",)
    check_system(system)
    n = RELEASE_BLOCK + 5  # two blocks: the forked path returns every channel, in order
    one = system.release("D-removed", n, np.random.default_rng(4))
    system.workers = 2
    two = system.release("D-removed", n, np.random.default_rng(4))
    assert set(one) == set(two) == set(system.channels)
    for channel in system.channels:
        np.testing.assert_array_equal(one[channel], two[channel])
    assert one["update"].shape == (n, 10) and np.all(one["num_examples"] == 39)
    assert np.all(one["metrics.mean"] == RECORDS[1:].mean()) and np.all(one["metrics.converged"] == 1.0)


def test_metrics_named_at_construction_are_the_channels_and_an_unnamed_one_stops_a_release():
    from pgc.errors import UserError
    from pgc.flower import FlowerClientSystem

    pairs = {"removed": ("D", "D-removed")}
    named = FlowerClientSystem(counting_app(reporting), [np.zeros(10)], pairs, workers=1, metrics=["mean", "loss"])
    assert named.channels == ("update", "num_examples", "metrics.loss", "metrics.mean")
    with pytest.raises(UserError, match="'converged'"):  # a numeric metric outside the channels is not dropped
        named.release("D", 3, np.random.default_rng(0))
    absent = FlowerClientSystem(
        counting_app(reporting), [np.zeros(10)], pairs, workers=1, metrics=["converged", "mean", "loss"]
    )
    assert np.all(np.isnan(absent.release("D", 3, np.random.default_rng(0))["metrics.loss"]))  # absent: NaN
    with pytest.raises(UserError, match="metrics"):
        FlowerClientSystem(counting_app(), [np.zeros(10)], pairs, metrics="mean")


@pytest.mark.slow
def test_a_count_and_a_metric_that_depend_on_the_record_are_unprotected_channels():
    from pgc.flower import FlowerClientSystem

    system = FlowerClientSystem(
        counting_app(reporting), [np.zeros(10)], {"removed": ("D", "D-removed")}, relation="one record removed"
    )
    result = audit_system(system, "D", "D-removed", samples=2000, seed=0)
    rows = {row.channel: row for row in result.rows}
    for leaking in ("num_examples", "metrics.mean"):  # 40 against 39 records: every release tells them apart
        assert rows[leaking].verdict == "unprotected channel" and rows[leaking].epsilon_lower_bound > 6.0
    assert rows["metrics.converged"].verdict != "unprotected channel"  # the same on both data sets
    assert result.verdict == "unprotected channel"
    # the update's row is the one an audit of the update alone gives
    alone = audit_system(system, "D", "D-removed", samples=2000, seed=0, channels=["update"]).rows[0]
    assert rows["update"].to_dict() == alone.to_dict() and rows["update"].verdict != "violated"


@pytest.mark.slow
def test_a_sensitivity_set_to_the_clipping_norm_is_flagged_on_its_curve():
    # two clipped updates lie 2C apart; sensitivity = C halves the noise the claim needs
    from flwr.client.mod import LocalDpMod

    mod = LocalDpMod(clipping_norm=1.0, sensitivity=1.0, epsilon=4.0, delta=1e-5)
    row = audit_system(crafted_update_system([mod], 1.0), "+", "-", samples=2000, seed=0, channels=["update"]).rows[0]
    assert row.verdict == "violated" and row.mu_lower_bound > row.claimed_mu
    correct = local_dp_update_system(4.0, 1e-5)
    assert audit_system(correct, "+", "-", samples=2000, seed=0, channels=["update"]).rows[0].verdict != "violated"


@pytest.mark.slow
def test_cli_audits_a_users_client_app_and_refuses_bad_input(tmp_path):
    out = tmp_path / "flower.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pgc.cli",
            "audit",
            "--flower",
            "examples/flower/digits_app.py:app",
            "--pair",
            "one record removed",
            "--samples",
            "400",
            "--out",
            str(out),
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    assert "LocalDpMod" in proc.stdout and "verdict (Holm" in proc.stdout
    import pgc.schemas as schemas

    result = schemas.load(__import__("json").loads(out.read_text()))
    assert result.relation == "one record replaced, or one record removed" and result.pair == "one record removed"
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "pgc.cli",
            "audit",
            "--flower",
            "examples/flower/digits_app.py:nope",
            "--samples",
            "200",
            "--out",
            str(tmp_path / "x.json"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "nope" in bad.stderr


def _steinke_bound_reference(m: int, r: int, v: int, alpha: float, delta: float) -> float:
    """Steinke, Nasr & Jagielski (2023), Theorem 3, written out directly: the largest ε whose p-value
    P[Bin(r, q) ≥ v] + 2mδ·max_i P[v − i ≤ Bin(r, q) < v]/i stays ≤ α, by a plain grid then bisection."""

    def p_value(eps: float) -> float:
        q = math.exp(eps) / (1.0 + math.exp(eps))
        tail = stats.binom.sf(v - 1, r, q)
        worst = max(
            ((stats.binom.cdf(v - 1, r, q) - stats.binom.cdf(v - i - 1, r, q)) / i for i in range(1, v + 1)),
            default=0.0,
        )
        return min(1.0, tail + 2 * m * delta * worst)

    if p_value(0.0) > alpha:
        return 0.0
    grid = [e / 100 for e in range(0, 3000)]
    low = max(e for e in grid if p_value(e) <= alpha)
    high = low + 0.01
    for _ in range(40):
        mid = 0.5 * (low + high)
        low, high = (mid, high) if p_value(mid) <= alpha else (low, mid)
    return low


@pytest.mark.slow
def test_one_run_audit_inside_a_flower_simulation_central_dp():
    from pgc.audits.flower import flower_one_run
    from pgc.flower.simulation import OneRunSetup

    setup = OneRunSetup(canaries=20, real_clients=2, rounds=1, mode="central-dp", noise_multiplier=2.0, seed=3)
    out = flower_one_run(setup)
    rows = {r.scope: r for r in out.rows}
    server, third = rows["server"], rows["third party (aggregate)"]
    # the server receives clipped updates in the clear and is promised nothing: every guess is right
    assert server.claimed_epsilon == math.inf and server.accuracy == 1.0
    assert server.verdict == "unprotected channel" and server.epsilon_lower_bound > 0
    assert third.claimed_mu == pytest.approx(1.0) and third.epsilon_lower_bound <= third.claimed_epsilon
    # 20 canaries tell the aggregate's coins apart only if some bound is positive: power is claimed only then
    assert third.verdict == ("consistent" if third.separated else "inconclusive"), third.verdict_reason
    for row in (server, third):  # the bound recomputed by an independent implementation
        alpha = 0.025
        expected = _steinke_bound_reference(row.canaries, row.guesses, row.correct, alpha, 0.0)
        assert row.steinke_epsilon_lower_bound == pytest.approx(expected, abs=1e-4)
