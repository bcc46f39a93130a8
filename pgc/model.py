"""The paper's actor-critic (§4 "Implementation"): θ(c) ∈ R^{16×4}, θ(p) ∈ R^{2×16}, θ(v) ∈ R^{1×16}.

    h = ReLU(θ(c) s),   π(·|s) = softmax(θ(p) h),   V(s) = θ(v) h        (no biases, d = 112)

Canonical flat layout of θ ∈ R^112 (used by the kernel, the mechanisms, transcripts, checkpoints):

    θ[0:64]    = θ(c) row-major, θ(c)[j, i] at 4*j + i   (hidden unit j, state feature i)
    θ[64:96]   = θ(p) row-major, θ(p)[a, j] at 64 + 16*a + j
    θ[96:112]  = θ(v),           θ(v)[0, j] at 96 + j

Checkpoints are torch ``state_dict`` files loaded with ``weights_only=True``: loading never executes
code from the file.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import torch
from torch import nn

STATE_DIM = 4
HIDDEN = 16
ACTIONS = 2
DIM = HIDDEN * STATE_DIM + ACTIONS * HIDDEN + HIDDEN  # 112
SLICE_COMMON = slice(0, 64)
SLICE_POLICY = slice(64, 96)
SLICE_VALUE = slice(96, 112)
_PARAM_NAMES = ("common.weight", "policy.weight", "value.weight")


class ActorCritic(nn.Module):
    """Shared hidden layer, policy head and value head; see module docstring for the layout."""

    def __init__(self) -> None:
        super().__init__()
        self.common = nn.Linear(STATE_DIM, HIDDEN, bias=False)
        self.policy = nn.Linear(HIDDEN, ACTIONS, bias=False)
        self.value = nn.Linear(HIDDEN, 1, bias=False)

    def forward(self, states: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Returns ``(logits (n, 2), value (n,))``."""
        h = torch.relu(self.common(states))
        return self.policy(h), self.value(h).squeeze(-1)

    def flat(self) -> np.ndarray:
        """θ as the canonical float64 112-vector."""
        with torch.no_grad():
            return np.concatenate([p.detach().double().reshape(-1).numpy() for p in self._ordered()])

    def load_flat(self, theta: np.ndarray) -> "ActorCritic":
        theta = check_theta(theta)
        offset = 0
        with torch.no_grad():
            for p in self._ordered():
                n = p.numel()
                # torch.tensor copies: θ may be a read-only array (e.g. a task's result from a Ray cluster)
                p.copy_(torch.tensor(theta[offset : offset + n].reshape(p.shape)).to(p.dtype))
                offset += n
        return self

    def _ordered(self) -> list[nn.Parameter]:
        return [self.common.weight, self.policy.weight, self.value.weight]

    @classmethod
    def from_flat(cls, theta: np.ndarray) -> "ActorCritic":
        return cls().double().load_flat(theta)


def check_theta(theta: np.ndarray) -> np.ndarray:
    theta = np.asarray(theta, dtype=np.float64)
    if theta.shape != (DIM,):
        raise ValueError(f"θ must be a flat vector of {DIM} parameters, got shape {theta.shape}")
    if not np.all(np.isfinite(theta)):
        raise ValueError("θ contains non-finite values")
    return theta


def glorot_uniform_theta(rng: np.random.Generator) -> np.ndarray:
    """Initial θ drawn as TensorFlow 1.x's default dense-layer initializer (Glorot uniform).

    The paper used TF 1.14 without naming an initializer, so its default is the faithful guess.
    """
    parts = []
    for fan_out, fan_in in ((HIDDEN, STATE_DIM), (ACTIONS, HIDDEN), (1, HIDDEN)):
        limit = math.sqrt(6.0 / (fan_in + fan_out))
        parts.append(rng.uniform(-limit, limit, size=fan_out * fan_in))
    return np.concatenate(parts)


def save_checkpoint(theta: np.ndarray, path: str | Path, metadata: dict[str, str] | None = None) -> None:
    """Write θ as a torch state_dict (float64) atomically (temp file, then rename)."""
    model = ActorCritic.from_flat(theta)
    payload = {k: v.detach().clone() for k, v in model.state_dict().items()}
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    torch.save(payload, tmp)
    tmp.replace(path)


class CheckpointError(ValueError):
    """A checkpoint file is missing, corrupted or not an actor-critic state_dict."""


def load_checkpoint(path: str | Path) -> np.ndarray:
    """Load θ (canonical flat 112-vector) from a state_dict file without executing code from it."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"checkpoint {path} does not exist")
    try:
        with warnings.catch_warnings():  # torch warns on stderr about foreign pickle protocols
            warnings.simplefilter("ignore")
            state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises many types for corrupted / unsafe files
        raise CheckpointError(f"checkpoint {path} could not be loaded safely: {exc}") from None
    if not isinstance(state, dict) or set(state) != set(_PARAM_NAMES):
        keys = sorted(state) if isinstance(state, dict) else type(state).__name__
        raise CheckpointError(f"checkpoint {path} is not an ActorCritic state_dict (found {keys})")
    model = ActorCritic().double()
    try:
        model.load_state_dict({k: torch.as_tensor(v).double() for k, v in state.items()})
    except RuntimeError as exc:
        raise CheckpointError(f"checkpoint {path} has wrong shapes: {exc}") from None
    theta = model.flat()
    if not np.all(np.isfinite(theta)):
        raise CheckpointError(f"checkpoint {path} contains non-finite weights")
    return theta
