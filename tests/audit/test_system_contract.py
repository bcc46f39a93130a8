"""One contract suite that every registered System runs (as Optuna runs one suite over every storage),
and the three forms of a ``--system`` SPEC."""

from __future__ import annotations

import sys
import textwrap

import numpy as np
import pytest

from audit.testing import ClaimNotShown, ContractViolation, assert_claim_holds, check_system
from pgc.systems import SYSTEMS, PrivacyClaim, SystemSpecError, make_system, system_factory


@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_every_registered_system_meets_the_contract(name):
    check_system(make_system(name))  # the suite users run on theirs (audit.testing)


def test_the_suite_names_every_failed_check():
    class Broken:
        name, channels, claim = "broken", ("a", "a"), PrivacyClaim(1.0, 0.0, ("a",))

        def release(self, secret, n, rng, *, broadcast=None):
            return {"a": np.full((n + 1, 1), np.nan)}

        def canaries(self):
            return {"0 vs 1": (0, 1)}

    with pytest.raises(ContractViolation) as caught:
        check_system(Broken())
    text = str(caught.value)
    assert "check_identity: channels must be distinct" in text and "check_releases" in text
    assert "check_bad_secret" in text


def test_assert_claim_holds_fails_with_the_rows():
    from pgc.toysystems import GaussianVectorSystem

    assert assert_claim_holds(GaussianVectorSystem(1.0, 1e-5), samples=5_000).verdict != "violated"
    with pytest.raises(ClaimNotShown, match=r"value: violated — μ_LB") as caught:
        assert_claim_holds(GaussianVectorSystem(1.0, 1e-5, sensitivity_factor=0.5), samples=5_000)
    assert caught.value.result.verdict == "violated"


# --- the --system SPEC ------------------------------------------------------------------------------

USER_SYSTEM = textwrap.dedent("""
    import numpy as np
    from pgc.contracts import PrivacyClaim

    class Coin:
        name, channels, claim = "coin", ("bit",), PrivacyClaim(1.0, 0.0, ("bit",))

        def release(self, secret, n, rng, *, broadcast=None):
            return {"bit": (rng.random((n, 1)) < (0.7 if secret else 0.3)).astype(float)}

    def make(**settings):
        return Coin()
""")


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


@pytest.mark.parametrize(
    "spec, reason",
    [
        ("no-such-system", "not a registered name"),
        ("no_such_module_xyz:make", "no module 'no_such_module_xyz'"),
        ("json:no_such_factory", "has no 'no_such_factory'"),
        ("json:__name__", "is not callable"),
        ("/no/such/file.py:make", "no file"),
        ("", "needs a registered name"),
    ],
)
def test_bad_specs_say_which_reading_failed(spec, reason):
    with pytest.raises(SystemSpecError, match=reason):
        system_factory(spec)


def test_a_file_that_fails_to_load_names_the_error(tmp_path):
    path = tmp_path / "broken.py"
    path.write_text("raise RuntimeError('boom')\n")
    with pytest.raises(SystemSpecError, match="loading .*broken.py failed: RuntimeError: boom"):
        system_factory(f"{path}:make")
