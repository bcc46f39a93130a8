"""Replication of the paper's §4 (Tables 1–3, Figures 2–3) with a zero-information control.

The paper's grid: Laplace with |B| = 1 (C = 0.01) and PRS with |B| = 100 (C = 1), each at
ε ∈ {1, 2, 5, 10}; non-private ε = ∞; 20 trials per setting; cap 90,000 submissions; Ψ = {9.7, 9.8,
9.9}; 9 workers; γ = 0.99, η = 0.5, λ = 0.5, β = 0.01 (§4 "Hyper Parameters").

Zero-information control
------------------------
The same protocol is run with ``TrainConfig(zero_information=True)`` — by default once per
mechanism at the smallest ε (``controls="eps1"``), or beside every private setting
(``controls="matched"``, same ε and d̂):
the mechanism is fed a zero gradient, so each submission is pure mechanism noise at that mechanism's
output scale (Laplace: Lap(C/ε) per coordinate; PRS: Mᵀũ with fair random signs). θ then performs a
random walk that knows nothing about any agent's episode. Whatever such a trial "achieves" is random
search in parameter space; a setting whose FST and success ratio are no better than its control's
has not shown that the noisy gradients carry learning signal.

Readings (the paper's ambiguities)
----------------------------------
A :class:`Reading` is a named, documented preset. Everything the paper states is kept in every
reading; a reading only fixes what the paper leaves open, and lists any departure in
``departures``. The ε = ∞ row is run once per entry of ``nonprivate_variants`` (e.g. clipped with
the Laplace C, as the core's literal reading, and with a loose clip), so Table 3 can be computed
against each non-private reference.

* ``literal`` — the core's defaults: actions argmax π (Alg. 1) with the §4 α-exploration; ε = ∞
  keeps Laplace's L1 clip C = 0.01 (η = 0.5 with an unclipped A3C gradient diverges).
* ``sampled`` — actions drawn from π (the usual A3C actor; §2.2.1 "based on the confidence, each
  agent decides the next action"), with the same α-exploration; everything else as ``literal``.
  ε = ∞ is run twice: clipped at C = 0.01 and clipped at C = 10 (a loose L1 bound that keeps the
  paper's η = 0.5 stable; the C for ε = ∞ is not in the paper).

Metrics (pure functions below)
------------------------------
* Table 1: median FST (eq. 26; a trial that never succeeds within the cap has FST = ∞), with a
  distribution-free order-statistic interval for the median (binomial(K, ½) coverage ≥ 95 %;
  censored trials sort last, so an interval may be open to ∞).
* Table 2: success ratio at the cap (eq. 27) with the exact Clopper–Pearson interval.
* Table 3: relative AUC of the success-ratio curve on submissions 1..cap against the non-private
  run, with a percentile bootstrap interval (both sets of trials resampled; seeded generator).
* Control comparison: one-sided Mann–Whitney U on FST (censored trials tied at the top rank) and
  one-sided Fisher exact test on the success counts, Holm-adjusted over all comparisons of the grid
  (private settings, and ε = ∞ against the Laplace control); beside them, not used by the verdict,
  a one-sided Mann–Whitney U on each trial's best μ (signal below the success threshold).

A cell's verdict is "reproduced" when the paper's number lies inside our 95 % interval (at a cap
below 90,000, a lower success ratio or an FST interval open beyond the cap is not decisive).
Measured outcomes and the verdict: ``docs/README-replicate.md``, ``results/replicate/``.

Runtime: the whole grid goes through ONE :func:`pgc.a3c.trainer.train_batch` call per reading (each
trial one compiled loop, trials spread over ``processes``); Table 1–3 trials use ``stop_at_success``
(FST and success ratio only need the first success), Figure 2 trials run full length.
"""

from __future__ import annotations

import math
import os
import platform
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from pgc.a3c.config import TrainConfig
from pgc.a3c.env import PAPER_GRAVITIES
from pgc.a3c.hyper import A3CHyperparams
from pgc.a3c.metrics import average_scores
from pgc.errors import UserError
from pgc.schemas.shared import PAPER, PAPER_HORIZON
from pgc.schemas.shared import PAPER_TRIALS as SHARED_PAPER_TRIALS

FORMAT = "pgc-replicate/1"
PAPER_EPSILONS = (1.0, 2.0, 5.0, 10.0)
PAPER_TRIALS = SHARED_PAPER_TRIALS
PAPER_CAP = PAPER_HORIZON

# Paper §4, Tables 1–3 (keys: (mechanism, ε)), from the one table in pgc.schemas.shared.
PAPER_FST_MEDIAN = {key: float(row["fst_median"]) for key, row in PAPER.items()}
PAPER_SUCCESS_RATIO = {key: float(row["success_ratio"]) for key, row in PAPER.items()}
PAPER_RELATIVE_AUC = {
    key: float(PAPER[key]["relative_auc"])  # Table 3 lists the non-private run last
    for key in sorted(PAPER, key=lambda key: key[0] == "none")
}
PAPER_BUFFER = {"laplace": 1, "prs": 100, "none": 1}  # §4.1: Laplace |B| = 1, PRS |B| = 100


@dataclass(frozen=True)
class NonPrivateVariant:
    """One way to run ε = ∞: the L1 clip C (``math.inf``: unclipped) and the learning rate η."""

    name: str
    clip: float = 0.01
    learning_rate: float = 0.5

    def __post_init__(self) -> None:
        if not self.name or "/" in self.name:
            raise UserError("variant name must be non-empty and contain no '/'")
        if not (self.clip > 0) or not (math.isfinite(self.learning_rate) and self.learning_rate > 0):
            raise UserError("clip must be > 0 (inf = unclipped) and learning_rate a positive number")


@dataclass(frozen=True)
class Reading:
    """A named, documented way to resolve the paper's ambiguities (see module docstring)."""

    name: str
    summary: str
    hyper: A3CHyperparams
    nonprivate_variants: tuple[NonPrivateVariant, ...]
    departures: tuple[str, ...] = ()
    # the aggregator's update and the exploration clock of private settings (TrainConfig fields)
    learning_rate: float = 0.5  # η of eq. 22 (or RMSprop's lr)
    optimizer: str = "sgd"
    exploration_clock: str = "agents"

    def __post_init__(self) -> None:
        TrainConfig(
            learning_rate=self.learning_rate, optimizer=self.optimizer, exploration_clock=self.exploration_clock
        )  # validates the three
        if not self.nonprivate_variants:
            raise UserError("a reading needs at least one non-private variant")
        names = [v.name for v in self.nonprivate_variants]
        if len(set(names)) != len(names):
            raise UserError("non-private variant names must be unique")

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "summary": self.summary,
            "hyper": asdict(self.hyper),
            "nonprivate_variants": [asdict(v) for v in self.nonprivate_variants],
            "departures": list(self.departures),
            "learning_rate": self.learning_rate,
            "optimizer": self.optimizer,
            "exploration_clock": self.exploration_clock,
        }


_COMMON = (
    "γ = 0.99, η = 0.5, λ = 0.5, β = 0.01; Laplace C = 0.01 |B| = 1, PRS C = 1 |B| = 100, "
    "d̂ = max{1, min{d, ⌊ε/2.5⌋}}; α = max{0, 0.5 − n/1800}; 9 workers; Ψ = {9.7, 9.8, 9.9}; "
    "V(s_T) bootstraps an episode cut at 200 steps; μ over the trailing 10 submissions"
)

READINGS: dict[str, Reading] = {
    "literal": Reading(
        name="literal",
        summary="Alg. 1 as written: greedy argmax actions (plus α-exploration); ε = ∞ keeps L1 clip C = 0.01. "
        + _COMMON,
        hyper=A3CHyperparams(action_selection="greedy"),
        nonprivate_variants=(NonPrivateVariant("C=0.01", clip=0.01, learning_rate=0.5),),
        departures=(),
    ),
    "sampled": Reading(
        name="sampled",
        summary="actions drawn from π (the usual A3C actor) plus α-exploration; ε = ∞ run clipped at the "
        "Laplace C = 0.01 and at a loose C = 10. " + _COMMON,
        hyper=A3CHyperparams(action_selection="sample"),
        nonprivate_variants=(
            NonPrivateVariant("C=0.01", clip=0.01, learning_rate=0.5),
            NonPrivateVariant("C=10", clip=10.0, learning_rate=0.5),
        ),
        departures=(
            "actions a ~ π instead of Alg. 1's argmax π",
            "ε = ∞ variant 'C=10': an L1 clip of 10 on the non-private gradient, not stated in the paper",
        ),
    ),
}


# Each knob: its choices as name tokens (the paper's literal reading first) and what they mean. The
# alternatives come from the Keras A3C CartPole example whose exploration schedule §4 reproduces
# (α: 0.5 → 0 over 200 steps × 9 workers = 1,800): reward 0 per step and ±1 at the end, 5-step
# returns, RMSprop lr 5e-3 (ρ = 0.99), losses averaged over steps, actions sampled from π.
KNOB_PREFIX = "kn"
KNOBS: dict[str, tuple[str, ...]] = {
    "reward": ("unit", "term"),  # r_t = 1 per step (§2.2) | 0 per step, −1 on a fall, +1 at the cap
    "returns": ("full", "n5"),  # eq. 18 over the episode | n-step returns bootstrapped with V
    "bootstrap": ("boot", "noboot"),  # V(s_T) bootstraps an episode cut at the cap (eq. 18) | 0
    "actions": ("greedy", "sample"),  # argmax π (Alg. 1) | a ~ π
    "loss": ("sum", "mean"),  # eqs. 16–17 summed over steps | averaged
    "optimizer": ("sgd", "rms"),  # eq. 22 with η = 0.5 | RMSprop lr 5e-3, ρ = 0.99
    "alpha": ("aagent", "astep"),  # §4's n counts agents | global environment steps
    "clip_inf": ("c0.01", "c10"),  # ε = ∞ keeps Laplace's L1 clip C = 0.01 | a loose C = 10
    "biases": ("nobias", "bias"),  # d = 112 as the paper counts | Dense layers with biases, d = 131
}
# Knobs whose literal token is left out of a reading's name (so names from before they existed still
# name the same reading): a name may end after the earlier knobs.
OPTIONAL_TRAILING_KNOBS = ("biases",)
LITERAL_KNOBS = {k: v[0] for k, v in KNOBS.items()}
RMSPROP_LR = 5e-3


def knob_reading_name(knobs: dict[str, str]) -> str:
    """The name of the reading with these knob tokens, e.g. ``kn-term-n5-noboot-greedy-sum-sgd-aagent-c0.01``."""
    full = {**LITERAL_KNOBS, **knobs}
    for k, v in full.items():
        if k not in KNOBS:
            raise UserError(f"unknown knob {k!r}; known: {', '.join(KNOBS)}")
        if v not in KNOBS[k] and not (k == "returns" and _n_step_token(v) is not None):
            raise UserError(f"knob {k} must be one of {KNOBS[k]}, got {v!r}")
    tokens = [full[k] for k in KNOBS]
    for k in reversed(list(KNOBS)):  # a trailing optional knob at its literal value is not spelled
        if k in OPTIONAL_TRAILING_KNOBS and tokens[-1] == LITERAL_KNOBS[k]:
            tokens.pop()
        else:
            break
    return "-".join([KNOB_PREFIX] + tokens)


def _n_step_token(token: str) -> int | None:
    if token == "full":
        return 0
    if token.startswith("n") and token[1:].isdigit() and 1 <= int(token[1:]) <= 10_000:
        return int(token[1:])
    return None


def reading_knobs(name: str) -> dict[str, str]:
    """The knob tokens a knob reading name spells (every knob; omitted ones at their literal token)."""
    if not isinstance(name, str):
        raise UserError(f"a knob reading name must be a string, got {name!r}")
    parts = name.split("-")
    required = len(KNOBS) - len(OPTIONAL_TRAILING_KNOBS)
    if not required + 1 <= len(parts) <= len(KNOBS) + 1 or parts[0] != KNOB_PREFIX:
        raise UserError(
            f"a knob reading is '{KNOB_PREFIX}-' followed by {required} to {len(KNOBS)} tokens "
            f"({', '.join(KNOBS)}), got {name!r}"
        )
    knobs = {**LITERAL_KNOBS, **dict(zip(KNOBS, parts[1:], strict=False))}
    if knob_reading_name(knobs) != name:
        raise UserError(f"not a knob reading name: {name!r}")
    return knobs


def knob_reading(name: str) -> Reading:
    """The :class:`Reading` a knob name spells (see :data:`KNOBS`)."""
    knobs = reading_knobs(name)
    rms = knobs["optimizer"] == "rms"
    lr = RMSPROP_LR if rms else 0.5
    hyper = A3CHyperparams(
        action_selection="sample" if knobs["actions"] == "sample" else "greedy",
        reward="terminal" if knobs["reward"] == "term" else "unit",
        n_step=_n_step_token(knobs["returns"]),
        bootstrap_truncated=knobs["bootstrap"] == "boot",
        loss_reduction=knobs["loss"],
        biases=knobs["biases"] == "bias",
    )
    clip_inf = float(knobs["clip_inf"][1:])
    departures = [f"{k}: {v}" for k, v in knobs.items() if v != LITERAL_KNOBS[k]]
    return Reading(
        name=name,
        summary="knob reading: " + ", ".join(f"{k}={v}" for k, v in knobs.items()),
        hyper=hyper,
        nonprivate_variants=(NonPrivateVariant(f"C={clip_inf:g}", clip=clip_inf, learning_rate=lr),),
        departures=tuple(departures),
        learning_rate=lr,
        optimizer="rmsprop" if rms else "sgd",
        exploration_clock="steps" if knobs["alpha"] == "astep" else "agents",
    )


# The best reading of the search (results/replicate/search), confirmed on fresh seeds
# (results/replicate/confirmation): the default of the main job and of the mitigations' utility runs.
CONFIRMED_READING = "kn-term-n5-noboot-greedy-sum-rms-aagent-c0.01"


def get_reading(name: str) -> Reading:
    if name in READINGS:
        return READINGS[name]
    if isinstance(name, str) and name.startswith(KNOB_PREFIX + "-"):
        return knob_reading(name)
    raise UserError(
        f"unknown reading {name!r}; known: {', '.join(READINGS)} or a knob reading "
        f"'{KNOB_PREFIX}-<{'>-<'.join(KNOBS)}>'"
    )


CONTROL_MODES = ("matched", "eps1", "none")


@dataclass(frozen=True)
class Setting:
    """One cell of the grid: a mechanism at ε with a buffer size, a control flag and a role.

    role ``"table"``: Table 1–3 trials (stop at the first success); ``"curve"``: Figure 2 trials
    (full length, μ curve kept).
    """

    mechanism: str
    epsilon: float
    buffer_size: int
    control: bool = False
    role: str = "table"
    variant: str = ""  # non-private variant name

    @property
    def key(self) -> str:
        eps = "inf" if math.isinf(self.epsilon) else f"{self.epsilon:g}"
        parts = [self.role, self.mechanism, f"eps={eps}", f"B={self.buffer_size}"]
        if self.variant:
            parts.append(self.variant)
        if self.control:
            parts.append("control")
        return "/".join(parts)


@dataclass(frozen=True)
class GridSpec:
    """What to run. Defaults: the paper's grid (20 trials, cap 90,000) under the ``sampled`` reading."""

    reading: str = "sampled"
    trials: int = PAPER_TRIALS
    cap: int = PAPER_CAP
    epsilons: tuple[float, ...] = PAPER_EPSILONS
    mechanisms: tuple[str, ...] = ("laplace", "prs")
    controls: str = "eps1"  # eps1: one control per mechanism at the smallest ε; matched: one per setting
    curve_trials: int = 2  # Figure 2 trials per (mechanism, |B|) at ε = 1
    curve_submissions: int = 15_000
    workers: int = 9
    seed: int = 0
    processes: int = 1  # train_batch's forked processes (runtime only: results do not depend on it)
    nonprivate_variants: tuple[str, ...] = ()  # subset of the reading's ε=∞ variants to run; () = all

    def __post_init__(self) -> None:
        get_reading(self.reading)
        for name in ("trials", "cap", "workers", "curve_submissions", "processes"):
            v = getattr(self, name)
            if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < 1:
                raise UserError(f"{name} must be a positive integer, got {v!r}")
        if not isinstance(self.curve_trials, (int, np.integer)) or self.curve_trials < 0:
            raise UserError(f"curve_trials must be a non-negative integer, got {self.curve_trials!r}")
        if self.cap > 10_000_000 or self.curve_submissions > 10_000_000:
            raise UserError("cap and curve_submissions must be <= 10,000,000")
        if not isinstance(self.seed, (int, np.integer)) or self.seed < 0:
            raise UserError(f"seed must be a non-negative integer, got {self.seed!r}")
        object.__setattr__(self, "epsilons", tuple(float(e) for e in self.epsilons))
        if not self.epsilons or not all(math.isfinite(e) and e > 0 for e in self.epsilons):
            raise UserError("epsilons must be positive finite numbers")
        if len(set(self.epsilons)) != len(self.epsilons):
            raise UserError("epsilons must be distinct")
        object.__setattr__(self, "mechanisms", tuple(self.mechanisms))
        if not set(self.mechanisms) <= {"laplace", "prs"}:
            raise UserError("mechanisms must be drawn from {'laplace', 'prs'}")
        if self.controls not in CONTROL_MODES:
            raise UserError(f"controls must be one of {CONTROL_MODES}, got {self.controls!r}")
        object.__setattr__(self, "nonprivate_variants", tuple(self.nonprivate_variants))
        known = [v.name for v in get_reading(self.reading).nonprivate_variants]
        unknown = [v for v in self.nonprivate_variants if v not in known]
        if unknown:
            raise UserError(f"unknown ε=∞ variants {unknown} for reading {self.reading!r}; known: {known}")

    def to_dict(self) -> dict:
        d = asdict(self)
        d["epsilons"] = list(self.epsilons)
        d["mechanisms"] = list(self.mechanisms)
        d["nonprivate_variants"] = list(self.nonprivate_variants)
        return d


def grid_settings(spec: GridSpec) -> list[Setting]:
    """The settings of the grid, in a fixed order (non-private, private, controls, curves)."""
    reading = get_reading(spec.reading)
    out = [
        Setting("none", math.inf, 1, variant=v.name)
        for v in reading.nonprivate_variants
        if not spec.nonprivate_variants or v.name in spec.nonprivate_variants
    ]
    for mech in spec.mechanisms:
        out += [Setting(mech, eps, PAPER_BUFFER[mech]) for eps in spec.epsilons]
    for mech in spec.mechanisms:
        if spec.controls == "matched":
            out += [Setting(mech, eps, PAPER_BUFFER[mech], control=True) for eps in spec.epsilons]
        elif spec.controls == "eps1":
            out.append(Setting(mech, min(spec.epsilons), PAPER_BUFFER[mech], control=True))
    if spec.curve_trials:
        eps_curve = 1.0 if 1.0 in spec.epsilons else min(spec.epsilons)
        for mech in spec.mechanisms:
            out += [Setting(mech, eps_curve, b, role="curve") for b in (1, 100)]
    return out


def setting_configs(spec: GridSpec, setting: Setting) -> list[TrainConfig]:
    """TrainConfigs of one setting. Seeds seed..seed+K−1 are shared by all settings, so the k-th
    trials of two settings start from the same θ and the same sequence of agents' ψ."""
    reading = get_reading(spec.reading)
    base = dict(
        mechanism=setting.mechanism,
        buffer_size=setting.buffer_size,
        workers=spec.workers,
        gravities=PAPER_GRAVITIES,
        hyper=reading.hyper,
        zero_information=setting.control,
        optimizer=reading.optimizer,
        exploration_clock=reading.exploration_clock,
    )
    if setting.mechanism == "none":
        variant = {v.name: v for v in reading.nonprivate_variants}[setting.variant]
        base.update(epsilon=math.inf, clip=variant.clip, learning_rate=variant.learning_rate)
    else:
        base.update(epsilon=setting.epsilon, learning_rate=reading.learning_rate)
    if setting.role == "curve":
        n, k = spec.curve_submissions, spec.curve_trials
        base.update(submissions=n, stop_at_success=False)
    else:
        n, k = spec.cap, spec.trials
        base.update(submissions=n, stop_at_success=True)
    return [TrainConfig(seed=spec.seed + i, **base) for i in range(k)]


@dataclass
class GridRun:
    """Raw outcome of the grid: per setting the trial summaries (and μ curves for Figure 2); written as kind
    "replicate-raw" by :func:`pgc.replication.records.raw_record`."""

    spec: GridSpec
    settings: list[Setting]
    trials: dict[str, list[dict]] = field(default_factory=dict)
    curves: dict[str, dict] = field(default_factory=dict)
    wall_time_s: float = 0.0
    agent_steps: int = 0
    submissions: int = 0
    started_utc: str | None = None
    loadavg_at_start: list | None = None
    machine: dict | None = None  # machine_info() when the grid finished (kept through a raw re-analysis)

    @classmethod
    def from_dict(cls, data: dict) -> GridRun:
        if not isinstance(data, dict) or data.get("kind") != "replicate-raw":
            raise UserError("not a raw replicate grid (kind != 'replicate-raw')")
        sd = dict(data["spec"])
        sd.pop("max_lanes", None)  # a runtime setting of earlier versions (lane pool); no effect on results
        sd["epsilons"] = tuple(sd["epsilons"])
        sd["mechanisms"] = tuple(sd["mechanisms"])
        sd["nonprivate_variants"] = tuple(sd.get("nonprivate_variants", ()))
        spec = GridSpec(**sd)
        settings = grid_settings(spec)
        missing = [st.key for st in settings if st.key not in data["trials"]]
        if missing:
            raise UserError(f"raw grid lacks settings {missing}")
        for st in settings:
            _check_trial_summaries(st.key, data["trials"][st.key])
        return cls(
            spec=spec,
            settings=settings,
            trials=data["trials"],
            curves=data.get("curves", {}),
            wall_time_s=float(data["wall_time_s"]),
            agent_steps=int(data["agent_steps"]),
            submissions=int(data["submissions"]),
            started_utc=data.get("started_utc"),
            loadavg_at_start=data.get("loadavg_at_start"),
            machine=data.get("machine"),
        )


_SUMMARY_NUMBERS = ("fst", "best_mu", "agent_steps")  # what the analysis reads of a trial (fst may be "inf")


def _check_trial_summaries(key: str, trials) -> None:
    """A setting's trial summaries as the analysis reads them: a non-empty list of objects, each with a
    number (or "inf") for every field of :data:`_SUMMARY_NUMBERS`; a ValueError naming what is wrong."""
    if not isinstance(trials, list) or not trials:
        raise UserError(f"raw grid setting {key!r} has no list of trials")
    for i, t in enumerate(trials):
        if not isinstance(t, dict):
            raise UserError(f"raw grid setting {key!r}: trial {i} is not an object")
        for name in _SUMMARY_NUMBERS:
            value = t.get(name)
            ok = (
                name in t
                and (value is None and name == "best_mu")
                or value == "inf"
                and name == "fst"
                or (isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value))
            )
            if not ok:
                raise UserError(
                    f"raw grid setting {key!r}: trial {i} has {name} = {str(value)[:40]!r}, expected a number"
                )


def machine_info() -> dict:
    load = os.getloadavg() if hasattr(os, "getloadavg") else (math.nan,) * 3
    return {
        "cpu_count": os.cpu_count(),
        "affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "loadavg": [round(x, 2) for x in load],
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numba_threads": os.environ.get("NUMBA_NUM_THREADS"),
    }


def _curve_points(n: int, points: int = 400) -> np.ndarray:
    """Submission counts at which Figure 2 curves are sampled (1-based, window-complete)."""
    return np.unique(np.linspace(10, n, min(points, n)).round().astype(np.int64))


def run_grid(spec: GridSpec, *, progress: bool = False) -> GridRun:
    """Run every setting of ``spec`` in one :func:`train_batch` call."""
    from pgc.a3c.trainer import train_batch  # the trainer (torch, the kernel) loads where a grid runs

    settings = grid_settings(spec)
    configs: list[TrainConfig] = []
    owner: list[int] = []
    for i, s in enumerate(settings):
        cs = setting_configs(spec, s)
        configs += cs
        owner += [i] * len(cs)
    start = time.perf_counter()
    results = train_batch(configs, progress=progress, processes=spec.processes)
    wall = time.perf_counter() - start
    run = GridRun(
        spec=spec,
        settings=settings,
        wall_time_s=wall,
        agent_steps=int(sum(r.agent_steps for r in results)),
        submissions=int(sum(r.scores.size for r in results)),
    )
    for i, s in enumerate(settings):
        rs = [r for r, o in zip(results, owner, strict=False) if o == i]
        run.trials[s.key] = [r.summary() for r in rs]
        if s.role == "curve":
            xs = _curve_points(s_sub := rs[0].config.submissions)
            mus = np.stack([_mu_at(r.scores, xs, r.config.window) for r in rs])
            run.curves[s.key] = {
                "submissions": xs.tolist(),
                "mu": mus.round(2).tolist(),
                "mean_mu": mus.mean(axis=0).round(2).tolist(),
                "length": s_sub,
            }
    return run


def _mu_at(scores: np.ndarray, xs: np.ndarray, window: int) -> np.ndarray:
    """Trailing μ (eq. 25) at 1-based submission counts ``xs`` (NaN before the first full window)."""
    mu = average_scores(scores, window)
    idx = xs - window
    out = np.full(xs.shape, np.nan)
    ok = (idx >= 0) & (idx < mu.size)
    out[ok] = mu[idx[ok]]
    return out


def quick_spec(reading: str = "sampled", seed: int = 0) -> GridSpec:
    """The ``--quick`` grid: a smoke test of every code path (few trials, small cap)."""
    return GridSpec(
        reading=reading,
        trials=12,
        cap=3000,
        epsilons=(1.0,),
        controls="matched",
        curve_trials=1,
        curve_submissions=1000,
        seed=seed,
    )
