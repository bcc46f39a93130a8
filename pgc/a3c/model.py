"""The paper's actor-critic (§4 "Implementation"): θ(c) ∈ R^{16×4}, θ(p) ∈ R^{2×16}, θ(v) ∈ R^{1×16}.

    h = ReLU(θ(c) s),   π(·|s) = softmax(θ(p) h),   V(s) = θ(v) h        (no biases, d = 112)

The paper counts d = 112 parameters, so its layers have no biases. The Keras A3C CartPole example
whose exploration schedule §4 reproduces uses Dense layers with biases (zero-initialised); the
reading knob ``A3CHyperparams.biases`` adds them (d = 131):

    h = ReLU(θ(c) s + b(c)),   π(·|s) = softmax(θ(p) h + b(p)),   V(s) = θ(v) h + b(v)

Canonical flat layout of θ ∈ R^d (used by the kernel, the mechanisms, transcripts, checkpoints):

    θ[0:64]    = θ(c) row-major, θ(c)[j, i] at 4*j + i   (hidden unit j, state feature i)
    θ[64:96]   = θ(p) row-major, θ(p)[a, j] at 64 + 16*a + j
    θ[96:112]  = θ(v),           θ(v)[0, j] at 96 + j
    θ[112:128] = b(c),           b(c)[j] at 112 + j        (biases only: d = 131)
    θ[128:130] = b(p),           b(p)[a] at 128 + a
    θ[130]     = b(v)

The biases come after the weights, so a biased θ's first 112 entries are an unbiased θ's layout.

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

from pgc.errors import UserError
from pgc.files import atomic_path

from .layout import ACTIONS, DIM, DIM_BIASED, DIMS, HIDDEN, STATE_DIM, model_dim

SLICE_COMMON = slice(0, 64)
SLICE_POLICY = slice(64, 96)
SLICE_VALUE = slice(96, 112)
_WEIGHT_NAMES = ("common.weight", "policy.weight", "value.weight")
_BIAS_NAMES = ("common.bias", "policy.bias", "value.bias")


def has_biases(theta: np.ndarray) -> bool:
    """Whether a canonical θ (…, d) is the biased layout (d = 131)."""
    return np.shape(theta)[-1] == DIM_BIASED


def with_zero_biases(theta: np.ndarray, biases: bool) -> np.ndarray:
    """θ for a model with or without biases: an unbiased θ (…, 112) gets zero biases appended when
    ``biases`` (the same network function); anything else is returned as it is."""
    theta = np.asarray(theta, dtype=np.float64)
    if biases and theta.shape[-1] == DIM:
        return np.concatenate([theta, np.zeros(theta.shape[:-1] + (DIM_BIASED - DIM,))], axis=-1)
    return theta


class ActorCritic(nn.Module):
    """Shared hidden layer, policy head and value head; see module docstring for the layout."""

    def __init__(self, biases: bool = False) -> None:
        super().__init__()
        self.biases = bool(biases)
        self.common = nn.Linear(STATE_DIM, HIDDEN, bias=self.biases)
        self.policy = nn.Linear(HIDDEN, ACTIONS, bias=self.biases)
        self.value = nn.Linear(HIDDEN, 1, bias=self.biases)

    @property
    def dim(self) -> int:
        return model_dim(self.biases)

    def forward(self, states: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Returns ``(logits (n, 2), value (n,))``."""
        h = torch.relu(self.common(states))
        return self.policy(h), self.value(h).squeeze(-1)

    def flat(self) -> np.ndarray:
        """θ as the canonical float64 d-vector (d = 112, or 131 with biases)."""
        with torch.no_grad():
            return np.concatenate([p.detach().double().reshape(-1).numpy() for p in self._ordered()])

    def load_flat(self, theta: np.ndarray) -> ActorCritic:
        theta = check_theta(theta, self.dim)
        offset = 0
        with torch.no_grad():
            for p in self._ordered():
                n = p.numel()
                # torch.tensor copies: θ may be a read-only array (e.g. a task's result from a Ray cluster)
                p.copy_(torch.tensor(theta[offset : offset + n].reshape(p.shape)).to(p.dtype))
                offset += n
        return self

    def _ordered(self) -> list[nn.Parameter]:
        weights = [self.common.weight, self.policy.weight, self.value.weight]
        return weights + ([self.common.bias, self.policy.bias, self.value.bias] if self.biases else [])

    @classmethod
    def from_flat(cls, theta: np.ndarray) -> ActorCritic:
        """The model of a canonical θ; its length (112 or 131) says whether it has biases."""
        theta = check_theta(theta)
        return cls(biases=has_biases(theta)).double().load_flat(theta)


def check_theta(theta: np.ndarray, dim: int | None = None) -> np.ndarray:
    """θ as a finite float64 vector of ``dim`` entries (None: either model's, 112 or 131)."""
    theta = np.asarray(theta, dtype=np.float64)
    allowed = DIMS if dim is None else (dim,)
    if theta.ndim != 1 or theta.shape[0] not in allowed:
        want = " or ".join(str(d) for d in allowed)
        raise UserError(f"θ must be a flat vector of {want} parameters, got shape {theta.shape}")
    if not np.all(np.isfinite(theta)):
        raise UserError("θ contains non-finite values")
    return theta


def glorot_uniform_theta(rng: np.random.Generator, biases: bool = False) -> np.ndarray:
    """Initial θ drawn as TensorFlow 1.x's default dense-layer initializer (Glorot uniform).

    The paper used TF 1.14 without naming an initializer, so its default is the faithful guess.
    Biases, when the model has them, start at zero (Keras' ``bias_initializer="zeros"``), so the
    weights are the same draws with and without biases.
    """
    parts = []
    for fan_out, fan_in in ((HIDDEN, STATE_DIM), (ACTIONS, HIDDEN), (1, HIDDEN)):
        limit = math.sqrt(6.0 / (fan_in + fan_out))
        parts.append(rng.uniform(-limit, limit, size=fan_out * fan_in))
    return with_zero_biases(np.concatenate(parts), biases)


def save_checkpoint(theta: np.ndarray, path: str | Path, metadata: dict[str, str] | None = None) -> None:
    """Write θ as a torch state_dict (float64) atomically (temp file, then rename)."""
    model = ActorCritic.from_flat(theta)
    payload = {k: v.detach().clone() for k, v in model.state_dict().items()}
    with atomic_path(path) as tmp:
        torch.save(payload, tmp)


class CheckpointError(UserError):
    """A checkpoint file is missing, corrupted or not an actor-critic state_dict."""


def load_checkpoint(path: str | Path) -> np.ndarray:
    """Load θ (canonical flat vector, 112 or 131 with biases) from a state_dict file without executing
    code from it."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"checkpoint {path} does not exist")
    try:
        with warnings.catch_warnings():  # torch warns on stderr about foreign pickle protocols
            warnings.simplefilter("ignore")
            state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises many types for corrupted / unsafe files
        raise CheckpointError(f"checkpoint {path} could not be loaded safely: {exc}") from None
    names = set(state) if isinstance(state, dict) else None
    if names not in (set(_WEIGHT_NAMES), set(_WEIGHT_NAMES + _BIAS_NAMES)):
        keys = sorted(state) if isinstance(state, dict) else type(state).__name__
        raise CheckpointError(f"checkpoint {path} is not an ActorCritic state_dict (found {keys})")
    model = ActorCritic(biases=len(names) == len(_WEIGHT_NAMES + _BIAS_NAMES)).double()
    try:
        model.load_state_dict({k: torch.as_tensor(v).double() for k, v in state.items()})
    except RuntimeError as exc:
        raise CheckpointError(f"checkpoint {path} has wrong shapes: {exc}") from None
    theta = model.flat()
    if not np.all(np.isfinite(theta)):
        raise CheckpointError(f"checkpoint {path} contains non-finite weights")
    return theta
