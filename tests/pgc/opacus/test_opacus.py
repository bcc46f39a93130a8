"""Opacus as shipped, audited as a System (pgc.opacus): the claim is Opacus's own accounting of the configuration as
run; what the server sees is the update Opacus's DP-SGD produced; ``pgc audit opacus`` end to end.

Statistical tests run at the audit's 95 % confidence with fixed seeds (each verdict below is one deterministic draw;
at an honest claim a false "violated" has probability ≤ 5 % over seeds)."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import numpy as np
import opacus
import pytest
import torch

from audit import audit_system
from pgc.cli.main import main
from pgc.errors import UserError
from pgc.opacus import OpacusClient
from pgc.opacus.system import OpacusSystem

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "opacus" / "linear_client.py"


def client(features=8, **changes):
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(60, features, generator=generator)
    y = (x[:, 0] > 0).long()
    torch.manual_seed(0)
    settings = dict(
        model=torch.nn.Linear(features, 2),
        features=x,
        labels=y,
        noise_multiplier=1.0,
        max_grad_norm=1.0,
        batch_size=10,
        local_steps=2,
        lr=0.5,
    )
    return OpacusClient(**{**settings, **changes})


@pytest.mark.parametrize("accountant, batch", [("rdp", 10), ("prv", 10), ("gdp", 10), ("prv", 7)])
def test_the_claim_is_opacus_own_accounting_of_the_training_as_run(accountant, batch):
    """Opacus's sample rate is 1 / len(data_loader): 60 records in batches of 7 make 9 batches, q = 1/9, not 7/60."""
    c = client(accountant=accountant, batch_size=batch)
    system = OpacusSystem(c)
    engine = opacus.PrivacyEngine(accountant=accountant)
    model = torch.nn.Linear(8, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(c.features, c.labels), batch_size=batch)
    model, optimizer, loader = engine.make_private(
        module=model, optimizer=optimizer, data_loader=loader, noise_multiplier=1.0, max_grad_norm=1.0
    )
    steps = 0
    for x, y in loader:
        optimizer.zero_grad()
        if len(x):
            torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
        steps += 1
        if steps == c.local_steps:
            break
    assert system.claim.epsilon == pytest.approx(engine.get_epsilon(c.delta), rel=1e-9)
    assert system.claim.covers == ("update",)


def test_replace_one_is_claimed_by_the_pld_of_the_same_event_and_exceeds_add_remove():
    system = OpacusSystem(client(), relation="replace-one", record=3)
    accounting = system.accounting()
    assert system.claim.epsilon == accounting["pld-replace-one"] > accounting["pld-add-remove"]


def test_a_release_is_the_update_opacus_produced_and_is_reproducible():
    system = OpacusSystem(client(noise_multiplier=0.0, batch_size=60, local_steps=1))
    first = system.release("with", 3, np.random.default_rng(1))
    again = system.release("with", 3, np.random.default_rng(1))
    assert np.array_equal(first["update"], again["update"]) and first["update"].shape == (3, 18)
    assert np.all(first["examples"] == 60)
    # no noise, every record in the batch with probability 1/len(loader) = 1: the update is -lr × the mean clipped
    # gradient of the records drawn, at most lr × C in norm
    assert np.all(np.linalg.norm(first["update"], axis=1) <= 0.5 * 1.0 + 1e-9)


@pytest.mark.slow
def test_opacus_mean_reduction_leaks_the_data_set_size_under_add_remove():
    """Opacus divides the noisy sum by int(records × sample rate): removing one record of 60 (batch 10) changes it
    from 10 to 9, so the noise scale tells the two data sets apart far beyond the claim."""
    system = OpacusSystem(client(features=50, local_steps=1), record=0)
    result = audit_system(system, "with", "without", samples=1000, seed=0)
    assert result.row("update").verdict == "violated" and result.row("update").epsilon_lower_bound > 2.0
    assert result.row("examples").verdict == "unprotected channel"  # the count a client reports beside its update


@pytest.mark.slow
def test_sum_reduction_and_replace_one_keep_the_claim():
    for system, pair in (
        (OpacusSystem(client(local_steps=1, loss_reduction="sum"), record=0), ("with", "without")),
        (OpacusSystem(client(local_steps=1), relation="replace-one", record=0), ("replaced", "original")),
    ):
        result = audit_system(system, *pair, samples=600, seed=0)
        assert result.row("update").verdict != "violated", system.relation


def test_bad_settings_are_refused_in_one_line():
    from pgc.errors import UserError

    with pytest.raises(UserError, match="batch_size"):
        client(batch_size=0)
    with pytest.raises(UserError, match="accountant"):
        client(accountant="moments")
    with pytest.raises(UserError, match="record"):
        OpacusSystem(client(), record=60)
    with pytest.raises(UserError, match="replace-one"):
        OpacusSystem(client(), relation="replace-one", record="canary")


@pytest.mark.slow
def test_cli_audits_the_example_and_refuses_bad_input(tmp_path, capsys):
    out = tmp_path / "op.json"
    argv = ["audit", "opacus", f"{EXAMPLE}:make", "--samples", "300", "--out", str(out), "--no-progress"]
    assert main(argv) == 0
    result = json.loads(out.read_text())
    assert result["kind"] == "system-audit" and result["rows"][0]["channel"] == "update"
    assert {lib["name"] for lib in result["provenance"]["libraries"]} >= {"opacus", "torch"}
    assert main(["audit", "opacus", f"{EXAMPLE}:make", "--record", "x", "--out", str(tmp_path / "b.json")]) == 2
    assert "--record 'x'" in capsys.readouterr().err


def test_an_exception_in_the_users_factory_is_theirs(tmp_path, capsys):
    (tmp_path / "broken_opacus.py").write_text(
        textwrap.dedent("""
            def make():
                return 1 / 0
        """)
    )
    code = main(["audit", "opacus", f"{tmp_path / 'broken_opacus.py'}:make", "--out", str(tmp_path / "x.json")])
    err = capsys.readouterr().err
    assert code == 2 and "ZeroDivisionError" in err and "broken_opacus.py" in err and "pgc/" not in err.split("\n")[-2]
    assert not (tmp_path / "x.json").exists()
    assert sys.modules  # the process survives the user's exception


def test_without_noise_the_update_is_flagged_violated():
    """A noiseless full-batch training (σ = 0, whose own claim is ε = ∞) under the claim of the same training at
    σ = 4: the update is a deterministic function of the data set, and the audit flags it at 300 releases per side."""
    settings = dict(batch_size=60, local_steps=1, loss_reduction="sum")
    noiseless = OpacusSystem(client(noise_multiplier=0.0, **settings), record=0)
    assert noiseless.claim.epsilon == float("inf")
    noiseless.claim = OpacusSystem(client(noise_multiplier=4.0, **settings), record=0).claim
    assert noiseless.claim.epsilon < 2.0
    result = audit_system(noiseless, "with", "without", samples=300, seed=0)
    assert result.row("update").verdict == "violated"


@pytest.mark.slow
def test_worker_processes_release_what_one_process_releases():
    serial = OpacusSystem(client(local_steps=1), record=3)
    pooled = OpacusSystem(client(local_steps=1), record=3, workers=2)
    try:
        a = serial.release("without", 9, np.random.default_rng(5))["update"]
        b = pooled.release("without", 9, np.random.default_rng(5))["update"]
    finally:
        pooled.close()
    assert a.shape == b.shape == (9, 18) and np.allclose(a, b, rtol=0, atol=1e-6)


def test_bad_workers_exit_2_in_one_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["audit", "opacus", f"{EXAMPLE}:make", "--workers", "0", "--out", str(tmp_path / "w.json")])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "--workers" in err and len(err.splitlines()) == 1 and not (tmp_path / "w.json").exists()


def test_the_per_step_view_releases_every_local_step_and_is_claimed():
    system = OpacusSystem(client(local_steps=3), record=2, per_step=True)
    out = system.release("with", 4, np.random.default_rng(2))
    plain = OpacusSystem(client(local_steps=3), record=2).release("with", 4, np.random.default_rng(2))
    assert out["steps"].shape == (4, 3 * 18) and np.array_equal(out["update"], plain["update"])
    assert np.allclose(out["steps"].reshape(4, 3, 18).sum(1), out["update"], atol=1e-6)
    assert system.channels == ("update", "steps", "examples") and system.claim.covers == ("update", "steps")


@pytest.mark.slow
def test_the_black_box_view_is_the_trained_models_loss_on_the_differing_record():
    """A black-box release is the loss of the record that differs, under the model the same seeded training left
    (computed here from the white-box update of the same seed); a leaky training (σ = 0.5, the record in every
    step) is told apart through it at 400 releases per side, and the white-box-only settings are refused."""
    settings = dict(batch_size=60, local_steps=2, loss_reduction="sum")
    box = OpacusSystem(client(**settings), record=4, black_box=True)
    assert box.channels == ("loss",) and box.claim.covers == ("loss",)
    loss = box.release("with", 3, np.random.default_rng(8))["loss"]
    update = OpacusSystem(client(**settings), record=4).release("with", 3, np.random.default_rng(8))["update"]
    c = client(**settings)
    weight, bias = c.model.weight.detach().double(), c.model.bias.detach().double()
    x, y = c.features[4].double(), c.labels[4]
    for i in range(3):
        w = weight + torch.from_numpy(update[i, :16]).reshape(2, 8)
        b = bias + torch.from_numpy(update[i, 16:])
        expected = torch.nn.functional.cross_entropy((w @ x + b)[None], y[None], reduction="sum")
        assert loss[i, 0] == pytest.approx(float(expected), rel=1e-3)  # float32 training, float64 check
    leaky = OpacusSystem(client(noise_multiplier=0.5, **settings), record="canary", black_box=True)
    result = audit_system(leaky, "with", "without", samples=400, seed=1)
    assert result.row("loss").epsilon_lower_bound > 1.0
    for bad in (dict(record="gradient", black_box=True), dict(record=0, per_step=True, black_box=True)):
        with pytest.raises(UserError, match="black_box"):
            OpacusSystem(client(), **bad)


def _example(name: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, EXAMPLE.with_name(f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_large_example_client_has_about_100000_parameters_and_releases_them():
    system = OpacusSystem(_example("large_client").make())
    out = system.release("with", 2, np.random.default_rng(0))
    assert out["update"].shape == (2, 100_942) and np.all(out["examples"] == 200)


def test_the_offered_tests_project_on_the_records_clipped_gradient():
    system = OpacusSystem(client(local_steps=2, loss_reduction="sum"), record="canary", per_step=True)
    names = {channel: [t.name for t in system.audit_statistics(channel)] for channel in system.channels}
    assert names == {
        "update": ["canary-gradient"],
        "steps": ["canary-gradient-sum", "canary-gradient-max"],
        "examples": [],
    }
    (test,) = system.audit_statistics("update")
    assert np.linalg.norm(test.direction) == pytest.approx(1.0)  # clipped to C = 1 (the canary's gradient is large)
    rng = np.random.default_rng(0)
    pos, neg = system.release("with", 200, rng)["update"], system.release("without", 200, rng)["update"]
    score = test.fit(pos, neg)
    fresh_pos, fresh_neg = system.release("with", 200, rng)["update"], system.release("without", 200, rng)["update"]
    assert score(fresh_pos).mean() > score(fresh_neg).mean()  # the record's side scores higher on fresh releases


def test_the_opposed_data_set_moves_the_records_shuffled_batch_by_twice_its_gradient():
    """examples/opacus/linear_client.py:make_opposed without noise: every other record's clipped gradient points
    against record 0's; with shuffled batches of fixed size, record 0's batch moves by 2C along record 0's gradient
    (its own +C and the −C of the record it pushed out of the pass) and no other step moves, unless record 0 was the
    one left out of the pass (the 21st of 21 records: 1 round in 21)."""
    from pgc.opacus.statistics import clipped_gradients

    client = _example("linear_client").make_opposed(noise_multiplier=0.0, batches=10)
    own, *others = clipped_gradients(client, client.features, client.labels)
    assert max(float(g @ own) for g in others) < -0.98  # C = 1: cosines below −0.98
    system = OpacusSystem(client, per_step=True)
    rng = np.random.default_rng(3)
    # each step's change projected on record 0's gradient, over −lr: the batch's clipped gradients summed on it
    on_own = {s: system.release(s, 40, rng)["steps"].reshape(40, 10, -1) @ own / -1e-4 for s in ("with", "without")}
    assert np.allclose(on_own["without"], -2.0, atol=0.05)  # two opposed records in every batch
    moved = np.isclose(on_own["with"] + 2.0, 2.0, atol=0.05)  # record 0 and one opposed record: about 0
    kept = np.isclose(on_own["with"] + 2.0, 0.0, atol=0.05)
    assert np.all(moved | kept) and np.all(moved.sum(axis=1) <= 1) and moved.sum() >= 30


def test_the_gradient_canary_adds_its_clipped_gradient_to_the_batches_that_sample_it():
    """Full batch, no noise, loss_reduction="sum": the canary is in the one batch, and the update moves by exactly
    −lr × C on its coordinate, nowhere else."""
    system = OpacusSystem(
        client(noise_multiplier=0.0, batch_size=60, local_steps=1, loss_reduction="sum"), record="gradient"
    )
    with_, without = (system.release(s, 2, np.random.default_rng(0))["update"] for s in ("with", "without"))
    (test,) = system.audit_statistics("update")
    j = int(np.argmax(test.direction))
    assert test.direction[j] == 1.0 and np.count_nonzero(test.direction) == 1
    expected = np.zeros(18)
    expected[j] = -0.5 * 1.0
    assert np.allclose(with_ - without, expected, atol=1e-5)
    assert system._data("with")[0] is system._data("without")[0]  # the data set is the same: the canary is a gradient


def test_the_gradient_canary_is_sampled_as_one_more_record(monkeypatch):
    """Shuffled: exactly once per pass over the data; Poisson: in a step with probability q = 10 / 60 (600 steps:
    a binomial count outside 100 ± 4.4 sd, false-failure rate < 1e-5)."""
    from pgc.opacus.canary import GradientCanary

    inserted = []
    monkeypatch.setattr(
        GradientCanary, "insert", lambda self, params, sampled: inserted.extend([1] * int(sampled.sum()))
    )
    shuffled = OpacusSystem(client(local_steps=12, poisson_sampling=False), record="gradient")
    shuffled.release("with", 5, np.random.default_rng(0))
    assert len(inserted) == 5 * 2  # 12 steps of 10 records out of 60: two passes per round
    inserted.clear()
    poisson = OpacusSystem(client(local_steps=12), record="gradient")
    poisson.release("with", 50, np.random.default_rng(0))
    assert abs(len(inserted) - 100) <= 4.4 * (600 * (1 / 6) * (5 / 6)) ** 0.5
    before = len(inserted)
    poisson.release("without", 5, np.random.default_rng(0))
    assert len(inserted) == before  # never without the canary


@pytest.mark.slow
def test_full_batch_dp_sgd_is_claimed_with_its_exact_gaussian_curve_and_the_audit_certifies_mu():
    from audit.certification.curves import gdp_epsilon

    system = OpacusSystem(
        client(noise_multiplier=2.0, batch_size=60, local_steps=1, loss_reduction="sum"), record="gradient"
    )
    assert system.claim.gdp_mu == pytest.approx(0.5)
    assert gdp_epsilon(1e-5, 0.5) == pytest.approx(system.accounting()["pld-add-remove"], rel=1e-3)
    assert OpacusSystem(client(), record="gradient").claim.gdp_mu is None  # Poisson batches: no Gaussian curve stated
    strong = OpacusSystem(
        client(noise_multiplier=1.0, batch_size=60, local_steps=1, loss_reduction="sum"), record="gradient"
    )
    row = audit_system(strong, "with", "without", samples=1500, seed=0).row("update")
    assert row.verdict == "consistent" and 0.5 < row.mu_lower_bound <= 1.0


def test_release_workers_end_when_their_parent_is_killed(tmp_path):
    """A parent killed before it can close its pool (SIGKILL) leaves no worker process behind: each worker watches
    its parent and ends within a few seconds of losing it."""
    import os
    import signal
    import subprocess
    import time

    script = tmp_path / "parent.py"
    script.write_text(
        textwrap.dedent(
            """
            import time
            from pgc.opacus.pool import ReleasePool

            if __name__ == "__main__":
                pool = ReleasePool(dict, {}, 2)  # workers whose system is a plain dict: they start and idle
                try:
                    pool.updates("x", __import__("numpy").arange(2))
                except AttributeError:
                    pass
                print(" ".join(str(p) for p in pool._pool._processes), flush=True)
                time.sleep(600)
            """
        )
    )
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    workers = [int(p) for p in parent.stdout.readline().split()]
    assert len(workers) == 2
    parent.send_signal(signal.SIGKILL)
    parent.wait()

    def alive(pid: int) -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        with open(f"/proc/{pid}/stat") as f:  # a reaped-later zombie has ended too
            return f.read().split()[2] != "Z"

    deadline = time.monotonic() + 20
    while any(alive(p) for p in workers) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(alive(p) for p in workers), workers
