"""The power of an audit against planted leaks of every shape: how large a leak of location, scale, dependence or
structure the audit's whole selection and certification flag when it is planted in the audit's own releases.

:func:`planted_power` takes the training releases of ONE side (``base``, (n, k), NaN = absent) and, per shape, a
planting function that turns rows of ``base`` into a "leaky" side with a known size (:data:`PLANTINGS`):

* **location** — every column shifted by size·s_j/√k (s_j the column's spread, k the columns that vary): the d′ of
  the best linear test between independent columns is the size;
* **scale** — deviations from each column's centre multiplied by (1 + size);
* **dependence** — the standardized columns mixed with one common factor f per release,
  z_j ↦ √(1 − ρ)·z_j + √ρ·f with ρ = size: equicorrelation ρ, every marginal variance kept (one column has no
  dependence to plant: the planted audit then sees a marginal change of a non-Gaussian column only);
* **structure** — each present entry made absent (NaN) with probability size.

One planted audit splits a random permutation of ``base`` into four equal parts A, B, C, D of m = n // 4 rows:
:func:`audit.certification.tester.fit_candidate` chooses a statistic and threshold on A planted vs B (at the
certification size
m, α = 1 − confidence, the audit's δ, rate bounds and candidate statistics), :func:`audit.certification.tester.certify`
counts it
on C planted vs D. It is flagged when ε_LB exceeds the claimed ε; where the claim is ∞ (no claim) or 0 the rule is
ε_LB > 0 — the channel is told apart from itself at all, which is what flags an uncovered channel. Only the
threshold test is run: a claimed μ-GDP curve or privacy profile adds no curve test here.

Per shape the smallest size flagged in at least :data:`FLAG_RATE` of ``repeats`` planted audits is searched by
bisection on a geometric grid of :data:`GRID_POINTS` sizes (detection is monotone in size in expectation): a size
is flagged once ⌈0.8·repeats⌉ of its planted audits are, and not flagged once that count can no longer be reached
(4 of 5: two misses end a size). Every planted audit of one shape and repeat uses the same permutation and the
same planting noise at every size (common random numbers: the common factor, the uniforms that make entries
absent), so detection is monotone in size within a repeat as well; a size not flagged at the top of the grid
gives ``smallest`` None.

Seeds: every planted audit's numbers are a function of ``seq``'s entropy and spawn key, the shape and the repeat
(``seq`` is not advanced; give it a child sequence of its own). No global RNG.

Cost (measured on the project's two-core machine while other jobs kept it at a load of 5–6; default statistics, one
BLAS thread): a planted audit costs about 1–2 s whatever k, most of it the selection's threshold scan over the
candidate statistics (a structure audit of a base without absent entries about 2 s: every value statistic then
also reads 112 presence columns). The grid has :data:`GRID_POINTS` = 8 sizes per shape (neighbours 2.3–2.7× apart:
3 bisection steps, plus the top of the grid only when nothing below it was flagged), chosen so that a 25,000 × 112
base (m = 6,250) takes 40 planted audits for the four shapes at ``repeats=5``: 44 s of CPU time, 70 s of wall time
at that load. A 25,000 × 1 base: 19 s of CPU time, 23–33 s wall. The cost grows with the number of statistics and
the number of planted audits; ``repeats`` and ``shapes`` are the knobs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from audit.certification.tester import certify, fit_candidate
from pgc.contracts import Statistic
from pgc.errors import UserError
from pgc.schemas.audit_rows import PlantedLeak

FLAG_RATE = 0.8  # a size is detected when at least this share of its planted audits is flagged
GRID_POINTS = 8  # geometric grid of sizes per shape: neighbours 2.3–2.7× apart
MIN_PART = 50  # rows per part of a planted audit, at least
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Columns:
    """Per column of the base releases: the centre (mean of the present values), the spread (their standard
    deviation) and whether the column varies at all."""

    centre: FloatArray
    spread: FloatArray
    varies: npt.NDArray[np.bool_]

    @classmethod
    def of(cls, base: FloatArray) -> Columns:
        present = ~np.isnan(base)
        count = np.maximum(present.sum(axis=0), 1)
        filled = np.where(present, base, 0.0)
        centre = filled.sum(axis=0) / count
        spread = np.sqrt(np.where(present, (base - centre) ** 2, 0.0).sum(axis=0) / count)
        varies = spread > 0
        return cls(centre, np.where(varies, spread, 1.0), varies)


def plant_location(rows: FloatArray, size: float, cols: Columns, rng: np.random.Generator) -> FloatArray:
    """Every varying column shifted by size·spread_j/√k (k the varying columns): d′ = size between independent
    columns."""
    k = max(1, int(cols.varies.sum()))
    return rows + np.where(cols.varies, size * cols.spread / math.sqrt(k), 0.0)


def plant_scale(rows: FloatArray, size: float, cols: Columns, rng: np.random.Generator) -> FloatArray:
    """Deviations from each column's centre multiplied by (1 + size)."""
    return cols.centre + (rows - cols.centre) * (1.0 + size)


def plant_dependence(rows: FloatArray, size: float, cols: Columns, rng: np.random.Generator) -> FloatArray:
    """Standardized varying columns mixed with one common N(0, 1) factor per release: z ↦ √(1 − ρ)·z + √ρ·f,
    ρ = size (equicorrelation ρ, marginal variance kept)."""
    factor = rng.standard_normal(len(rows))[:, None]
    z = (rows - cols.centre) / cols.spread
    mixed = math.sqrt(1.0 - size) * z + math.sqrt(size) * factor
    return np.where(cols.varies, cols.centre + cols.spread * mixed, rows)


def plant_structure(rows: FloatArray, size: float, cols: Columns, rng: np.random.Generator) -> FloatArray:
    """Each present entry made absent (NaN) with probability ``size``."""
    return np.where(rng.random(rows.shape) < size, np.nan, rows)


def flags_needed(repeats: int) -> int:
    """How many of ``repeats`` planted audits must be flagged for a size to count as flagged."""
    return math.ceil(FLAG_RATE * repeats - 1e-9)


@dataclass(frozen=True)
class Planting:
    """How one shape's leak is planted: what its size means and the sizes searched."""

    shape: str
    parameter: str
    smallest: float
    largest: float
    plant: Callable[[FloatArray, float, Columns, np.random.Generator], FloatArray]

    def grid(self, points: int = GRID_POINTS) -> FloatArray:
        return np.geomspace(self.smallest, self.largest, points)


PLANTINGS = {
    p.shape: p
    for p in (
        Planting("location", "d′ (every column shifted by size·spread/√k)", 0.05, 20.0, plant_location),
        Planting("scale", "noise scale × (1 + size)", 0.005, 2.0, plant_scale),
        Planting("dependence", "equicorrelation ρ (marginals kept)", 0.002, 0.9, plant_dependence),
        Planting("structure", "absence probability per entry", 0.001, 0.9, plant_structure),
    )
}


@dataclass(frozen=True)
class PlantedAudits:
    """Everything a planted audit of one base needs: the base, its column summaries, the audit's settings and
    the seed every planted audit derives its numbers from."""

    base: FloatArray
    columns: Columns
    statistics: Sequence[Statistic] | None
    threshold: float  # flagged: ε_LB > threshold
    confidence: float
    delta: float
    two_sided: bool
    seq: np.random.SeedSequence

    @property
    def part(self) -> int:
        return len(self.base) // 4

    def _child(self, *key: int) -> np.random.SeedSequence:
        return np.random.SeedSequence(self.seq.entropy, spawn_key=(*self.seq.spawn_key, *key))

    def epsilon(self, planting: Planting, index: int, size: float, repeat: int) -> float:
        """ε_LB of one planted audit: A planted vs B selects, C planted vs D certifies."""
        m = self.part
        order = np.random.Generator(np.random.PCG64(self._child(index, repeat, 0))).permutation(len(self.base))
        a, b, c, d = (self.base[order[i * m : (i + 1) * m]] for i in range(4))
        a = planting.plant(a, size, self.columns, np.random.Generator(np.random.PCG64(self._child(index, repeat, 1))))
        c = planting.plant(c, size, self.columns, np.random.Generator(np.random.PCG64(self._child(index, repeat, 2))))
        test = fit_candidate(
            f"planted {planting.shape} {size:.3g}",
            a,
            b,
            m,
            1.0 - self.confidence,
            self.delta,
            self.statistics,
            two_sided_rates=self.two_sided,
        )
        if test is None:
            return 0.0
        return certify(test, [c], [d], self.confidence, self.delta).epsilon_lower_bound

    def flagged(self, planting: Planting, index: int, size: float, repeats: int) -> bool:
        """Whether at least :data:`FLAG_RATE` of ``repeats`` planted audits at ``size`` are flagged (stops as soon
        as the answer is known)."""
        need = flags_needed(repeats)
        hits = misses = 0
        for repeat in range(repeats):
            if self.epsilon(planting, index, size, repeat) > self.threshold:
                hits += 1
            else:
                misses += 1
            if hits >= need:
                return True
            if misses > repeats - need:
                return False
        return False

    def smallest(self, planting: Planting, repeats: int, points: int = GRID_POINTS) -> float | None:
        """The smallest grid size flagged (bisection, assuming detection monotone in size); None when the
        largest is not flagged."""
        grid = planting.grid(points)
        index = list(PLANTINGS).index(planting.shape)
        results: dict[int, bool] = {}

        def flagged(i: int) -> bool:
            if i not in results:
                results[i] = self.flagged(planting, index, float(grid[i]), repeats)
            return results[i]

        lo, hi = -1, len(grid) - 1  # grid[lo] not flagged (lo = −1: below the grid); grid[hi] flagged if any is
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if flagged(mid) else (mid, hi)
        return float(grid[hi]) if flagged(hi) else None


def flag_threshold(claimed_epsilon: float) -> float:
    """The ε_LB a planted audit must exceed to be flagged: the claimed ε, or 0 where the claim is ∞ or 0."""
    if math.isnan(claimed_epsilon) or claimed_epsilon < 0:
        raise UserError(f"claimed_epsilon must be ≥ 0 or inf, got {claimed_epsilon!r}")
    return 0.0 if math.isinf(claimed_epsilon) else float(claimed_epsilon)


def planted_power(
    base: npt.ArrayLike,
    statistics: Sequence[Statistic] | None,
    *,
    claimed_epsilon: float,
    delta: float,
    confidence: float,
    two_sided: bool,
    seq: np.random.SeedSequence | int,
    shapes: Sequence[str] = ("location", "scale", "dependence", "structure"),
    repeats: int = 5,
) -> list[PlantedLeak]:
    """Per shape, the smallest planted leak the audit's selection and certification flag in at least
    :func:`flags_needed` of ``repeats`` planted audits (module docstring: the plantings, the planted audit, the
    search, the cost; dependence only where a release has two columns or more). ``base``: (n, k) releases of one side
    (NaN = absent), n ≥ 4·:data:`MIN_PART`; ``statistics``: the candidates the audit chose among (None: the
    default list)."""
    from threadpoolctl import threadpool_limits

    data = np.asarray(base, dtype=np.float64)
    data = data[:, None] if data.ndim == 1 else data
    if data.ndim != 2 or len(data) // 4 < MIN_PART:
        raise UserError(f"planted power needs (n, k) releases with n ≥ {4 * MIN_PART}, got shape {data.shape}")
    if np.isinf(data).any():
        raise UserError("the base releases contain inf (an absent entry is NaN)")
    unknown = [s for s in shapes if s not in PLANTINGS]
    if unknown or repeats < 1 or not (0.0 < confidence < 1.0):
        raise UserError(
            f"planted power: unknown shapes {unknown} (known: {', '.join(PLANTINGS)}), or repeats "
            f"{repeats!r} < 1, or confidence {confidence!r} outside (0, 1)"
        )
    seq = seq if isinstance(seq, np.random.SeedSequence) else np.random.SeedSequence(seq)
    audits = PlantedAudits(
        data, Columns.of(data), statistics, flag_threshold(claimed_epsilon), confidence, delta, two_sided, seq
    )
    found = []
    if data.shape[1] < 2:  # one column has no dependence to plant (a common factor would only reshape its marginal)
        shapes = [s for s in shapes if s != "dependence"]
    with threadpool_limits(limits=1, user_api="blas"):  # several BLAS threads spin against each other on 2 cores
        for shape in shapes:
            planting = PLANTINGS[shape]
            found.append(
                PlantedLeak(
                    shape=shape,
                    parameter=planting.parameter,
                    smallest=audits.smallest(planting, repeats),
                    largest_tried=planting.largest,
                    repeats=repeats,
                    samples_per_side=audits.part,
                    flags_needed=flags_needed(repeats),
                    smallest_tried=planting.smallest,
                )
            )
    return found
