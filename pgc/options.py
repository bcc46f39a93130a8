"""The command line's options, each defined once: the argparse value types (clear messages, exit code 2
through argparse) and the options many commands share — ``--seed``, ``--out``, ``--samples``,
``--confidence``, ``--progress``, ``--force``, ``--setting``, ``--engine``/``--address``. A command (or a
benchmark) adds one with its own default and help where they differ: ``add_seed(p)``,
``add_samples(p, default=20_000)``; the option's name, type and validation live here only.

Only argparse and the standard library: the CLI (:mod:`pgc.cli`) and the benchmarks (:mod:`pgc.benchmarks`)
both build their parsers with it.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass


def positive_float(text: str) -> float:
    """A float > 0 (``inf`` allowed, NaN refused)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if math.isnan(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be > 0")
    return value


def finite_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} must be finite")
    return value


def _int_at_least(text: str, low: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < low:
        raise argparse.ArgumentTypeError(f"{text!r} must be >= {low}")
    return value


def positive_int(text: str) -> int:
    return _int_at_least(text, 1)


def seed_range(text: str) -> list[int]:
    """Seeds as a range ``first-last`` (both included) or one seed: ``0-8``, ``3``."""
    first, dash, last = text.partition("-")
    try:
        low = _int_at_least(first, 0)
        high = _int_at_least(last, low) if dash else low
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a seed or a range of seeds (first-last, e.g. 0-8)") from None
    return list(range(low, high + 1))


def sample_count(text: str) -> int:
    """A positive whole number, also written as 1e6 or 2.5e5."""
    try:
        return _int_at_least(text, 1)
    except argparse.ArgumentTypeError:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number of samples") from None
        if not (math.isfinite(value) and value >= 1 and value == int(value)):
            raise argparse.ArgumentTypeError(f"{text!r} must be a whole number >= 1") from None
        return int(value)


MIN_CERTIFICATION_SAMPLES = (
    100  # the auditor's smallest sample per side (audit.engine.blackbox, audit.engine.system_audit)
)


def certification_samples(text: str) -> int:
    """Samples per side of a certified test: a whole number >= :data:`MIN_CERTIFICATION_SAMPLES` (also 1e6)."""
    value = sample_count(text)
    if value < MIN_CERTIFICATION_SAMPLES:
        raise argparse.ArgumentTypeError(
            f"{text!r}: a certified test needs at least {MIN_CERTIFICATION_SAMPLES} samples per side"
        )
    return value


@dataclass(frozen=True)
class AutoSamples:
    """``--samples auto[:BUDGET]``: sample in stages until the audit is decisive, within ``budget`` per side."""

    budget: int = 1_000_000


def non_negative_int(text: str) -> int:
    return _int_at_least(text, 0)


def probability(text: str) -> float:
    """A float in the open interval (0, 1), e.g. a confidence level."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must lie strictly between 0 and 1")
    return value


def two_gravities(text: str) -> tuple[float, float]:
    """``ψ:ψ'``, two different finite gravities such as 9.7:9.9."""
    try:
        a, b = (float(x) for x in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a pair ψ:ψ' such as 9.7:9.9") from None
    if not (math.isfinite(a) and math.isfinite(b)) or a == b:
        raise argparse.ArgumentTypeError(f"{text!r}: need two different finite gravities")
    return a, b


class GravityRange(tuple):
    """``LO..HI``: search the pair inside the range (``--adversarial-model``)."""


def gravity_range(text: str) -> GravityRange:
    try:
        a, b = (float(x) for x in text.split(".."))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a range LO..HI such as 9.5..10.1") from None
    if not (math.isfinite(a) and math.isfinite(b)) or not a < b:
        raise argparse.ArgumentTypeError(f"{text!r}: need finite LO < HI")
    return GravityRange((a, b))


def gravity_pair(text: str) -> tuple[float, float]:
    """``ψ:ψ'``, or a range ``LO..HI`` (:class:`GravityRange`)."""
    return gravity_range(text) if ".." in text else two_gravities(text)


# --- the shared options ---------------------------------------------------------------------------------


def add_seed(p, **kwargs) -> None:
    """``--seed``: the run's root seed (one SeedSequence, spawned per component)."""
    p.add_argument("--seed", **{"type": non_negative_int, "default": 0, "help": "root seed (default 0)", **kwargs})


def add_out(p, **kwargs) -> None:
    """``--out``: where the result goes."""
    p.add_argument("--out", **{"help": "result file or folder", **kwargs})


def add_force(p, **kwargs) -> None:
    """``--force``: replace an existing result that the same command wrote."""
    p.add_argument("--force", **{"action": "store_true", "help": "replace an existing --out result", **kwargs})


def add_samples(p, **kwargs) -> None:
    """``--samples``: certification samples per side (also written as 1e6)."""
    p.add_argument("--samples", **{"type": certification_samples, "help": "certification samples per side", **kwargs})


def add_confidence(p, **kwargs) -> None:
    """``--confidence``: of every certified bound (0 < c < 1)."""
    p.add_argument(
        "--confidence",
        **{"type": probability, "default": 0.95, "help": "confidence of the certified bounds (default 0.95)", **kwargs},
    )


def add_progress(p, **kwargs) -> None:
    """``--progress/--no-progress``: a bar on a terminal, a dated line every 30 s elsewhere."""
    p.add_argument(
        "--progress",
        **{
            "action": argparse.BooleanOptionalAction,
            "default": None,  # neither flag: on unless the environment holds PGC_PROGRESS=off
            "help": "progress (default on): a bar on a terminal, a dated line every 30 s otherwise",
            **kwargs,
        },
    )


def add_setting(p, **kwargs) -> None:
    """``--setting KEY=VALUE`` (repeatable): a keyword argument of a factory."""
    p.add_argument(
        "--setting",
        **{
            "action": "append",
            "default": [],
            "metavar": "KEY=VALUE",
            "help": "a keyword argument of the factory (repeatable)",
            **kwargs,
        },
    )


ENGINE_CHOICES = ("local", "ray")


def add_engine(p, engine_help: str) -> None:
    """``--engine {local,ray} [--address ADDR]``: where the independent tasks run."""
    p.add_argument("--engine", choices=ENGINE_CHOICES, default="local", help=engine_help)
    p.add_argument("--address", help="--engine ray: address of a running Ray cluster (default: start a local one)")
