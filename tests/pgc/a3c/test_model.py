"""Model layout and checkpoints: flat layout, state_dict round trip, loading never executes code."""

import pickle

import numpy as np
import pytest
import torch

from pgc.a3c.model import (
    DIM,
    DIM_BIASED,
    ActorCritic,
    CheckpointError,
    glorot_uniform_theta,
    load_checkpoint,
    save_checkpoint,
)


def test_layout_and_dimension(rng):
    theta = rng.normal(size=DIM)
    m = ActorCritic.from_flat(theta)
    assert DIM == 112 and sum(p.numel() for p in m.parameters()) == 112
    assert all(name.endswith("weight") for name, _ in m.named_parameters())  # no biases
    np.testing.assert_array_equal(m.common.weight.detach().numpy().ravel(), theta[:64])  # θ(c) 16×4 row-major
    np.testing.assert_array_equal(m.policy.weight.detach().numpy().ravel(), theta[64:96])  # θ(p) 2×16
    np.testing.assert_array_equal(m.value.weight.detach().numpy().ravel(), theta[96:])  # θ(v) 1×16
    np.testing.assert_array_equal(m.flat(), theta)
    s = torch.as_tensor(rng.normal(size=(5, 4)))
    logits, v = m(s)
    h = torch.relu(s @ torch.as_tensor(theta[:64].reshape(16, 4)).T)
    torch.testing.assert_close(logits, h @ torch.as_tensor(theta[64:96].reshape(2, 16)).T)
    torch.testing.assert_close(v, h @ torch.as_tensor(theta[96:]))


def test_biased_layout(rng):
    """The bias knob (Dense layers with biases, d = 131): biases follow the weights in the flat θ."""
    theta = rng.normal(size=DIM_BIASED)
    m = ActorCritic.from_flat(theta)
    assert m.biases and DIM_BIASED == 131 and sum(p.numel() for p in m.parameters()) == 131
    np.testing.assert_array_equal(m.common.weight.detach().numpy().ravel(), theta[:64])
    np.testing.assert_array_equal(m.common.bias.detach().numpy(), theta[112:128])  # b(c)
    np.testing.assert_array_equal(m.policy.bias.detach().numpy(), theta[128:130])  # b(p)
    np.testing.assert_array_equal(m.value.bias.detach().numpy(), theta[130:])  # b(v)
    np.testing.assert_array_equal(m.flat(), theta)
    s = torch.as_tensor(rng.normal(size=(5, 4)))
    logits, v = m(s)
    h = torch.relu(s @ torch.as_tensor(theta[:64].reshape(16, 4)).T + torch.as_tensor(theta[112:128]))
    torch.testing.assert_close(
        logits, h @ torch.as_tensor(theta[64:96].reshape(2, 16)).T + torch.as_tensor(theta[128:130])
    )
    torch.testing.assert_close(v, h @ torch.as_tensor(theta[96:112]) + theta[130])
    with pytest.raises(ValueError, match="112 or 131"):
        ActorCritic.from_flat(np.zeros(120))
    with pytest.raises(ValueError, match="131"):
        ActorCritic(biases=True).load_flat(np.zeros(DIM))


def test_glorot_limits(rng):
    t = glorot_uniform_theta(rng)
    assert np.abs(t[:64]).max() <= (6 / 20) ** 0.5 and np.abs(t[64:96]).max() <= (6 / 18) ** 0.5


@pytest.mark.parametrize("dim", [DIM, DIM_BIASED])
def test_checkpoint_roundtrip(tmp_path, rng, dim):
    theta = rng.normal(size=dim)
    save_checkpoint(theta, tmp_path / "c.pt")
    np.testing.assert_array_equal(load_checkpoint(tmp_path / "c.pt"), theta)
    assert set(torch.load(tmp_path / "c.pt", weights_only=True)) >= {"common.weight"}
    assert not list(tmp_path.glob("*.tmp"))


def test_checkpoint_with_some_biases_is_refused(tmp_path):
    torch.save(
        {
            "common.weight": torch.zeros(16, 4),
            "policy.weight": torch.zeros(2, 16),
            "value.weight": torch.zeros(1, 16),
            "common.bias": torch.zeros(16),
        },
        tmp_path / "a.pt",
    )
    with pytest.raises(CheckpointError, match="not an ActorCritic"):
        load_checkpoint(tmp_path / "a.pt")


class Boom:
    def __reduce__(self):
        return (exec, ("open('/tmp/pgc-pwned', 'w').write('x')",))


def test_checkpoint_never_executes_code(tmp_path):
    import os

    path = tmp_path / "evil.pt"
    with open(path, "wb") as fh:
        pickle.dump({"common.weight": Boom()}, fh)
    torch.save({"x": Boom()}, tmp_path / "evil2.pt")
    for p in (path, tmp_path / "evil2.pt"):
        with pytest.raises(CheckpointError):
            load_checkpoint(p)
    assert not os.path.exists("/tmp/pgc-pwned")


@pytest.mark.parametrize("content", [b"", b"not a checkpoint", b"PK\x03\x04garbage"])
def test_corrupted_checkpoint(tmp_path, content):
    p = tmp_path / "bad.pt"
    p.write_bytes(content)
    with pytest.raises(CheckpointError):
        load_checkpoint(p)


def test_wrong_checkpoint_contents(tmp_path):
    torch.save({"common.weight": torch.zeros(3, 3)}, tmp_path / "a.pt")
    torch.save(
        {
            "common.weight": torch.zeros(16, 4),
            "policy.weight": torch.zeros(2, 16),
            "value.weight": torch.full((1, 16), float("nan")),
        },
        tmp_path / "b.pt",
    )
    with pytest.raises(CheckpointError, match="not an ActorCritic"):
        load_checkpoint(tmp_path / "a.pt")
    with pytest.raises(CheckpointError, match="non-finite"):
        load_checkpoint(tmp_path / "b.pt")
    with pytest.raises(CheckpointError, match="does not exist"):
        load_checkpoint(tmp_path / "missing.pt")
