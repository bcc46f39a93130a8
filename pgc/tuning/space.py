"""What a tuning study searches and how one trial is evaluated (frozen, validated configs)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from pgc.a3c.hyper import A3CHyperparams
from pgc.a3c.layout import DIM
from pgc.errors import UserError
from pgc.mechanisms import MECHANISMS

# Public/shadow gravities: NOT the paper's private Ψ = {9.7, 9.8, 9.9}. Tuning on the private
# environments would itself be a release about them (each trial's utility depends on them).
SHADOW_GRAVITIES = (9.6, 9.8, 10.0)

# The paper's literal hyper-parameters barely learn within short budgets (greedy argmax actions,
# λ = 0.5): the default tuning preset uses the variant that does (λ = 0, sampled actions).
HYPER_PRESETS = {
    "learnable": A3CHyperparams(lam=0.0, action_selection="sample"),
    "paper": A3CHyperparams(),
}


def _check_range(name: str, lo: float, hi: float, positive: bool = True) -> None:
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo > hi or (positive and lo <= 0):
        raise UserError(f"{name} range must be finite with 0 < low <= high, got ({lo}, {hi})")


@dataclass(frozen=True)
class SearchSpace:
    """Ranges of the searched settings. Continuous ranges are sampled log-uniformly; a range with
    low == high fixes the value. ``reduced_dim`` is searched for PRS only."""

    mechanisms: tuple[str, ...] = ("laplace", "prs")
    epsilon: tuple[float, float] = (0.5, 50.0)
    clip: tuple[float, float] = (0.01, 10.0)
    buffer_size: tuple[int, int] = (1, 100)
    reduced_dim: tuple[int, int] = (1, 20)
    learning_rate: tuple[float, float] = (1e-3, 1.0)

    def __post_init__(self) -> None:
        object.__setattr__(self, "mechanisms", tuple(self.mechanisms))
        if not self.mechanisms:
            raise UserError("need at least one mechanism")
        for m in self.mechanisms:
            if m not in MECHANISMS:
                raise UserError(f"unknown mechanism {m!r}; known: {', '.join(sorted(MECHANISMS))}")
        for name in ("epsilon", "clip", "learning_rate"):
            lo, hi = (float(x) for x in getattr(self, name))
            _check_range(name, lo, hi)
            object.__setattr__(self, name, (lo, hi))
        for name, top in (("buffer_size", 100_000), ("reduced_dim", DIM)):
            lo, hi = getattr(self, name)
            if int(lo) != lo or int(hi) != hi or not 1 <= lo <= hi <= top:
                raise UserError(f"{name} range must be integers with 1 <= low <= high <= {top}, got ({lo}, {hi})")
            object.__setattr__(self, name, (int(lo), int(hi)))

    def suggest(self, trial) -> dict:
        """Draw one setting through an optuna trial (fixed params of an enqueued/retried trial are reused)."""
        mech = trial.suggest_categorical("mechanism", list(self.mechanisms))
        params: dict = {"mechanism": mech}
        if mech != "none":
            params["epsilon"] = _float(trial, "epsilon", self.epsilon)
        params["clip"] = _float(trial, "clip", self.clip)
        params["buffer_size"] = _int(trial, "buffer_size", self.buffer_size)
        if mech == "prs":
            params["reduced_dim"] = _int(trial, "reduced_dim", self.reduced_dim)
        params["learning_rate"] = _float(trial, "learning_rate", self.learning_rate)
        return params

    def to_dict(self) -> dict:
        return asdict(self)


def _float(trial, name: str, rng: tuple[float, float]) -> float:
    lo, hi = rng
    return lo if lo == hi else trial.suggest_float(name, lo, hi, log=True)


def _int(trial, name: str, rng: tuple[int, int]) -> int:
    lo, hi = rng
    return lo if lo == hi else trial.suggest_int(name, lo, hi, log=True)


@dataclass(frozen=True)
class Evaluation:
    """How one optuna trial is scored: ``runs_per_trial`` training runs of ``submissions`` each,
    checked at intermediate ``rungs`` (fractions of ``submissions``) for pruning."""

    runs_per_trial: int = 8
    submissions: int = 3000
    rungs: tuple[float, ...] = (0.25, 1.0)
    prune_below_mu: float = 30.0  # median μ at an intermediate rung below this and no success → prune
    workers: int = 9
    gravities: tuple[float, ...] = SHADOW_GRAVITIES
    environments: str = "shadow/public"  # what the gravities are; "private" spends privacy
    hyper: str = "learnable"
    utility: str = "success_ratio"  # or "final_mu" (median final average score / 200)
    privacy: str = "claimed"  # or "audit" (black-box ε lower bound of the mechanism)
    audit_samples: int = 100_000
    audit_confidence: float = 0.95

    def __post_init__(self) -> None:
        for name in ("runs_per_trial", "submissions", "workers", "audit_samples"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise UserError(f"{name} must be a positive integer, got {v!r}")
        if self.submissions < 20:
            raise UserError("submissions must be >= 20 (the success window is 10)")
        rungs = tuple(sorted(float(r) for r in self.rungs))
        if not rungs or rungs[-1] != 1.0 or any(not 0 < r <= 1 for r in rungs):
            raise UserError(f"rungs must be fractions in (0, 1] ending with 1.0, got {self.rungs}")
        object.__setattr__(self, "rungs", rungs)
        object.__setattr__(self, "gravities", tuple(float(g) for g in self.gravities))
        if not self.gravities or not all(math.isfinite(g) and g > 0 for g in self.gravities):
            raise UserError("gravities must be positive finite numbers")
        if self.hyper not in HYPER_PRESETS:
            raise UserError(f"hyper must be one of {sorted(HYPER_PRESETS)}, got {self.hyper!r}")
        if self.utility not in ("success_ratio", "final_mu"):
            raise UserError(f"utility must be 'success_ratio' or 'final_mu', got {self.utility!r}")
        if self.privacy not in ("claimed", "audit"):
            raise UserError(f"privacy must be 'claimed' or 'audit', got {self.privacy!r}")
        if not 0 < self.audit_confidence < 1:
            raise UserError("audit_confidence must lie in (0, 1)")

    def rung_submissions(self) -> list[int]:
        out = []
        for r in self.rungs:
            n = max(20, int(round(r * self.submissions)))
            if not out or n > out[-1]:
                out.append(n)
        return out

    def to_dict(self) -> dict:
        d = asdict(self)
        d["hyper_values"] = asdict(HYPER_PRESETS[self.hyper])
        return d


@dataclass(frozen=True)
class StudySettings:
    """A whole study: search space, evaluation, mode and sampler."""

    space: SearchSpace = field(default_factory=SearchSpace)
    evaluation: Evaluation = field(default_factory=Evaluation)
    mode: str = "pareto"  # or "constrained": smallest privacy value with utility >= min_utility
    min_utility: float | None = None
    sampler: str = "tpe"  # tpe | nsga2 | random
    seed: int = 0

    def __post_init__(self) -> None:
        if self.mode not in ("pareto", "constrained"):
            raise UserError(f"mode must be 'pareto' or 'constrained', got {self.mode!r}")
        if self.mode == "constrained":
            if self.min_utility is None or not 0 <= self.min_utility <= 1:
                raise UserError("constrained mode needs min_utility in [0, 1] (e.g. --min-success 0.5)")
        if self.sampler not in ("tpe", "nsga2", "random"):
            raise UserError(f"sampler must be tpe, nsga2 or random, got {self.sampler!r}")
        if not isinstance(self.seed, int) or self.seed < 0:
            raise UserError(f"seed must be a non-negative integer, got {self.seed!r}")

    def to_dict(self) -> dict:
        return {
            "space": self.space.to_dict(),
            "evaluation": self.evaluation.to_dict(),
            "mode": self.mode,
            "min_utility": self.min_utility,
            "sampler": self.sampler,
            "seed": self.seed,
        }
