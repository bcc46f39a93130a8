"""DP-Sniper's input pairs: the StatDP patterns (Ding et al., CCS 2018) as DP-Sniper's ``PatternGenerator``
(``dpsniper/input/pattern_generator.py``) generates them, clipped to the input domain.

Every pattern is yielded as (a, a′) and then swapped as (a′, a). A single-entry neighbourhood has two patterns
("one above", "one below": four pairs); a component-wise neighbourhood (every entry may change by at most 1)
adds six more: sixteen pairs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class InputDomain:
    """``dimensions`` entries of ``base_type`` ("float" or "int") in ``[low, high]``; ``component_wise``: the
    neighbourhood lets every entry change by at most 1 (else a single entry changes)."""

    dimensions: int
    base_type: str
    low: float
    high: float
    component_wise: bool


def _raw_patterns(d: int, component_wise: bool) -> list[tuple[str, list[int], list[int]]]:
    """The patterns of ``PatternGenerator._get_raw_inputs``, in its order, named as its comments name them."""
    ones, half = [1] * d, d // 2
    patterns = [("one above", ones, [0] + [1] * (d - 1)), ("one below", ones, [2] + [1] * (d - 1))]
    if component_wise:
        patterns += [
            ("one above rest below", ones, [2] + [0] * (d - 1)),
            ("one below rest above", ones, [0] + [2] * (d - 1)),
            ("half half", ones, [2] * half + [0] * (d - half)),
            ("all above", ones, [2] * d),
            ("all below", ones, [0] * d),
            ("X shape", [1] * half + [0] * (d - half), [0] * half + [1] * (d - half)),
        ]
    return patterns


def input_pairs(domain: InputDomain) -> dict[str, tuple[tuple, tuple]]:
    """Named neighbouring pairs, in DP-Sniper's order: each pattern, then the same pattern swapped."""
    pairs: dict[str, tuple[tuple, tuple]] = {}
    for name, a1, a2 in _raw_patterns(domain.dimensions, domain.component_wise):
        x1, x2 = (_clipped(a, domain) for a in (a1, a2))
        pairs[name] = (x1, x2)
        pairs[f"{name}, swapped"] = (x2, x1)
    return pairs


def _clipped(values: list[int], domain: InputDomain) -> tuple:
    clipped = np.clip(np.asarray(values, dtype=np.int64), domain.low, domain.high)
    if domain.base_type == "float":
        return tuple(float(v) for v in clipped)
    return tuple(int(v) for v in clipped)
