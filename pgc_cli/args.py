"""argparse value types shared by the commands: clear messages, exit code 2 through argparse."""

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


MIN_CERTIFICATION_SAMPLES = 100  # the auditor's smallest sample per side (audit.blackbox, audit.system_audit)


def certification_samples(text: str) -> int:
    """Samples per side of a certified test: a whole number >= :data:`MIN_CERTIFICATION_SAMPLES` (also 1e6)."""
    value = sample_count(text)
    if value < MIN_CERTIFICATION_SAMPLES:
        raise argparse.ArgumentTypeError(f"{text!r}: a certified test needs at least {MIN_CERTIFICATION_SAMPLES} "
                                         "samples per side")
    return value


@dataclass(frozen=True)
class AutoSamples:
    """``--samples auto[:BUDGET]``: sample in stages until the audit is decisive, within ``budget`` per side."""

    budget: int = 1_000_000


def sample_count_or_auto(text: str) -> "int | AutoSamples":
    """Certification samples per side (see :func:`certification_samples`), or ``auto`` / ``auto:BUDGET`` with
    a budget that holds at least the first stage (:func:`audit.sequential.audit_system_until_decisive`)."""
    if text == "auto":
        return AutoSamples()
    if text.startswith("auto:"):
        import inspect

        from audit.sequential import audit_system_until_decisive

        first = inspect.signature(audit_system_until_decisive).parameters["n_first"].default
        budget = sample_count(text[len("auto:"):])
        if budget < first:
            raise argparse.ArgumentTypeError(f"{text!r}: the budget must hold the first stage of {first:,} per side")
        return AutoSamples(budget)
    return certification_samples(text)


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


def gravity_pair(text: str) -> tuple[float, float]:
    """``ψ:ψ'``, two different finite gravities such as 9.7:9.9."""
    try:
        a, b = (float(x) for x in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a pair ψ:ψ' such as 9.7:9.9") from None
    if not (math.isfinite(a) and math.isfinite(b)) or a == b:
        raise argparse.ArgumentTypeError(f"{text!r}: need two different finite gravities")
    return a, b
