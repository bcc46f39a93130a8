"""Drawing a system's releases and certifying per channel tests on them: the engine's lower floor.

:class:`AuditTarget` is what one audit looks at (a system, two neighbouring secrets, the channels); its
releases are rounded to 30 significant bits unless ``float_exact`` (:func:`round_significant`). The tests
are selected on a training split (:func:`fit_channel_tests`) and counted on fresh releases in chunks
(:func:`certify_channel_tests`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from audit.certification.curves import split_alpha
from audit.certification.tester import (
    CandidateTest,
    CertificationTally,
    EpsilonBound,
    fit_candidate,
    to_width,
)
from audit.statistics import ChannelSumLikelihoodRatio, LaplaceLogLikelihood, default_statistics
from audit.statistics.memo import row_blocks
from pgc.contracts import ALL, DescribesSecrets
from pgc.errors import UserError

RELATIVE_RESOLUTION_BITS = 30  # releases are rounded to 30 significant bits unless float_exact


def round_significant(
    values: np.ndarray, bits: int = RELATIVE_RESOLUTION_BITS, out: np.ndarray | None = None
) -> np.ndarray:
    """Each value rounded to ``bits`` significant bits (post-processing: a bound on the rounded releases
    holds for the system). It blinds the statistics to the last bits of floating-point noise, whose
    pattern depends on the noiseless value (Mironov 2012): the audit then measures the mechanism's
    arithmetic. ``float_exact=True`` audits the exact bits instead. Integers (a hash seed, a count) carry no
    floating-point noise and stay exact. ``out``: an array of the same shape to write into (a view of a wider
    array included). A 2-D array is rounded a block of rows at a time (:func:`audit.statistics.memo.row_blocks`), so
    that the temporaries stay small and their memory warm (the same numbers as one call on the whole array)."""
    values = np.asarray(values)
    if values.ndim != 2:
        rounded = _rounded(values, bits)
        if out is None:
            return rounded
        out[...] = rounded
        return out
    out = np.empty(values.shape, dtype=np.float64) if out is None else out
    for block in row_blocks(values):
        out[block] = _rounded(values[block], bits)
    return out


def _rounded(values: np.ndarray, bits: int) -> np.ndarray:
    mantissa, exponent = np.frexp(values)
    rounded = np.ldexp(np.round(mantissa * 2.0**bits) / 2.0**bits, exponent)
    return np.where(values == np.round(values), values, rounded)


class ChannelWidths(dict):
    """Per channel, the width its releases are read at (the longest row of its first draw in an audit), and what
    the encoding met on the way: rows of different lengths, absent entries (NaN), the longest row and how many rows
    were longer than the width and cut to it. :meth:`encoding` says it in words for the row."""

    def __init__(self) -> None:
        super().__init__()
        self.ragged: set[str] = set()
        self.absent: set[str] = set()
        self.longest: dict[str, int] = {}
        self.cut: dict[str, int] = {}

    def note(self, name: str, lengths: np.ndarray | None, width: int, holds_nan: bool) -> None:
        if lengths is not None and lengths.size:
            self.ragged.add(name)
            self.longest[name] = max(self.longest.get(name, 0), int(lengths.max()))
            self.cut[name] = self.cut.get(name, 0) + int(np.count_nonzero(lengths > width))
        if holds_nan:
            self.absent.add(name)

    def encoding(self, channels: Sequence[str]) -> str | None:
        """How ``channels``' releases were read, or None where each was a fixed-width array of numbers."""
        parts = []
        for name in channels:
            if name in self.ragged:
                text = (
                    f"{name}: variable length, padded with NaN (absent) to {self[name]} entries, its length in one "
                    "more column"
                )
                if self.cut.get(name):
                    text += (
                        f"; {self.cut[name]:,} longer releases (up to {self.longest[name]} entries) cut to "
                        f"{self[name]} entries, their length kept: the entries beyond were not read"
                    )
                parts.append(text)
            elif name in self.absent:
                parts.append(f"{name}: absent entries as NaN, their presence read as information")
        return "; ".join(parts) or None


def release_array(system: Any, name: str, value: Any, n: int, widths: dict[str, int] | None = None) -> np.ndarray:
    """One channel's releases as an (n, k) float64 array. An absent entry (⊥, an optional field not sent) is NaN.
    Variable-length releases (a sequence of n rows of different lengths) are padded with NaN to the channel's
    width, the longest row of the channel's first draw in this audit (``widths`` keeps it), and each row's length
    follows in one more column, so that every release is read by the same fixed encoding; a later row longer than
    the width is cut to it, its length kept (a :class:`ChannelWidths` counts such rows, and the row's ``encoding``
    says so). A row's length is what the system gave: ``len(row)`` of a sequence of rows (trailing absent entries
    included), whether or not the other rows of its call had the same length; in a NaN-padded array, where a
    trailing absent entry cannot be told from padding, up to its last present entry."""
    lengths = None
    given_as_array = isinstance(value, np.ndarray)
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (ValueError, TypeError):
        arr = None
    if arr is None or arr.dtype == object:
        try:
            rows = [np.atleast_1d(np.asarray(r, dtype=np.float64)).ravel() for r in value]
        except (ValueError, TypeError) as exc:
            raise UserError(f"{system.name}.release: channel {name!r} is not numbers ({exc})") from None
        if len(rows) != n:
            raise UserError(f"{system.name}.release: channel {name!r} has {len(rows)} releases, expected {n}")
        lengths = np.fromiter((len(r) for r in rows), dtype=np.int64, count=len(rows))
        width = int(lengths.max(initial=1))
        if widths is not None:
            width = widths.setdefault(name, max(width, 1))
        width = max(width, 1)
        arr = np.full((n, width + 1), np.nan)
        for i, r in enumerate(rows):
            arr[i, : min(len(r), width)] = r[:width]
        arr[:, width] = lengths  # the length itself, read beyond the width too
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[0] != n:
        raise UserError(f"{system.name}.release: channel {name!r} has shape {arr.shape}, expected ({n}, k)")
    finite = bool(np.isfinite(arr).all())  # one pass where every entry is a number
    if not finite and np.isinf(arr).any():
        raise UserError(f"{system.name}.release: channel {name!r} holds inf (an absent entry is NaN)")
    if widths is not None and name in widths and lengths is None:
        # a channel first given as rows of different lengths, then as a NaN-padded array: the same encoding
        width = widths[name]
        if given_as_array:  # up to the last present entry: trailing NaN is padding
            present = ~np.isnan(arr)
            lengths = np.where(present.any(axis=1), arr.shape[1] - np.argmax(present[:, ::-1], axis=1), 0)
        else:  # rows that happen to be as long as each other in this call: each its own len(row)
            lengths = np.full(arr.shape[0], arr.shape[1], dtype=np.int64)
        arr = np.column_stack([to_width(arr, width), lengths.astype(np.float64)])
        finite = bool(np.isfinite(arr).all())  # the padding may add absent entries
    if isinstance(widths, ChannelWidths):
        widths.note(name, lengths, widths.get(name, arr.shape[1]), not finite)
    return arr


def draw_releases(
    system: Any,
    secret: Any,
    n: int,
    rng: np.random.Generator,
    broadcast: Any,
    channels: Sequence[str],
    base_channels: Sequence[str],
    float_exact: bool = False,
    widths: dict[str, int] | None = None,
) -> dict[str, np.ndarray]:
    """n releases of ``secret``: the requested channels as (n, k) float64 arrays (``all`` assembled from
    the base channels in order when the system does not return one), rounded by :func:`round_significant`
    unless ``float_exact``; absent entries NaN (:func:`release_array`, which keeps variable-length channels'
    widths in ``widths``). An assembled ``all`` holds the base channels' numbers once: each base channel is a view
    of its columns."""
    out = system.release(secret, n, rng, broadcast=broadcast)
    if not isinstance(out, Mapping):
        raise UserError(f"{system.name}.release must return a mapping channel -> array, got {type(out).__name__}")
    assemble = ALL in channels and ALL not in out
    need = set(channels) | (set(base_channels) if assemble else set())
    for name in need - {ALL} | ({ALL} if ALL in out and ALL in channels else set()):
        if name not in out:
            raise UserError(f"{system.name}.release returned no channel {name!r} (got {sorted(out)})")
    raw = {name: release_array(system, name, out[name], n, widths) for name in need - ({ALL} if assemble else set())}
    arrays: dict[str, np.ndarray] = {}
    if assemble:
        slices = channel_groups([raw[c].shape[1] for c in base_channels])
        joint = np.empty((n, slices[-1].stop if slices else 0), dtype=np.float64)
        for c, columns in zip(base_channels, slices, strict=True):
            if float_exact:
                joint[:, columns] = raw[c]
            else:
                round_significant(raw[c], out=joint[:, columns])
            arrays[c] = joint[:, columns]
            del raw[c]
        arrays[ALL] = joint
    for name, arr in raw.items():
        arrays[name] = arr if float_exact else round_significant(arr)
    return {c: arrays[c] for c in channels}


def stack_draws(
    parts: Iterable[Mapping[str, np.ndarray]], total: int, channels: Sequence[str]
) -> dict[str, np.ndarray]:
    """Draws of the same channels (``total`` rows in all) stacked row-wise into arrays allocated once, each draw
    copied in as it comes (memory: the stack and one draw); a channel that is a column view of ``all`` in the draws
    (:func:`draw_releases`) stays a view of the stacked ``all``."""
    stacked: dict[str, np.ndarray] = {}
    owners: list[str] = []
    row = 0
    for part in parts:
        if not stacked:
            stacked, owners = _allocated_like(part, total, channels)
        m = len(part[channels[0]])
        for ch in owners:
            stacked[ch][row : row + m] = part[ch]
        row += m
    if row != total:
        raise AssertionError(f"stacked {row} releases, expected {total}")
    return stacked


def _allocated_like(part: Mapping[str, np.ndarray], total: int, channels: Sequence[str]):
    """Empty arrays of ``total`` rows shaped like ``part``'s channels (column views of ``all`` kept as views), and
    the channels that own their memory."""
    joint = part.get(ALL) if ALL in channels else None
    stacked = {ch: np.empty((total, part[ch].shape[1]), dtype=np.float64) for ch in channels if ch == ALL}
    owners = list(stacked)
    for ch in channels:
        if ch == ALL:
            continue
        arr = part[ch]
        if joint is not None and arr.base is not None and np.shares_memory(arr, joint):
            start = (arr.__array_interface__["data"][0] - joint.__array_interface__["data"][0]) // arr.itemsize
            stacked[ch] = stacked[ALL][:, start : start + arr.shape[1]]
        else:
            stacked[ch] = np.empty((total, arr.shape[1]), dtype=np.float64)
            owners.append(ch)
    return stacked, owners


class Stopwatch:
    """Seconds an audit spends per part (drawing the training split, selecting, drawing and counting the
    certification releases, judging the rows): recorded in the result, and the base of a time estimate."""

    def __init__(self):
        self.seconds: dict[str, float] = {}

    @contextmanager
    def part(self, name: str):
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - start


@dataclass(frozen=True)
class AuditTarget:
    """What one audit looks at: ``system`` at ``secret`` vs ``secret_prime``; ``base`` the channels the system
    releases (``all`` aside); releases rounded unless ``float_exact``."""

    system: Any
    secret: Any
    secret_prime: Any
    base: tuple[str, ...]
    float_exact: bool = False
    widths: ChannelWidths = field(default_factory=ChannelWidths, compare=False, repr=False)  # variable-length channels'

    def draw(
        self, secret: Any, n: int, rng: np.random.Generator, broadcast: Any, channels: Sequence[str]
    ) -> dict[str, np.ndarray]:
        """n releases of one side (:func:`draw_releases`)."""
        return draw_releases(self.system, secret, n, rng, broadcast, channels, self.base, self.float_exact, self.widths)

    def release_pair(
        self, n: int, seq: np.random.SeedSequence, broadcast: Any, channels: Sequence[str]
    ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        """n releases of each secret from the two fixed children 0 and 1 of ``seq`` (:func:`fixed_child_generator`:
        every call with the same ``seq`` draws the same numbers, so candidates compared on one ``seq`` share common
        random numbers)."""
        rp, rn = (fixed_child_generator(seq, i) for i in (0, 1))
        return (
            self.draw(self.secret, n, rp, broadcast, channels),
            self.draw(self.secret_prime, n, rn, broadcast, channels),
        )

    def describe(self, secret: Any) -> str:
        return describe_secret(self.system, secret)


def fixed_child_generator(seq: np.random.SeedSequence, index: int) -> np.random.Generator:
    """A generator on the child ``index`` of ``seq``, made without spawning it: every call with the same ``seq`` and
    ``index`` gives the same stream (``seq.spawn`` would give the next child instead)."""
    return np.random.Generator(
        np.random.PCG64(np.random.SeedSequence(seq.entropy, spawn_key=seq.spawn_key + (int(index),)))
    )


def describe_secret(system: Any, secret: Any, limit: int = 80) -> str:
    """The system's ``describe_secret(secret)``, else the secret's repr on one line, cut to ``limit`` characters."""
    text = (
        str(system.describe_secret(secret)) if isinstance(system, DescribesSecrets) else " ".join(repr(secret).split())
    )
    return text if len(text) <= limit else text[: limit - 1] + "…"


def channel_groups(widths: Sequence[int]) -> tuple[slice, ...]:
    edges = np.concatenate([[0], np.cumsum(widths)]).astype(int)
    return tuple(slice(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:], strict=True))


def joint_statistics(groups: Sequence[slice]) -> list:
    """Candidate statistics of a joint channel: the defaults, the scaled Laplace log-likelihood ratio and
    the sum of each channel's calibrated likelihood ratio (channels on very different scales)."""
    return default_statistics() + [LaplaceLogLikelihood(scaled=True), ChannelSumLikelihoodRatio(groups)]


def fit_channel_tests(
    train_pos: Mapping[str, np.ndarray],
    train_neg: Mapping[str, np.ndarray],
    channels: Sequence[str],
    n_cert: int,
    confidence: float,
    deltas: Mapping[str, float],
    labels: Mapping[str, str],
    statistics_for: Callable[[str], Sequence | None] = lambda channel: None,
    two_sided_rates: bool | None = True,
    curves: Mapping[str, bool] | None = None,
    profiles: Mapping[str, tuple | None] | None = None,
    threshold_on_whole_split: bool = True,
) -> dict[str, CandidateTest]:
    """One chosen test per channel, from the training split only; a channel in ``curves`` (its claim has a
    μ-GDP curve, or its privacy profile in ``profiles``) also gets a curve threshold, each of its two tests
    chosen at its share of α (:func:`audit.certification.curves.split_alpha`). ``two_sided_rates`` None: two-sided rate
    bounds on the channels whose δ > 0 only. ``threshold_on_whole_split``: see :func:`fit_candidate`."""
    tests = {}
    for ch in channels:
        curve = bool(curves and curves.get(ch))
        alpha, curve_alpha = split_alpha(1.0 - confidence) if curve else (1.0 - confidence, None)
        two_sided = deltas[ch] > 0 if two_sided_rates is None else two_sided_rates
        cand = fit_candidate(
            labels[ch],
            train_pos[ch],
            train_neg[ch],
            n_cert,
            alpha,
            deltas[ch],
            statistics_for(ch),
            two_sided,
            curve,
            curve_alpha,
            (profiles or {}).get(ch),
            threshold_on_whole_split,
        )
        if cand is None:
            raise UserError(f"no statistic applies to channel {ch!r}")
        tests[ch] = cand
    return tests


def certify_channel_tests(
    tests: Mapping[str, CandidateTest],
    chunks_pos: Iterable[Mapping[str, np.ndarray]],
    chunks_neg: Iterable[Mapping[str, np.ndarray]],
    confidence: float,
    deltas: Mapping[str, float],
    detectable_at: Mapping[str, float],
) -> dict[str, EpsilonBound]:
    """Count every channel's test (and its curve test, if any) on the same fresh chunks of releases; one
    bound per channel."""
    tallies = {ch: CertificationTally(test) for ch, test in tests.items()}
    for side, chunks in enumerate((chunks_pos, chunks_neg)):
        for chunk in chunks:
            for ch, tally in tallies.items():
                tally.add(side, chunk[ch])
    return {ch: tally.bound(confidence, deltas[ch], detectable_at[ch]) for ch, tally in tallies.items()}


def split_evenly(n: int, parts: int) -> list[int]:
    size = -(-n // parts)
    return [min(size, n - i) for i in range(0, n, size)]


class SelectionPool:
    """Releases that earlier audits of the same pair drew (their training splits and certification releases),
    offered to a later audit's SELECTION — never to its certification, which stays on fresh releases. Sampling
    until decisive pools its stages this way, so that a later stage selects on everything drawn before it.
    Holds per side and channel at most ``max_rows`` releases and ``max_values`` numbers (the newest): the
    mechanism audit's cap on a training split (:data:`audit.certification.tester.MECHANISM_SPLIT`), selection beyond it
    is stable and only slower. ``raced``: the releases won a race among pairs
    (:func:`audit.engine.pair_search.choose_named_pair`) — the pair was kept because they looked far apart, so their
    tails overstate the pair's separation: they help fit a statistic, and its threshold is chosen on the training
    split's fresh selection half alone. An audit that certifies on a stream whose releases the pool may already hold
    is refused (:meth:`certify_from`): it would select on its own certification releases."""

    def __init__(self, max_rows: int = 200_000, max_values: int = 8_000_000, raced: bool = False):
        self.max_rows, self.max_values = int(max_rows), int(max_values)
        self.raced = bool(raced)
        self.sides: tuple[dict[str, list[np.ndarray]], dict[str, list[np.ndarray]]] = ({}, {})
        self.certification_streams: set[tuple[str, tuple[int, ...]]] = set()

    def certify_from(self, stream: np.random.SeedSequence) -> None:
        """Note that an audit offered this pool certifies on ``stream`` (its releases may join the pool); refused
        where an earlier audit offered it certified on the same stream (the same seed and certification seed)."""
        key = (repr(stream.entropy), tuple(int(k) for k in stream.spawn_key))
        if key in self.certification_streams:
            raise UserError(
                "this selection pool already holds the certification releases of this audit's stream (the same "
                "seed and certification seed): the audit would select on its own certification releases; give "
                "each audit of one pool its own seed"
            )
        self.certification_streams.add(key)

    def capacity(self, width: int) -> int:
        """Releases of ``width`` numbers the pool keeps per side and channel."""
        return min(self.max_rows, self.max_values // max(1, int(width)))

    def extend(self, side: int, releases: Mapping[str, np.ndarray]) -> None:
        """Add one batch of releases of side 0 (the first secret) or 1."""
        for ch, rows in releases.items():
            kept = self.sides[side].setdefault(ch, [])
            kept.append(np.asarray(rows, dtype=np.float64).reshape(len(rows), -1))
            keep = self.capacity(kept[-1].shape[1])
            while len(kept) > 1 and sum(len(a) for a in kept) - len(kept[0]) >= keep:
                kept.pop(0)

    def merged(self, side: int, releases: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """``releases`` with the pooled releases of the same channels before them."""
        pooled = self.sides[side]
        return {ch: np.concatenate(pooled[ch] + [rows]) if pooled.get(ch) else rows for ch, rows in releases.items()}
