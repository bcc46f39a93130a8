"""The System contract suite and a claim assertion, for users' own tests (as ``optuna.testing`` ships the suite
every storage runs).

    from audit.testing import assert_claim_holds, check_system

    def test_my_system_meets_the_contract():
        check_system(make())                      # names, claim, channels, releases, optional members

    def test_my_system_keeps_its_claim():
        assert_claim_holds(make(), samples=20_000)   # fails with the audit's rows when a row is violated

:func:`check_system` runs every check of the contract (:mod:`pgc.contracts`) on one system and raises
:class:`ContractViolation` (an AssertionError) naming every check that failed. :func:`assert_claim_holds`
audits the system at a canary pair (:func:`audit.engine.system_audit.audit_system`) and raises
:class:`ClaimNotShown` with the rows when the family verdict is one of ``fail_on`` (default: violated). The
project's registered systems run the same suite (``tests/audit/test_system_contract.py``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from pgc.contracts import (
    ALL,
    ClaimsPerChannel,
    DeclaresNoise,
    DescribesSecrets,
    HasBroadcastSpace,
    HasCanaries,
    OffersStatistics,
    PrivacyClaim,
    System,
)
from pgc.schemas.audit_rows import Verdict

SMALL = (1, 7)  # release sizes every system must honour


class ContractViolation(AssertionError):
    """A system that does not meet the contract; the message lists every failed check."""


class ClaimNotShown(AssertionError):
    """An audit whose family verdict is one the caller refuses; the message holds its rows."""

    def __init__(self, message: str, result: Any):
        super().__init__(message)
        self.result = result


def _draw(system, secret, n: int, seed: int, broadcast=None) -> dict:
    return system.release(secret, n, np.random.default_rng(np.random.SeedSequence(seed)), broadcast=broadcast)


def first_pair(system) -> tuple:
    """The system's first named canary pair."""
    canaries = system.canaries() if isinstance(system, HasCanaries) else {}
    assert canaries, f"{getattr(system, 'name', system)} names no canary pairs (canaries())"
    return tuple(next(iter(canaries.values())))


def check_identity(system) -> None:
    assert not isinstance(system, type), (
        f"the factory returned the class {system.__name__}, not an instance: return {system.__name__}(...)"
    )
    assert isinstance(system, System), "a System has name, claim, channels and release(secret, n, rng, broadcast=)"
    assert isinstance(system.name, str) and system.name, "name must be a non-empty string"
    claim = PrivacyClaim.of(system.claim)
    channels = tuple(system.channels)
    assert channels and len(set(channels)) == len(channels) and all(isinstance(c, str) and c for c in channels), (
        f"channels must be distinct non-empty names, got {channels!r}"
    )
    unknown = [c for c in claim.covers if c not in set(channels) | {ALL}]
    assert not unknown, (
        "a claim covers only channels the system releases: "
        + ", ".join(f"{c!r}{_did_you_mean(c, channels)}" for c in unknown)
        + f" is not one of {', '.join(map(repr, channels))}"
    )
    if isinstance(system, ClaimsPerChannel):
        for channel in channels:
            PrivacyClaim.of(system.claim_for(channel))


def _did_you_mean(name: str, names: Sequence[str]) -> str:
    import difflib

    close = difflib.get_close_matches(name, list(names), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def check_releases(system) -> None:
    from audit.engine.releases import release_array
    from pgc.errors import UserError

    secret, secret_prime = first_pair(system)
    for n in SMALL:
        for s in (secret, secret_prime):
            out = _draw(system, s, n, 1)
            assert set(out) >= set(system.channels) - {ALL}, f"release returned {sorted(out)}, not every channel"
            for channel, values in out.items():
                try:  # the auditor's own reading: NaN absent, rows of different lengths padded, inf refused
                    release_array(system, channel, values, n)
                except UserError as exc:
                    raise AssertionError(str(exc).split(": ", 1)[-1]) from None


def check_randomness(system) -> None:
    secret, _ = first_pair(system)
    a, b = _draw(system, secret, 7, 5), _draw(system, secret, 7, 5)
    for channel in a:
        assert _same(a[channel], b[channel]), (
            f"channel {channel!r} differs for the same rng: all randomness must come from rng"
        )
    claim = PrivacyClaim.of(system.claim)
    covered = [ch for ch in claim.covers if ch in a and ch != ALL]
    if math.isfinite(claim.epsilon) and covered:
        c = _draw(system, secret, 7, 6)
        assert any(not _same(a[ch], c[ch]) for ch in covered), (
            "the system claims privacy, yet its covered channels do not vary with the seed"
        )


def _same(x: Any, y: Any) -> bool:
    """Two releases equal entry by entry, NaN (an absent entry) equal to NaN."""
    try:
        x, y = np.asarray(x), np.asarray(y)
    except ValueError:  # rows of different lengths
        x, y = np.asarray(x, dtype=object), np.asarray(y, dtype=object)
    if x.dtype == object or y.dtype == object:
        return len(x) == len(y) and all(_same(a, b) for a, b in zip(x, y, strict=True))
    numeric = x.dtype.kind in "biufc" and y.dtype.kind in "biufc"
    return bool(np.array_equal(x, y, equal_nan=numeric))


def check_optional_members(system) -> None:
    for name, pair in system.canaries().items() if isinstance(system, HasCanaries) else ():
        assert isinstance(name, str) and name and len(pair) == 2, f"canary pair {name!r} must be (secret, secret')"
    if isinstance(system, DescribesSecrets):
        text = system.describe_secret(first_pair(system)[0])
        assert isinstance(text, str) and 0 < len(text) <= 200, "describe_secret gives a short text"
    if isinstance(system, DeclaresNoise):
        import dp_accounting

        event = system.dp_event()
        assert event is None or isinstance(event, dp_accounting.DpEvent), "dp_event() gives a dp_accounting DpEvent"
    profile = PrivacyClaim.of(system.claim).privacy_profile
    if profile is not None:
        deltas = [d for _, d in sorted(profile)]
        assert all(x >= y for x, y in zip(deltas, deltas[1:], strict=False)), (
            "a privacy profile's δ does not grow with ε"
        )
    space = system.broadcast_space if isinstance(system, HasBroadcastSpace) else None
    if space is not None:
        lower, upper = (np.asarray(x, dtype=np.float64) for x in space)
        assert lower.shape == upper.shape and lower.ndim == 1 and np.all(lower < upper), "broadcast_space is a box"
        out = _draw(system, first_pair(system)[0], 3, 2, broadcast=(lower + upper) / 2)
        assert all(np.asarray(v).shape[0] == 3 for v in out.values()), "a broadcast inside the box releases"


def check_offered_statistics(system) -> None:
    if not isinstance(system, OffersStatistics):
        return
    offer = system.audit_statistics
    secret, secret_prime = first_pair(system)
    for channel in system.channels:
        pos = np.asarray(_draw(system, secret, 50, 3)[channel], dtype=float)
        neg = np.asarray(_draw(system, secret_prime, 50, 4)[channel], dtype=float)
        pos, neg = (x[:, None] if x.ndim == 1 else x for x in (pos, neg))
        for statistic in offer(channel):
            assert isinstance(statistic.name, str) and statistic.name, "an offered statistic has a name"
            scorer = statistic.fit(pos, neg)
            if scorer is not None:
                scores = np.asarray(scorer(pos))
                assert scores.shape == (50,) and np.all(np.isfinite(scores)), (
                    f"statistic {statistic.name!r} scores each release with one finite number"
                )


def check_bad_secret(system) -> None:
    try:
        _draw(system, object(), 2, 0)
    except (TypeError, ValueError):
        return
    except Exception as exc:  # noqa: BLE001 — the contract names the exception types that refuse a secret
        raise AssertionError(
            "a secret of the wrong type must be refused with a ValueError (or TypeError), "
            f"not {type(exc).__name__}: {exc}"
        ) from None
    raise AssertionError("a secret of the wrong type must be refused with a ValueError (or TypeError)")


CHECKS: tuple[Callable[[Any], None], ...] = (
    check_identity,
    check_releases,
    check_randomness,
    check_optional_members,
    check_offered_statistics,
    check_bad_secret,
)
# what a system should do, which an audit of it does not need: refusing a secret it does not know
ADVISORY_CHECKS: tuple[Callable[[Any], None], ...] = (check_bad_secret,)


def check_system(system: Any, *, raise_user_errors: bool = False, warn: Callable[[str], None] | None = None) -> None:
    """Run every contract check on ``system``; :class:`ContractViolation` lists each one that failed.

    With ``raise_user_errors`` an exception raised inside the system's own code (its ``release``, ``canaries``
    ...; :func:`pgc.usercode.user_code_failure`) propagates as it is, so that its caller can show the user's
    frames; otherwise it is listed like any failed check. With ``warn``, a failed check of
    :data:`ADVISORY_CHECKS` (what a system should do but an audit does not need) goes to ``warn`` instead."""
    from pgc.usercode import user_code_failure

    if isinstance(system, type):  # every other check would fail for the same reason
        raise ContractViolation(
            f"{system.__name__} is a class, not a System: the factory must return an instance ({system.__name__}(...))"
        )
    failed: list[str] = []
    advisories: list[str] = []
    for check in CHECKS:
        try:
            check(system)
        except Exception as exc:  # noqa: BLE001 — every failure of a user's system is reported, none hidden
            if raise_user_errors and not isinstance(exc, AssertionError) and user_code_failure(exc) is not None:
                raise
            text = (
                f"{check.__name__}: {type(exc).__name__}: {exc}"
                if not isinstance(exc, AssertionError)
                else f"{check.__name__}: {exc}"
            )
            (advisories if warn is not None and check in ADVISORY_CHECKS else failed).append(text)
    for text in advisories if not failed else ():  # a refused system gets its refusal alone
        warn(text)
    if failed:
        raise ContractViolation(
            f"{getattr(system, 'name', type(system).__name__)} does not meet the System "
            "contract:\n  " + "\n  ".join(failed)
        )


def assert_claim_holds(
    system: Any,
    secret: Any = None,
    secret_prime: Any = None,
    *,
    samples: int = 20_000,
    fail_on: Sequence[str] = ("violated",),
    **audit_options,
) -> Any:
    """Audit ``system`` (at its first canary pair unless the secrets are given) and return the result; raise
    :class:`ClaimNotShown`, listing every row, when the family verdict is in ``fail_on`` ("violated",
    "unprotected channel", "inconclusive")."""
    from audit.engine.system_audit import audit_system

    refused = {Verdict(v) for v in fail_on}
    if secret is None or secret_prime is None:
        secret, secret_prime = first_pair(system)
    result = audit_system(system, secret, secret_prime, samples=samples, **audit_options)
    if Verdict(result.verdict) in refused:
        lines = [f"{r.channel}: {r.verdict} — {r.verdict_reason}" for r in result.rows]
        raise ClaimNotShown(
            f"{result.system}: {result.verdict} at {samples:,} per side:\n  " + "\n  ".join(lines), result
        )
    return result
