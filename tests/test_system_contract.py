"""One contract suite that every registered System runs (as Optuna runs one suite over every storage),
and the three forms of a ``--system`` SPEC."""

from __future__ import annotations

import math
import sys
import textwrap

import numpy as np
import pytest
from systems import SYSTEMS, PrivacyClaim, System, SystemSpecError, make_system, system_factory
from systems.contract import ALL

SMALL = (1, 7)  # release sizes every system must honour


@pytest.fixture(scope="module", params=sorted(SYSTEMS))
def system(request):
    return make_system(request.param)


def first_pair(system):
    canaries = system.canaries() if callable(getattr(system, "canaries", None)) else {}
    assert canaries, f"{system.name} names no canary pairs"
    return next(iter(canaries.values()))


def draw(system, secret, n, seed, broadcast=None):
    return system.release(secret, n, np.random.default_rng(np.random.SeedSequence(seed)), broadcast=broadcast)


def test_names_claim_and_channels(system):
    assert isinstance(system, System)
    assert isinstance(system.name, str) and system.name
    assert isinstance(system.claim, PrivacyClaim)
    channels = tuple(system.channels)
    assert channels and len(set(channels)) == len(channels) and all(isinstance(c, str) and c for c in channels)
    assert set(system.claim.covers) <= set(channels) | {ALL}, "a claim covers only channels the system releases"
    if callable(getattr(system, "claim_for", None)):
        for channel in channels:
            assert isinstance(system.claim_for(channel), PrivacyClaim)


@pytest.mark.parametrize("n", SMALL)
def test_release_shapes(system, n):
    secret, secret_prime = first_pair(system)
    for s in (secret, secret_prime):
        out = draw(system, s, n, 1)
        assert set(out) >= set(system.channels) - {ALL}
        for channel, values in out.items():
            arr = np.asarray(values, dtype=np.float64)
            arr = arr[:, None] if arr.ndim == 1 else arr
            assert arr.ndim == 2 and arr.shape[0] == n, f"{system.name}.{channel}: shape {arr.shape}"
            assert np.all(np.isfinite(arr)), f"{system.name}.{channel} releases NaN or inf"


def test_releases_come_only_from_the_generator(system):
    secret, _ = first_pair(system)
    a, b = draw(system, secret, 7, 5), draw(system, secret, 7, 5)
    for channel in a:
        np.testing.assert_array_equal(np.asarray(a[channel]), np.asarray(b[channel]))
    if math.isfinite(system.claim.epsilon) and system.claim.covers:
        c = draw(system, secret, 7, 6)
        covered = [ch for ch in system.claim.covers if ch in a and ch != ALL]
        assert any(not np.array_equal(np.asarray(a[ch]), np.asarray(c[ch])) for ch in covered), \
            f"{system.name} claims privacy, yet its covered channels do not vary with the seed"


def test_canaries_and_descriptions(system):
    for name, pair in system.canaries().items():
        assert isinstance(name, str) and name and len(pair) == 2
    describe = getattr(system, "describe_secret", None)
    if callable(describe):
        text = describe(first_pair(system)[0])
        assert isinstance(text, str) and 0 < len(text) <= 200


def test_accounting_members(system):
    if callable(getattr(system, "dp_event", None)):
        import dp_accounting

        event = system.dp_event()  # None: no noise to account for beside the claim (a pure-ε mechanism)
        assert event is None or isinstance(event, dp_accounting.DpEvent)
    mu = system.claim.gdp_mu
    assert mu is None or (math.isfinite(mu) and mu > 0)
    profile = system.claim.privacy_profile
    if profile is not None:  # a δ(ε) curve: δ does not grow with ε, and it contains the claim's (ε, δ)
        deltas = [d for _, d in sorted(profile)]
        assert all(a >= b for a, b in zip(deltas, deltas[1:]))
        at_or_below = [d for e, d in profile if e <= system.claim.epsilon]
        assert at_or_below and min(at_or_below) >= system.claim.delta * (1 - 1e-6) or system.claim.delta == 0


def test_offered_statistics_score_releases(system):
    offer = getattr(system, "audit_statistics", None)
    if not callable(offer):  # an optional member
        return
    secret, secret_prime = first_pair(system)
    for channel in system.channels:
        pos, neg = draw(system, secret, 50, 3)[channel], draw(system, secret_prime, 50, 4)[channel]
        for statistic in offer(channel):
            assert isinstance(statistic.name, str) and statistic.name
            scorer = statistic.fit(np.asarray(pos, dtype=float), np.asarray(neg, dtype=float))
            if scorer is not None:
                scores = np.asarray(scorer(np.asarray(pos, dtype=float)))
                assert scores.shape == (50,) and np.all(np.isfinite(scores))


def test_broadcast_space_is_a_box_that_releases(system):
    space = getattr(system, "broadcast_space", None)
    if space is None:  # an optional member: a system without it has nothing searchable
        return
    lower, upper = (np.asarray(x, dtype=np.float64) for x in space)
    assert lower.shape == upper.shape and lower.ndim == 1 and np.all(lower < upper)
    out = draw(system, first_pair(system)[0], 3, 2, broadcast=(lower + upper) / 2)
    assert all(np.asarray(v).shape[0] == 3 for v in out.values())


def test_a_bad_secret_is_refused(system):
    with pytest.raises(ValueError):
        draw(system, object(), 2, 0)


# --- the --system SPEC ------------------------------------------------------------------------------

USER_SYSTEM = textwrap.dedent('''
    import numpy as np
    from systems.contract import PrivacyClaim

    class Coin:
        name, channels, claim = "coin", ("bit",), PrivacyClaim(1.0, 0.0, ("bit",))

        def release(self, secret, n, rng, *, broadcast=None):
            return {"bit": (rng.random((n, 1)) < (0.7 if secret else 0.3)).astype(float)}

    def make(**settings):
        return Coin()
''')


def test_a_registered_name_resolves():
    assert system_factory("toy-laplace-count")().name == "laplace-count"


def test_a_module_in_the_current_folder_resolves(tmp_path, monkeypatch):
    (tmp_path / "mycoin.py").write_text(USER_SYSTEM)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "mycoin", raising=False)
    assert make_system("mycoin:make").name == "coin"
    assert "mycoin" in sys.modules and str(tmp_path) not in sys.path  # the folder is not left on the path


def test_a_file_path_resolves(tmp_path):
    path = tmp_path / "sub" / "coin_system.py"
    path.parent.mkdir()
    path.write_text(USER_SYSTEM)
    assert make_system(f"{path}:make").name == "coin"


@pytest.mark.parametrize("spec, reason", [
    ("no-such-system", "not a registered name"),
    ("no_such_module_xyz:make", "no module 'no_such_module_xyz'"),
    ("json:no_such_factory", "has no 'no_such_factory'"),
    ("json:__name__", "is not callable"),
    ("/no/such/file.py:make", "no file"),
    ("", "needs a registered name"),
])
def test_bad_specs_say_which_reading_failed(spec, reason):
    with pytest.raises(SystemSpecError, match=reason):
        system_factory(spec)


def test_a_file_that_fails_to_load_names_the_error(tmp_path):
    path = tmp_path / "broken.py"
    path.write_text("raise RuntimeError('boom')\n")
    with pytest.raises(SystemSpecError, match="loading .*broken.py failed: RuntimeError: boom"):
        system_factory(f"{path}:make")
