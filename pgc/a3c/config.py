"""One trial's settings (:class:`TrainConfig`), validated on construction, and their JSON form.

The defaults are the paper's (§4). :mod:`pgc.a3c.trainer` runs a config; this module only checks and
describes it: types (JSON's, bool is not a number), ranges, the mechanism's ε, δ and C, the
mitigations' budget split.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields

import numpy as np

from pgc.errors import UserError
from pgc.files import json_number
from pgc.mechanisms import MECHANISMS, Mechanism, ProjectedRandomSign, make_mechanism, split_rounds

from .env import PAPER_GRAVITIES, TARGET_SCORE, CartPoleParams
from .hyper import A3CHyperparams
from .metrics import WINDOW
from .protect import ScoreLaplace, parse_protect, split_budget


@dataclass(frozen=True)
class TrainConfig:
    """One trial's settings; defaults are the paper's (§4). Validated on construction."""

    mechanism: str = "laplace"
    epsilon: float = 1.0  # per agent; with rounds = T each submission spends ε/T (§3.2.1)
    clip: float | None = None  # None: the paper's C for the mechanism (0.01 Laplace/none, 1 PRS)
    reduced_dim: int | None = None  # PRS d̂; None: max{1, min{d, ⌊ε/2.5⌋}}
    delta: float | None = None  # the (ε, δ) claim's δ per agent (Gaussian mechanisms only)
    buffer_size: int = 1  # MAX_BUF
    submissions: int = 10_000  # N
    workers: int = 9  # W
    gravities: tuple[float, ...] = PAPER_GRAVITIES  # Ψ
    learning_rate: float = 0.5  # η
    # aggregator's update rule: "sgd" is eq. 22; "rmsprop" (decay ρ, the Keras A3C example's
    # optimizer, lr 5e-3 there) is a reading knob, applied to mean(B) in place of the SGD step
    optimizer: str = "sgd"
    rmsprop_decay: float = 0.99
    exploration_start: float = 0.5
    exploration_decay: float = 1800.0
    # §4's α = max{0, 0.5 − n/1800}: n counts "agents" (in start order, the paper's text) or global
    # environment "steps" (the Keras example's 200 steps × 9 workers)
    exploration_clock: str = "agents"
    rounds: int = 1  # submissions per agent (T of §3.2.1)
    hyper: A3CHyperparams = field(default_factory=A3CHyperparams)
    physics: CartPoleParams = field(default_factory=CartPoleParams)  # gravity replaced by ψ_n
    target_score: float = TARGET_SCORE
    window: int = WINDOW
    stop_at_success: bool = False
    zero_information: bool = False  # control: the mechanism is fed a zero gradient
    seed: int = 0
    # mitigations (pgc.a3c.protect): any of "score", "timing", "order" ("all": the three)
    protect: tuple[str, ...] = ()
    score_epsilon: float | None = None  # per agent, out of ε; None: 10 % of ε (with "score")
    # canary agents for the one-run audit (docs/README-one-run.md): M extra one-submission agents spread
    # over the run (the trial receives N + M submissions), each playing canary_pair[0] or [1] by a fair
    # coin of its own seed stream; "crafted": they play canary_theta, "live": the current θ
    canaries: int = 0
    canary_pair: tuple[float, ...] = ()
    canary_model: str = "live"
    canary_theta: tuple[float, ...] | None = None
    canary_update: str = "exclude"  # "include": canary submissions enter the buffer and the update
    canary_start: int = 0  # regular agents started before the first canary (live canaries at a trained θ)
    # PLANTED BUG, for testing audits only (1 = off): the compiled mechanism twin draws its noise for
    # ε·factor while the run records and claims ε; no audit that simulates the mechanism can see it
    planted_noise_factor: float = 1.0

    def __post_init__(self) -> None:
        if not isinstance(self.mechanism, str):
            raise UserError(f"mechanism must be a name (string), got {self.mechanism!r}")
        if self.mechanism not in MECHANISMS:
            raise UserError(f"unknown mechanism {self.mechanism!r}; known: {', '.join(sorted(MECHANISMS))}")
        _check_types(self)
        object.__setattr__(self, "gravities", tuple(float(g) for g in self.gravities))
        if not self.gravities or not all(math.isfinite(g) for g in self.gravities):
            raise UserError("gravities Ψ must be a non-empty tuple of finite numbers")
        for name in ("buffer_size", "submissions", "workers", "rounds", "window"):
            value = getattr(self, name)
            if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
                raise UserError(f"{name} must be a positive integer, got {value!r}")
        if self.submissions > 10_000_000:
            raise UserError("submissions must be <= 10,000,000")
        if self.workers > 10_000 or self.rounds > 10_000:  # the transcript stores them as int16
            raise UserError("workers and rounds must be <= 10,000")
        if not math.isinf(self.epsilon) and self.epsilon > MAX_EPSILON:
            raise UserError(f"epsilon must be <= {MAX_EPSILON:g} (or inf for no privacy), got {self.epsilon!r}")
        if not (math.isfinite(self.learning_rate) and self.learning_rate > 0):
            raise UserError(f"learning_rate must be > 0, got {self.learning_rate}")
        if self.optimizer not in ("sgd", "rmsprop"):
            raise UserError(f"optimizer must be 'sgd' or 'rmsprop', got {self.optimizer!r}")
        if not (0.0 <= self.rmsprop_decay < 1.0):
            raise UserError(f"rmsprop_decay must lie in [0, 1), got {self.rmsprop_decay!r}")
        if self.exploration_clock not in ("agents", "steps"):
            raise UserError(f"exploration_clock must be 'agents' or 'steps', got {self.exploration_clock!r}")
        if not (0 <= self.exploration_start <= 1) or not self.exploration_decay > 0:
            raise UserError("exploration_start must lie in [0, 1] and exploration_decay be > 0")
        if not isinstance(self.seed, (int, np.integer)) or self.seed < 0:
            raise UserError(f"seed must be a non-negative integer, got {self.seed!r}")
        object.__setattr__(self, "protect", parse_protect(self.protect))
        if self.score_epsilon is not None:
            object.__setattr__(self, "score_epsilon", float(self.score_epsilon))
        if "score" in self.protect and self.mechanism == "none":
            raise UserError("a privatized score needs a private gradient mechanism (not 'none')")
        split_budget(self.epsilon, self.score_epsilon, self.protect)  # validates score_epsilon
        self._check_canaries()
        mechanism = self.build_mechanism()  # validates ε and C for the mechanism
        if isinstance(mechanism, ProjectedRandomSign):
            mechanism.reduced_dim_for(self.hyper.dim)  # d̂ ≤ d

    def _check_canaries(self) -> None:
        if not isinstance(self.canaries, (int, np.integer)) or isinstance(self.canaries, bool) or self.canaries < 0:
            raise UserError(f"canaries must be a non-negative integer, got {self.canaries!r}")
        if self.canaries > 1_000_000:
            raise UserError("canaries must be <= 1,000,000")
        object.__setattr__(self, "canary_pair", tuple(float(g) for g in self.canary_pair))
        if self.canary_theta is not None:
            object.__setattr__(self, "canary_theta", tuple(float(x) for x in self.canary_theta))
        if self.canary_model not in ("live", "crafted"):
            raise UserError(f"canary_model must be 'live' or 'crafted', got {self.canary_model!r}")
        if self.canary_update not in ("exclude", "include"):
            raise UserError(f"canary_update must be 'exclude' or 'include', got {self.canary_update!r}")
        if not (math.isfinite(self.planted_noise_factor) and self.planted_noise_factor > 0):
            raise UserError(f"planted_noise_factor must be > 0, got {self.planted_noise_factor!r}")
        if (
            not isinstance(self.canary_start, (int, np.integer))
            or isinstance(self.canary_start, bool)
            or not 0 <= self.canary_start < self.submissions
        ):
            raise UserError(f"canary_start must be an integer in [0, submissions), got {self.canary_start!r}")
        if self.canaries == 0:
            if self.canary_pair or self.canary_theta is not None or self.canary_start:
                raise UserError("canary_pair / canary_theta are given but canaries is 0")
            return
        if (
            len(self.canary_pair) != 2
            or not all(math.isfinite(g) for g in self.canary_pair)
            or self.canary_pair[0] == self.canary_pair[1]
        ):
            raise UserError(f"canary_pair must be two different finite gravities, got {self.canary_pair!r}")
        if self.rounds != 1:
            raise UserError("canaries need rounds = 1 (each canary is a one-submission agent)")
        if self.stop_at_success:
            raise UserError("canaries cannot be combined with stop_at_success (the run must receive every canary)")
        if self.canary_model == "crafted":
            if self.canary_theta is None:
                raise UserError("canary_model 'crafted' needs canary_theta (the model sent to the canaries)")
            if len(self.canary_theta) != self.hyper.dim or not all(math.isfinite(x) for x in self.canary_theta):
                raise UserError(f"canary_theta must hold {self.hyper.dim} finite numbers, got {len(self.canary_theta)}")
        elif self.canary_theta is not None:
            raise UserError("canary_theta is only used with canary_model 'crafted'")

    @property
    def total_submissions(self) -> int:
        """Submissions the trial receives: N regular ones and the M canaries."""
        return self.submissions + self.canaries

    def canary_setup(self) -> dict:
        """The canary settings as recorded in run folders (without the θ)."""
        return {
            "canaries": int(self.canaries),
            "canary_pair": list(self.canary_pair),
            "canary_model": self.canary_model,
            "canary_update": self.canary_update,
            "canary_start": int(self.canary_start),
        }

    @property
    def gradient_epsilon(self) -> float:
        """ε of the gradient mechanism per agent: ε − ε_score with a privatized score, else ε."""
        return math.inf if self.mechanism == "none" else split_budget(self.epsilon, self.score_epsilon, self.protect)[0]

    @property
    def score_epsilon_total(self) -> float:
        """ε_score per agent (0 when the score is not protected)."""
        return 0.0 if "score" not in self.protect else split_budget(self.epsilon, self.score_epsilon, self.protect)[1]

    def build_mechanism(self) -> Mechanism:
        """The per-submission gradient mechanism (ε − ε_score, split over ``rounds``)."""
        return split_rounds(
            make_mechanism(self.mechanism, self.gradient_epsilon, self.clip, self.reduced_dim, delta=self.delta),
            self.rounds,
        )

    def build_score_mechanism(self) -> ScoreLaplace | None:
        """The per-submission score mechanism (ε_score / rounds, sensitivity cap), or None."""
        if "score" not in self.protect:
            return None
        return ScoreLaplace(self.score_epsilon_total / self.rounds, float(self.hyper.cap))

    def protection(self) -> dict:
        """What is protected and the total claim per agent (recorded in run folders and transcripts)."""
        eps_s = self.score_epsilon_total
        return {
            "protect": list(self.protect),
            "claimed_epsilon_total": json_float(self.epsilon),
            "gradient_epsilon": json_float(self.gradient_epsilon),
            "score_epsilon": eps_s,
            "claim_covers": ["gradient"]
            + (["score"] if "score" in self.protect else [])
            + (["arrival", "arrival-order"] if "timing" in self.protect else []),
            "metrics_from": "privatized scores" if "score" in self.protect else "reported (true) scores",
        }

    def to_dict(self) -> dict:
        d = asdict(self)
        d["gravities"] = list(self.gravities)
        d["epsilon"] = json_float(self.epsilon)
        if self.clip is not None:
            d["clip"] = json_float(self.clip)
        d["protect"] = list(self.protect)
        if not self.protect and self.score_epsilon is None:  # unprotected configs: no protection keys
            del d["protect"], d["score_epsilon"]
        if self.delta is None:  # pure ε configs: no delta key
            del d["delta"]
        if self.canaries == 0:  # runs without canaries: no canary keys
            for key in ("canaries", "canary_pair", "canary_model", "canary_theta", "canary_update", "canary_start"):
                del d[key]
        else:
            d["canary_pair"] = list(self.canary_pair)
            if self.canary_theta is not None:
                d["canary_theta"] = list(self.canary_theta)
        if self.planted_noise_factor == 1.0:
            del d["planted_noise_factor"]
        return d

    @classmethod
    def from_dict(cls, data: dict) -> TrainConfig:
        """A config from JSON-like data; wrongly typed values raise ``ValueError`` naming the key."""
        if not isinstance(data, dict):
            raise UserError(f"a config must be a JSON object, got {type(data).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise UserError(f"unknown config keys: {sorted(unknown)}")
        data = dict(data)
        for key, kind in (("hyper", A3CHyperparams), ("physics", CartPoleParams)):
            if key not in data:
                continue
            value = data[key]
            if isinstance(value, dict):
                sub = {f.name: f for f in fields(kind)}
                bad = sorted(set(value) - set(sub), key=str)
                if bad:
                    raise UserError(f"unknown config {key} keys: {bad}")
                for name, v in value.items():
                    _check_value(f"{key}.{name}", sub[name].type, v)
                data[key] = kind(**value)
            elif not isinstance(value, kind):
                raise UserError(f"config {key} must be an object of {kind.__name__} fields, got {value!r}")
        if "gravities" in data:
            if not isinstance(data["gravities"], (list, tuple)):
                raise UserError(f"config gravities must be a list of numbers, got {data['gravities']!r}")
            data["gravities"] = tuple(data["gravities"])
        for key in ("canary_pair", "canary_theta"):
            if isinstance(data.get(key), list):
                data[key] = tuple(data[key])
        if isinstance(data.get("protect"), list):
            data["protect"] = tuple(data["protect"])
        for key in ("epsilon", "clip"):  # JSON has no inf: "inf" strings are accepted
            if isinstance(data.get(key), str):
                try:
                    data[key] = float(data[key])
                except ValueError:
                    raise UserError(f"config {key} must be a number, got {data[key]!r}") from None
        return cls(**data)

    def replace(self, **changes) -> TrainConfig:
        return TrainConfig(**{**{f.name: getattr(self, f.name) for f in fields(self)}, **changes})


MAX_EPSILON = 1e6  # per-agent ε beyond this is no privacy at all: use the 'none' mechanism (ε = inf)


def _check_value(name: str, annotation, value) -> None:
    """``value`` has the JSON type the field's annotation asks for (bool is not a number)."""
    text = str(annotation)
    if value is None and "None" in text:
        return
    if text.startswith("tuple"):
        ok = isinstance(value, (list, tuple)) and all(
            isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) for v in value
        )
        kind = "a list of numbers"
    elif "float" in text:
        ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))
        kind = "a number"
    elif "bool" in text:
        ok = isinstance(value, (bool, np.bool_))
        kind = "true or false"
    elif "int" in text:
        ok = isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
        kind = "an integer"
    elif "str" in text:
        ok = isinstance(value, str)
        kind = "a string"
    else:
        return
    if not ok:
        raise UserError(f"config {name} must be {kind}, got {value!r}")
    if kind == "a number" and isinstance(value, (float, np.floating)) and math.isnan(value):
        raise UserError(f"config {name} must be a number, got NaN")


def _check_types(config: TrainConfig) -> None:
    for f in fields(config):
        if f.name in ("hyper", "physics"):
            kind = A3CHyperparams if f.name == "hyper" else CartPoleParams
            if not isinstance(getattr(config, f.name), kind):
                raise UserError(f"config {f.name} must be {kind.__name__}, got {getattr(config, f.name)!r}")
            continue
        if f.name == "protect":  # names of channels, parsed and validated by pgc.a3c.protect.parse_protect
            continue
        _check_value(f.name, f.type, getattr(config, f.name))


def json_float(x: float) -> float | str:
    return json_number(x)
