"""How long an audit takes on the project's 2-core machine, before it starts (pure arithmetic).

Measured rates, the slow end of what was seen (seconds per certification sample per side, training and
selection included): the canary audit of a d = 112 mechanism over its five canary pairs (100,000 samples
in 2.7-5 s; PRS d̂ times that: ε = 60, d̂ = 24, 20,000 samples in 60 s under load), one environment audit
pair with every channel at a balancing model (100,000 samples in 150-360 s; a falling model's short
episodes are 10-20 times faster), the adversarial audit of a pair (its search adds about 120 s).
"""

from __future__ import annotations

SECONDS_PER_SAMPLE = {"mechanism": 5e-5, "environment": 3.6e-3, "adversarial": 1.0e-3}
SEARCH_SECONDS = 120.0  # the crafted-model search of one adversarial pair
REFERENCE_DIM = 112  # the rates' gradient dimension


def mechanism_audit_seconds(samples: int, dim: int = REFERENCE_DIM, reduced_dim: int = 1, rounds: int = 1) -> float:
    """A canary audit of a mechanism: linear in samples and d (and d̂ for PRS, which draws a d̂ × d matrix)."""
    return samples * SECONDS_PER_SAMPLE["mechanism"] * max(1, dim) / REFERENCE_DIM * max(1, reduced_dim) * max(1, rounds)


def environment_audit_seconds(samples: int, pairs: int) -> float:
    """One environment audit per pair, every channel, at a balancing model (the slow case)."""
    return max(1, pairs) * samples * SECONDS_PER_SAMPLE["environment"]


def adversarial_audit_seconds(samples: int, pairs: int) -> float:
    """One crafted-model search and certification per pair."""
    return max(1, pairs) * (samples * SECONDS_PER_SAMPLE["adversarial"] + SEARCH_SECONDS)


def duration_text(seconds: float) -> str:
    """``1 h 05 min``, ``2 min 03 s``, ``42 s``."""
    seconds = int(round(seconds))
    if seconds >= 3600:
        return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"
    return f"{seconds // 60} min {seconds % 60:02d} s" if seconds >= 60 else f"{seconds} s"
