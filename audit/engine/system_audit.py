"""Audit any locally private system through one contract (:class:`pgc.contracts.System`).

``audit_system(system, secret, secret_prime)`` answers, per channel of what the aggregator sees: does
the system's (ε, δ) claim hold for these two neighbouring secrets, and what does the channel leak?

Protocol (the α of every bound is spent once, on fresh samples):

1. **Broadcast.** Honest: ``broadcast`` (None = the system's default). Adversarial: the system's own
   crafted family (``crafted_broadcasts``) where it has one, else CMA-ES (the ``cmaes`` package) over
   its ``broadcast_space``; either way the candidates are ranked on a SEARCH stream of releases, per
   channel, by the bound each would project (:func:`audit.statistics.selection.choose_threshold`).
2. **Select.** For each broadcast kept, a TRAINING split of releases per side (drawn in several calls,
   so that noise reused from call to call shows) fits every candidate statistic per channel and picks
   one statistic, threshold and α split per channel (:func:`audit.certification.tester.fit_candidate`).
3. **Certify.** FRESH releases per side, drawn in chunks; each channel's chosen test is counted on
   them, and the counts give ε_LB at the claimed δ and δ_LB at the claimed ε (the same two
   Clopper–Pearson rate bounds hold jointly with probability ≥ 1 − α, so both hold together; and
   ε_LB > ε ⇔ δ_LB > δ for one set of counts).

Channels: every channel the system releases, and ``all`` (every channel jointly: the columns side by
side, unless the system returns its own ``all``; covered when every channel is) where there is more than one
(:func:`has_joint_channel`: a system releasing one channel has no ``all`` row unless it returns its own, so
Holm counts each test once). A channel the claim
does not cover is *unprotected*. Row verdicts: a covered channel is ``violated`` when ε_LB exceeds
the claimed ε (equivalently δ_LB the claimed δ); an uncovered one is an ``unprotected channel`` when
it leaks at all (ε_LB > 0), whatever its size, since no claim bounds it — except the joint ``all`` of a claim
that covers some of its channels, which is one only above the claim (:func:`is_partly_covered`); else
``consistent`` — each at
the stated confidence on its own. The result's ``verdict`` looks at all rows together with Holm's step-down procedure
(statsmodels ``multipletests``) on the rows' p-values of "the claim holds"; then, over the uncovered
rows, of "no leak".

Beside every claim the accountant (:mod:`audit.certification.accountant`) gives the ε at the claimed δ of the noise the
system says it adds (``dp_event()``; a pure ε claim's at δ = 0), and each row of a claim with δ > 0 shows the
Gaussian-DP estimate μ̂ (an estimate assuming a Gaussian trade-off curve; never used for a verdict).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from audit.certification.accountant import accountant_epsilon
from audit.certification.claims import contradiction
from audit.certification.tester import SYSTEM_SPLIT, TRAIN_CALLS, EpsilonBound, auto_train_fraction, chunk_rows
from audit.engine.broadcast_search import (
    SEARCH_GENERATIONS,
    SEARCH_SAMPLES,
    adversarial_candidates,
    projected_by_channel,
)
from audit.engine.pair_search import (
    NAMED_PAIR_RACE_SHARE,
    PAIR_SEARCH_SHARE,
    FoundPair,
    choose_named_pair,
    search_secret_pair,
)
from audit.engine.progress import progress_bar
from audit.engine.releases import (
    AuditTarget,
    SelectionPool,
    Stopwatch,
    certify_channel_tests,
    channel_groups,
    fit_channel_tests,
    joint_statistics,
    split_evenly,
    stack_draws,
)
from audit.statistics import LaplaceLogLikelihood, default_statistics
from audit.verdicts import judge, make_rows
from pgc.contracts import (
    ALL,
    ClaimsPerChannel,
    DeclaresNoise,
    DeclaresNoisePerChannel,
    NamesRelation,
    NamesReportSection,
    OffersStatistics,
    PrivacyClaim,
)
from pgc.errors import UserError
from pgc.schemas import Accountant, AuditedSystem, ChannelFamily, ChannelKind, SystemAuditResult
from pgc.schemas.kinds import TrainingSplitUsed
from pgc.schemas.provenance import Invocation


def check_system(system: Any) -> tuple[str, ...]:
    """The system's channels (without ``all``); a clear ValueError when it does not meet the contract."""
    return checked_system(system)[0]


def checked_system(system: Any) -> tuple[tuple[str, ...], PrivacyClaim]:
    """The system's channels (without ``all``) and its claim, each read once; a clear ValueError when it does not
    meet the contract."""
    values = {k: getattr(system, k, _MISSING) for k in ("name", "claim", "channels", "release")}
    missing = [k for k, v in values.items() if v is _MISSING]
    if missing:
        raise UserError(f"{type(system).__name__} is not a System: it lacks {', '.join(missing)}")
    if not callable(values["release"]):
        raise UserError(f"{values['name']}: release must be callable")
    claim = PrivacyClaim.of(values["claim"])
    channels = tuple(values["channels"])
    if not channels or not all(isinstance(c, str) and c for c in channels) or len(set(channels)) != len(channels):
        raise UserError(f"{values['name']}: channels must be distinct non-empty names, got {channels!r}")
    return tuple(c for c in channels if c != ALL), claim


_MISSING = object()
CERTIFICATION_SEED_KEY = 0x63657274  # "cert": the spawn key of a given certification seed's stream
SEED_LIMIT = 2**64  # seeds below it: a seed's entropy words never reach the words a spawn key adds (from 2**128)


def channel_kinds(system: Any, channels: Sequence[str]) -> dict[str, ChannelKind]:
    """Each channel's kind (:class:`pgc.schemas.ChannelKind`): as the system declares it (an optional attribute
    ``channel_kinds``: channel → kind), else one submission of the joint channel ``all`` (family ALL) or of a
    channel of no family (OTHER)."""
    declared = getattr(system, "channel_kinds", None) or {}
    return {
        ch: declared.get(ch) or ChannelKind.single(ChannelFamily.ALL if ch == ALL else ChannelFamily.OTHER, ch)
        for ch in channels
    }


def is_partly_covered(system: Any, channel: str, base_channels: Sequence[str]) -> bool:
    """The joint channel ``all`` of a claim that covers some of the system's channels but not all: its row is held to
    the claim as the most its covered part may leak (:func:`audit.verdicts.decide`). ``all`` joins every channel
    the system releases: a released channel the claim names is part of it (when the audit serves ``all`` alone,
    with no base channels to check, any channel the claim names)."""
    return _partly_covered(PrivacyClaim.of(system.claim), channel, base_channels)


def _partly_covered(claim: PrivacyClaim, channel: str, base_channels: Sequence[str]) -> bool:
    named = [c for c in claim.covers if c != ALL]
    joins_one = any(c in base_channels for c in named) if base_channels else bool(named)
    return channel == ALL and not claim.covering(ALL, tuple(base_channels)) and joins_one


def system_accountant(
    system: Any,
    channels: Sequence[str],
    claims: Mapping[str, tuple[float, float]],
    covered: Mapping[str, bool],
    claim: PrivacyClaim | None = None,
) -> tuple[dict[str, float | None], dict | None]:
    """ε at each covered channel's claimed δ of the noise the system says it adds (``dp_event`` /
    ``dp_event_for``; at δ = 0 its pure ε, :func:`audit.certification.accountant.accountant_epsilon`), and a summary
    for the claim
    itself; None where the system gives no event or the accountant cannot read it at that δ."""
    per_channel: dict[str, float | None] = {}
    summary = None
    event_for = system.dp_event_for if isinstance(system, DeclaresNoisePerChannel) else None
    base = system.dp_event() if isinstance(system, DeclaresNoise) else None
    claim = PrivacyClaim.of(system.claim) if claim is None else claim
    overall = None if base is None else accountant_epsilon(base, claim.delta)
    if overall is not None:
        summary = {"epsilon": overall, "delta": float(claim.delta), "description": str(base)}
    for ch in channels:
        event = event_for(ch) if callable(event_for) else base
        per_channel[ch] = accountant_epsilon(event, claims[ch][1]) if event is not None and covered[ch] else None
    return per_channel, summary


@dataclass(frozen=True)
class AuditSettings:
    """How an audit spends its releases (validated on construction): ``samples`` certification releases
    per side, a training split of ``train_fraction`` of that (at least ``train_minimum``), ``seed`` of the
    one root SeedSequence, ``confidence``, the adversarial search's budget, ``float_exact`` (audit the
    releases' exact bits; default: rounded to 30 significant bits) and ``progress``. ``certification_seed``: the
    certification releases come from this seed instead of ``seed``'s own stream, everything before them (search,
    training split, the chosen tests) from ``seed`` — an audit's witness recertified on fresh releases.
    ``shape_power``: every row that is not violated also states, per leak shape, the smallest leak planted in its
    own training releases that the whole selection and certification flag (:func:`audit.power.planted.planted_power`;
    tens of seconds per channel).

    ``two_sided_rates``: the selection's rate bounds also use the complement's Poisson bound
    (:func:`audit.statistics.selection.rate_upper`) on every channel (True), or only on channels whose claim has
    δ > 0 (None, the mechanism audit's rule). ``held_to_claim``: every channel, covered or not, is held
    to its claim (a participant whose whole release is promised ε: :func:`audit.verdicts.decide`)."""

    samples: int = 100_000
    seed: int = 0
    confidence: float = 0.95
    train_fraction: float | str | None = None  # None or "auto": tester.auto_train_fraction for the smallest claimed ε
    search_samples: int = SEARCH_SAMPLES
    search_generations: int = SEARCH_GENERATIONS
    pair_race_share: int = NAMED_PAIR_RACE_SHARE  # named pairs race on max(search_samples, samples / this) each
    float_exact: bool = False
    progress: bool = False
    train_minimum: int = 1_000
    two_sided_rates: bool | None = True
    held_to_claim: bool = False
    certification_seed: int | None = None  # fresh certification releases from this seed; selection from ``seed``
    shape_power: bool = False  # measure each row's power against planted leaks of every shape (audit.power.planted)

    def __post_init__(self) -> None:
        if not isinstance(self.train_minimum, (int, np.integer)) or self.train_minimum < 100:
            raise UserError(f"train_minimum must be an integer >= 100, got {self.train_minimum!r}")
        if not isinstance(self.samples, (int, np.integer)) or isinstance(self.samples, bool) or self.samples < 100:
            raise UserError(f"samples must be an integer >= 100, got {self.samples!r}")
        if not (0.0 < self.confidence < 1.0):
            raise UserError(f"confidence must lie in (0, 1), got {self.confidence!r}")
        if isinstance(self.train_fraction, str) and self.train_fraction.strip() == "auto":
            object.__setattr__(self, "train_fraction", None)  # the documented default, by its name
        if self.train_fraction is not None and (
            isinstance(self.train_fraction, bool)
            or not isinstance(self.train_fraction, (int, float, np.integer, np.floating))
            or not (0.0 < self.train_fraction <= 1.0)
        ):
            raise UserError(f"train_fraction must be a number in (0, 1] or 'auto', got {self.train_fraction!r}")
        for name, value in (("seed", self.seed), ("certification_seed", self.certification_seed)):
            if (value is not None or name == "seed") and (
                not isinstance(value, (int, np.integer)) or not 0 <= value < SEED_LIMIT
            ):
                raise UserError(f"{name} must be an integer in [0, 2**64), got {value!r}")
        if self.search_samples < 2 or self.search_generations < 1:
            raise UserError("search_samples must be >= 2 and search_generations >= 1")
        if not isinstance(self.pair_race_share, (int, np.integer)) or self.pair_race_share < 1:
            raise UserError(f"pair_race_share must be an integer >= 1, got {self.pair_race_share!r}")

    @property
    def train_samples(self) -> int:
        """The training releases per side (:data:`audit.certification.tester.SYSTEM_SPLIT` at this fraction and
        minimum; the
        fraction of a quarter when none is given — :meth:`for_claim` sets the one a claim needs)."""
        return SYSTEM_SPLIT.size(self.samples, self.train_fraction, self.train_minimum)

    def streams(self) -> tuple[np.random.SeedSequence, np.random.SeedSequence, np.random.SeedSequence]:
        """The search, training and certification streams: children of ``SeedSequence(seed)``; the certification
        stream from ``certification_seed`` instead where one is given (the same selection, fresh releases): a
        child of the same root under :data:`CERTIFICATION_SEED_KEY`, which no stream of an audit of a seed below
        :data:`SEED_LIMIT` reaches (entropy words such as ``[certification_seed, seed]`` would not do: a trailing 0
        adds nothing to a SeedSequence's entropy, so seed 0's would be another audit's root, or this one's)."""
        search, train, cert = np.random.SeedSequence(self.seed).spawn(3)
        if self.certification_seed is not None:
            cert = np.random.SeedSequence(self.seed, spawn_key=(CERTIFICATION_SEED_KEY, self.certification_seed))
        return search, train, cert

    def for_claim(self, claimed_epsilon: float) -> AuditSettings:
        """These settings with the training fraction :func:`audit.certification.tester.auto_train_fraction` gives for
        a claimed
        ε, unless one was given."""
        if self.train_fraction is not None:
            return self
        return replace(self, train_fraction=auto_train_fraction(self.samples, claimed_epsilon))


def audit_system(
    system: Any,
    secret: Any,
    secret_prime: Any,
    settings: AuditSettings | None = None,
    *,
    broadcast: Any = None,
    adversarial: bool = False,
    channels: Sequence[str] | None = None,
    pair: str | None = None,
    search_pair: bool = False,
    selection_pool: SelectionPool | None = None,
    pairs: Mapping[str, tuple[Any, Any]] | None = None,
    **setting_values: Any,
) -> SystemAuditResult:
    """Certified ε and δ lower bounds per channel of ``system`` for ``secret`` vs ``secret_prime``
    (see the module docstring). ``settings`` (or its fields as keywords: ``samples=...``) say how many
    releases are spent and how; ``broadcast`` is what the aggregator sends (None: the system's default),
    ``adversarial=True`` lets the aggregator choose it. ``search_pair=True``: the auditor searches the
    system's ``secret_space`` for the worst neighbouring pair on the search stream
    (:func:`audit.engine.pair_search.search_secret_pair`) and certifies that pair instead of the given one.
    ``selection_pool``: earlier releases of the same pair and broadcast, added to the training split only.
    ``pairs``: named neighbouring pairs (a finite set: the system's ``canaries()``) to choose among on the search
    stream (:func:`audit.engine.pair_search.choose_named_pair`) instead of ``secret``, ``secret_prime``; the chosen one
    is
    certified on fresh releases."""
    start = time.perf_counter()
    settings = replace(settings or AuditSettings(), **setting_values)
    base, claim = checked_system(system)  # the contract's shape and the claim, read once for the whole audit
    _check_options(broadcast, adversarial, search_pair, selection_pool, pairs)
    wanted = _wanted_channels(system, base, channels)
    read = ReadClaims.of(system, claim, wanted, base)
    claims, covered, mus, profiles = read.claims, read.covered, read.mus, read.profiles
    settings = settings.for_claim(min(claims[ch][0] for ch in wanted))
    deltas = {ch: claims[ch][1] for ch in wanted}
    search_seq, train_seq, cert_seq = settings.streams()
    if selection_pool is not None:
        selection_pool.certify_from(cert_seq)
    search_seq, found, chosen, searched = _chosen_pair(
        system, base, wanted, covered, deltas, settings, search_seq, pairs, search_pair
    )
    if searched is not None and broadcast is None and not adversarial:  # the search drew the default broadcast
        selection_pool = searched
    secret, secret_prime, pair = (secret, secret_prime, pair) if found is None else (*found.pair(), chosen)
    target = AuditTarget(system, secret, secret_prime, base, settings.float_exact)
    clock = Stopwatch()

    # 1. the broadcast(s): honest, given, or the adversary's candidates ranked per channel on the search stream
    candidates, choice, kind = _broadcast_candidates(
        target, settings, wanted, covered, deltas, broadcast, adversarial, search_seq
    )

    # 2.-3. per broadcast kept: select on a training split, certify on fresh releases
    detectable_at = {ch: claims[ch][0] if math.isfinite(claims[ch][0]) else 0.0 for ch in wanted}
    used = sorted(set(choice.values()))
    train_seqs, cert_seqs = train_seq.spawn(len(candidates)), cert_seq.spawn(len(candidates))
    bar = progress_bar(
        2 * len(used) * (settings.train_samples + settings.samples),
        "release",
        f"auditing {system.name}",
        settings.progress,
    )
    bounds_by_channel: dict[str, EpsilonBound] = {}
    bases: dict[str, tuple[np.ndarray, Any]] | None = {} if settings.shape_power else None
    for index in used:
        group = [ch for ch in wanted if choice[ch] == index]
        bounds_by_channel.update(
            _certify_broadcast(
                target,
                settings,
                candidates[index][1],
                group,
                deltas,
                (mus, profiles),
                detectable_at,
                train_seqs[index],
                cert_seqs[index],
                bar,
                selection_pool,
                clock,
                bases,
            )
        )
    bar.close()
    with clock.part("judge"):
        rows, verdict, accountant = _judged_rows(
            system,
            bounds_by_channel,
            wanted,
            read,
            {ch: candidates[choice[ch]][0] for ch in wanted},
            settings,
        )
        rows = with_planted_power(rows, bases, settings, search_seq.spawn(1)[0]) if bases else rows
        widths = target.widths
        rows = [r.updated(encoding=widths.encoding([r.channel, *(base if r.channel == ALL else ())])) for r in rows]
    audited = AuditedSystem(
        system=system.name,
        secret=target.describe(secret),
        secret_prime=target.describe(secret_prime),
        pair=pair,
        broadcast=kind,
        report_section=system.report_section if isinstance(system, NamesReportSection) else None,
        relation=system.relation if isinstance(system, NamesRelation) else None,
    )
    return SystemAuditResult(
        audited=audited,
        claim=read.claim,
        confidence=settings.confidence,
        samples_per_side=int(settings.samples),
        seed=int(settings.seed),
        rows=rows,
        verdict=verdict,
        training=TrainingSplitUsed(
            train_per_side=int(settings.train_samples),
            train_fraction=None if settings.train_fraction is None else float(settings.train_fraction),
        ),
        accountant=None if accountant is None else Accountant(**accountant),
        searched_pair=None if found is None else found.record(),
        timings=clock.seconds,
        invocation=Invocation(wall_time_s=time.perf_counter() - start),
    )


def _chosen_pair(
    system: Any,
    base: Sequence[str],
    wanted: list[str],
    covered: Mapping[str, bool],
    deltas: dict[str, float],
    settings: AuditSettings,
    search_seq: np.random.SeedSequence,
    pairs: Mapping[str, tuple[Any, Any]] | None,
    search_pair: bool,
) -> tuple[np.random.SeedSequence, FoundPair | None, str | None, SelectionPool | None]:
    """Step 0, on its own child of the search stream: the named pair whose releases lie furthest apart (``pairs``) or
    the worst pair of the secret space (``search_pair``); (the rest of the search stream, the pair found, its label,
    the chosen named pair's search releases for its selection)."""
    if pairs is None and not search_pair:
        return search_seq, None, None, None
    if pairs is not None and search_pair:
        raise UserError("give either named pairs to choose among or search_pair=True, not both")
    pair_seq, search_seq = search_seq.spawn(2)
    channels = [ch for ch in wanted if covered[ch]] or wanted
    if pairs is not None:
        n = max(settings.search_samples, settings.samples // settings.pair_race_share)
        name, found, searched = choose_named_pair(
            system,
            base,
            channels,
            pairs,
            pair_seq,
            n=n,
            n_cert=settings.samples,
            alpha=1.0 - settings.confidence,
            deltas=deltas,
            progress=settings.progress,
        )
        return (
            search_seq,
            found,
            (
                f"{name} (chosen among {len(pairs)} named pairs on the search stream, never on the certification "
                f"releases: the confidence holds family-wise over all {len(pairs)})"
            ),
            searched,
        )
    found = search_secret_pair(
        system,
        base,
        channels,
        pair_seq,
        n=max(settings.search_samples, settings.samples // PAIR_SEARCH_SHARE),
        n_cert=settings.samples,
        alpha=1.0 - settings.confidence,
        deltas=deltas,
        progress=settings.progress,
    )
    return search_seq, found, f"searched: {found.relation}", None


def _judged_rows(
    system: Any,
    bounds_by_channel: Mapping[str, EpsilonBound],
    wanted: Sequence[str],
    read: ReadClaims,
    broadcast_labels: Mapping[str, str],
    settings: AuditSettings,
) -> tuple[list, Any, dict | None]:
    """The judged rows (their contradictions and accountant beside the claims), the family verdict and the
    accountant's summary."""
    per_channel_accountant, accountant = system_accountant(system, wanted, read.claims, read.covered, read.claim)
    words = {ch: contradiction(read.per_channel[ch], per_channel_accountant[ch]) for ch in wanted}
    rows, verdict = make_rows(
        {ch: bounds_by_channel[ch] for ch in wanted},
        read.claims,
        read.covered,
        settings.confidence,
        per_channel_accountant,
        broadcast_labels,
        read.mus,
        read.profiles,
        settings.held_to_claim,
        words,
        partly_covered=list(read.partly_covered),
        kinds=channel_kinds(system, wanted),
    )
    return rows, verdict, accountant


def _check_options(broadcast: Any, adversarial: bool, search_pair: bool, selection_pool: Any, pairs: Any) -> None:
    if adversarial and broadcast is not None:
        raise UserError("give either a broadcast or adversarial=True, not both")
    if selection_pool is not None and (adversarial or search_pair or pairs is not None):
        raise UserError(
            "a selection pool serves one fixed pair and broadcast: not with adversarial, search_pair or pairs"
        )


@dataclass(frozen=True)
class ReadClaims:
    """The system's claim as one audit reads it, once: the whole claim and, per audited channel, the claim held to
    it, whether the claim covers it (partly: the joint channel of a claim covering some channels) and the curve a
    covered channel's claim states (a μ-GDP curve or a privacy profile; the curve test runs on those)."""

    claim: PrivacyClaim
    per_channel: Mapping[str, PrivacyClaim]
    covered: Mapping[str, bool]
    partly_covered: tuple[str, ...]

    @classmethod
    def of(cls, system: Any, claim: PrivacyClaim, wanted: Sequence[str], base: Sequence[str]) -> ReadClaims:
        per_channel = {
            ch: PrivacyClaim.of(system.claim_for(ch)) if isinstance(system, ClaimsPerChannel) else claim
            for ch in wanted
        }
        return cls(
            claim,
            per_channel,
            {ch: claim.covering(ch, tuple(base)) for ch in wanted},
            tuple(ch for ch in wanted if _partly_covered(claim, ch, base)),
        )

    @property
    def claims(self) -> dict[str, tuple[float, float]]:
        return {ch: (float(c.epsilon), float(c.delta)) for ch, c in self.per_channel.items()}

    @property
    def mus(self) -> dict[str, float | None]:
        return {ch: c.gdp_mu if self.covered[ch] else None for ch, c in self.per_channel.items()}

    @property
    def profiles(self) -> dict[str, tuple[tuple[float, float], ...] | None]:
        return {ch: c.privacy_profile if self.covered[ch] else None for ch, c in self.per_channel.items()}


def _broadcast_candidates(
    target: AuditTarget,
    settings: AuditSettings,
    wanted: list[str],
    covered: dict[str, bool],
    deltas: dict[str, float],
    broadcast: Any,
    adversarial: bool,
    search_seq: np.random.SeedSequence,
) -> tuple[list[tuple[str, Any]], dict[str, int], str]:
    """The broadcasts to certify at (label, value), which one each channel uses, and their kind: honest,
    given, or the adversary's candidates ranked per channel on the search stream."""
    if adversarial:
        candidates, rank_seq = adversarial_candidates(
            target,
            wanted,
            covered,
            search_seq,
            search_samples=settings.search_samples,
            search_generations=settings.search_generations,
            progress=settings.progress,
        )
        kind = "crafted" if candidates[0][0].startswith("crafted") else "searched"
    else:
        kind = "given" if broadcast is not None else "honest"
        candidates, rank_seq = [(kind, broadcast)], None
    choice = {ch: 0 for ch in wanted}
    if len(candidates) > 1:
        scores = [
            projected_by_channel(
                target, b, wanted, settings.search_samples, rank_seq, settings.samples, settings.confidence, deltas
            )
            for _, b in candidates
        ]
        choice = {ch: int(np.argmax([s[ch] for s in scores])) for ch in wanted}
    return candidates, choice, kind


def has_joint_channel(system: Any, base: Sequence[str]) -> bool:
    """Whether the audit has a joint channel ``all`` to test: the system releases its own, or two or more channels
    go side by side. One released channel alone is its own joint channel: a second row would repeat its test and
    Holm would count that test twice."""
    return ALL in tuple(system.channels) or len(base) >= 2


def _wanted_channels(system: Any, base: Sequence[str], channels: Sequence[str] | None) -> list[str]:
    known = list(base) + ([ALL] if has_joint_channel(system, base) else [])
    wanted = known if channels is None else list(dict.fromkeys(channels))
    unknown = [c for c in wanted if c not in known]
    if unknown or not wanted:
        alone = (
            f" (one released channel is its own joint channel: ask for {base[0]})"
            if ALL in unknown and len(base) == 1
            else ""
        )
        raise UserError(f"unknown or no channels {unknown or wanted}; {system.name} has: {', '.join(known)}{alone}")
    return wanted


def _certify_broadcast(
    target: AuditTarget,
    settings: AuditSettings,
    broadcast: Any,
    group: list[str],
    deltas: Mapping[str, float],
    curves: tuple[Mapping, Mapping],
    detectable_at: Mapping[str, float],
    train_seq: np.random.SeedSequence,
    cert_seq: np.random.SeedSequence,
    bar,
    pool: SelectionPool | None = None,
    clock: Stopwatch | None = None,
    bases: dict[str, tuple[np.ndarray, Any]] | None = None,
) -> dict[str, EpsilonBound]:
    """The channels in ``group`` at one broadcast: tests chosen on a training split (drawn in several calls,
    so that noise reused from call to call shows), counted on fresh releases in chunks. ``curves``: the
    claimed μ and privacy profile per channel (None where the claim states none)."""
    clock = clock or Stopwatch()
    base, n_train, samples = target.base, settings.train_samples, settings.samples
    tp, tn = (np.random.Generator(np.random.PCG64(s)) for s in train_seq.spawn(2))
    extra = [c for c in base if c not in group] if ALL in group else []
    train = []
    for side_secret, rng in ((target.secret, tp), (target.secret_prime, tn)):
        with clock.part("draw_training"):
            calls = (
                target.draw(side_secret, m, rng, broadcast, group + extra) for m in split_evenly(n_train, TRAIN_CALLS)
            )
            drawn = stack_draws(calls, n_train, group + extra)
        train.append(drawn if pool is None else pool.merged(len(train), drawn))
        if pool is not None:
            pool.extend(len(train) - 1, {ch: drawn[ch] for ch in group})
        bar.update(n_train)
    own_joint = ALL in tuple(target.system.channels)  # the system assembles its own joint channel
    groups = channel_groups([train[0][c].shape[1] for c in base]) if ALL in group and not own_joint else None

    def statistics_for(ch: str):
        offered = list(target.system.audit_statistics(ch)) if isinstance(target.system, OffersStatistics) else []
        preferred = [s for s in offered if getattr(s, "preferred_margin", None) is not None]
        offered = [s for s in offered if s not in preferred]
        if ch != ALL or len(base) < 2:
            return preferred + default_statistics() + offered if offered or preferred else None
        return (
            (
                joint_statistics(groups)
                if groups is not None
                else default_statistics() + [LaplaceLogLikelihood(scaled=True)]
            )
            + preferred
            + offered
        )

    labels = {ch: f"{target.describe(target.secret)} vs {target.describe(target.secret_prime)} [{ch}]" for ch in group}
    if bases is not None:  # the second secret's training releases, for the planted leaks
        bases.update({ch: (train[1][ch], statistics_for(ch)) for ch in group})
    with clock.part("select"):
        tests = fit_channel_tests(
            train[0],
            train[1],
            group,
            samples,
            settings.confidence,
            deltas,
            labels,
            statistics_for,
            two_sided_rates=settings.two_sided_rates,
            curves={ch: curves[0][ch] is not None or curves[1][ch] is not None for ch in group},
            profiles=curves[1],
            threshold_on_whole_split=not (pool is not None and pool.raced),
        )
    cp, cn = (np.random.Generator(np.random.PCG64(s)) for s in cert_seq.spawn(2))

    rows = chunk_rows(sum(train[0][ch].shape[1] for ch in group))

    def chunks(side: int, side_secret, rng):
        for m in split_evenly(samples, max(1, -(-samples // rows))):
            with clock.part("draw_certification"):
                chunk = target.draw(side_secret, m, rng, broadcast, group)
            yield chunk
            if pool is not None:  # for later audits' selection only: this one has selected already
                pool.extend(side, chunk)
            bar.update(m)

    with clock.part("certify"):  # drawing the certification releases included
        return certify_channel_tests(
            tests,
            chunks(0, target.secret, cp),
            chunks(1, target.secret_prime, cn),
            settings.confidence,
            deltas,
            detectable_at,
        )


def with_planted_power(
    rows: list, bases: Mapping[str, tuple[np.ndarray, Any]], settings: AuditSettings, seq: np.random.SeedSequence
) -> list:
    """Every row that is not violated, with its power against planted leaks of each shape measured on its own
    training releases (:func:`audit.power.planted.planted_power`) and its reason judged again; its verdict stays."""
    from audit.power.planted import planted_power

    out = []
    for row, child in zip(rows, seq.spawn(len(rows)), strict=True):
        if str(row.verdict) == "violated" or row.channel not in bases or row.claimed_epsilon is None:
            out.append(row)
            continue
        base, statistics = bases[row.channel]
        planted = planted_power(
            base,
            statistics,
            claimed_epsilon=row.claimed_epsilon,
            delta=row.claimed_delta or 0.0,
            confidence=settings.confidence,
            two_sided=settings.two_sided_rates is not False,
            seq=child,
        )
        out.append(judge(row.updated(planted_power=planted)))
    return out
