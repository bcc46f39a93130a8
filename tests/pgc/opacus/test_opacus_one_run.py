"""One real Opacus training with gradient canaries, audited in one run (pgc.opacus.one_run,
``pgc audit opacus-one-run``): the canaries' observations are what Opacus did with them, and the bounds come from
the project's one-run audit."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from pgc.audits.opacus import one_run_rows
from pgc.cli.main import main
from pgc.opacus import OpacusClient
from pgc.opacus.claims import opacus_epsilon
from pgc.opacus.one_run import train_with_canaries

MLP = Path(__file__).resolve().parents[3] / "examples" / "opacus" / "mlp_client.py"


def client(**changes):
    """60 records of 8 features whose last three are zero: the weights they feed get no gradient from the data."""
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(60, 8, generator=generator)
    x[:, 5:] = 0.0
    y = (x[:, 0] > 0).long()
    torch.manual_seed(0)
    settings = dict(
        model=torch.nn.Linear(8, 2),
        features=x,
        labels=y,
        noise_multiplier=0.0,
        max_grad_norm=1.0,
        batch_size=60,
        local_steps=3,
        lr=0.5,
        loss_reduction="sum",
    )
    return OpacusClient(**{**settings, **changes})


@pytest.mark.parametrize("reduction", ["sum", "mean"])
def test_each_included_canary_moves_its_coordinate_by_one_unit_per_step_it_is_sampled(reduction):
    """No noise, every record in every step: a canary's observation is its coin, step after step, in units of its
    own contribution (Opacus's division by its expected batch size undone under the mean reduction)."""
    seen = train_with_canaries(client(loss_reduction=reduction), canaries=6, seed=1)
    assert seen.per_step.shape == (3, 6) and set(seen.coins) == {0, 1}
    assert sorted(seen.coordinates) == [5, 6, 7, 13, 14, 15]  # the weights of the zero features: no data drift
    np.testing.assert_allclose(seen.per_step, np.broadcast_to(seen.coins, (3, 6)), atol=1e-5)


def test_shuffled_batches_sample_each_included_canary_once_per_pass():
    seen = train_with_canaries(client(batch_size=10, local_steps=12, poisson_sampling=False), canaries=6, seed=2)
    np.testing.assert_allclose(seen.per_step.sum(axis=0), 2 * seen.coins, atol=1e-5)  # two passes of six batches
    assert np.all(np.isclose(seen.per_step, 0, atol=1e-5) | np.isclose(seen.per_step, 1, atol=1e-5))


@pytest.mark.parametrize("reduction", ["sum", "mean"])
@pytest.mark.parametrize("poisson", [True, False])
def test_removing_the_data_drift_leaves_exactly_the_canaries_sampled_counts(reduction, poisson):
    """Every feature non-zero, so the data's gradients move every canary's coordinate: the raw observations are
    far from the coins; with the data's clipped gradients removed they are the sampled counts (no noise), step by
    step — every step of a full batch, once a pass of shuffled batches (12 steps of 6 batches: two passes). Every
    coordinate is a canary's, ordered by gradient size across the weight and the bias, so each canary's drift must be
    read from its own parameter and put back in the canaries' order."""
    x = torch.randn(60, 8, generator=torch.Generator().manual_seed(3))
    shape = dict(batch_size=60, local_steps=3) if poisson else dict(batch_size=10, local_steps=12)
    labels = (x[:, 0] > 0).long()
    drifting = client(loss_reduction=reduction, features=x, labels=labels, poisson_sampling=poisson, **shape)
    seen = train_with_canaries(drifting, canaries=18, seed=1)  # every coordinate: the weights and the biases
    counts = seen.every_step()
    assert np.abs(seen.per_step - counts).max() > 0.5  # the drift is there, and large
    assert np.all(np.isclose(counts, 0, atol=1e-4) | np.isclose(counts, 1, atol=1e-4))
    np.testing.assert_allclose(counts.sum(axis=0), (3 if poisson else 2) * seen.coins, atol=1e-4)


def test_a_noiseless_training_under_a_noisy_claim_is_violated_and_the_honest_one_is_not():
    """The MLP example at 1,000 records, batch 100, 10 steps, 300 canaries: trained without noise but judged
    against the claim of σ = 3, every guess is right and the bound exceeds the claim; trained at σ = 3, it does not
    (a false violation has probability ≤ 5 % per row at the audit's confidence; the seed is fixed)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("mlp_client", MLP)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    small = dict(records=1000, batch_size=100, local_steps=10)
    noisy = module.make(noise_multiplier=3.0, **small)
    seen = train_with_canaries(module.make(noise_multiplier=0.0, **small), canaries=300, seed=0)
    steps, final = one_run_rows(noisy, seen, seed=0, confidence=0.95)
    assert steps.claimed_epsilon == pytest.approx(opacus_epsilon("prv", 0.1, 3.0, 10, 1e-5))
    assert steps.claimed_epsilon < 1.0
    assert steps.verdict == "violated" and steps.epsilon_lower_bound > steps.claimed_epsilon
    honest = one_run_rows(noisy, train_with_canaries(noisy, canaries=300, seed=0), seed=0, confidence=0.95)
    assert all(row.verdict != "violated" for row in honest)


def test_cli_writes_a_typed_result_and_refuses_more_canaries_than_coordinates(tmp_path, capsys):
    import pgc.schemas as schemas

    out = tmp_path / "one.json"
    argv = ["audit", "opacus-one-run", f"{MLP}:make", "--setting", "records=2000", "--setting", "local_steps=10"]
    assert main([*argv, "--canaries", "200", "--out", str(out), "--no-progress"]) == 0
    result = schemas.load(json.loads(out.read_text()))
    assert isinstance(result, schemas.OpacusOneRunResult) and result.canaries == 200
    assert [r.scope for r in result.rows] == ["every step (white-box)", "the final model"]
    assert result.training.steps == 10 and result.training.records == 2000
    assert main([*argv, "--canaries", "99999", "--out", str(tmp_path / "x.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "--canaries must lie in [1, 6594]" in err[-1] and not (tmp_path / "x.json").exists()
