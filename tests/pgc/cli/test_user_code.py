"""Whose error it is: an exception raised in a user's own code (their factory, ``release``, a module their file
imports, a Flower ``client_fn``) is theirs — their frames, one line naming the call, exit 2 — and one raised in
pgc-audit's own packages is a bug of ours (traceback, where to report, exit 3); the contract checks a user's
pytest runs also run before a CLI audit; Ctrl-C is one line and exit 130."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from audit.testing import check_randomness
from pgc.cli.main import main
from pgc.contracts import PrivacyClaim
from pgc.errors import ExitCode
from pgc.usercode import user_code_failure

REPO = Path(__file__).resolve().parents[3]

sys.path.insert(0, str(REPO / "tests"))
try:
    import user_code_cases  # the user's files of the walk (scripts/reliability_run.py runs every case of it)
finally:
    sys.path.remove(str(REPO / "tests"))


@pytest.fixture()
def user_folder(tmp_path, monkeypatch):
    user_code_cases.lay_out(tmp_path)  # tmp_path/mine/{base,claims}.py: claims.py imports its sibling
    (tmp_path / "base.py").unlink()  # only mine/ holds the sibling: it must be found from the file's own folder
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    for name in [m for m in sys.modules if m == "base" or m.startswith("_pgc_user_system_claims")]:
        monkeypatch.delitem(sys.modules, name)
    return tmp_path / "mine"


def audit(spec, out, *extra):
    return main(["audit", "--system", spec, "--samples", "2000", "--out", str(out), "--no-progress", *extra])


def test_a_file_imports_its_sibling_modules(user_folder, tmp_path):
    assert audit("mine/claims.py:make", tmp_path / "a.json") == ExitCode.OK
    assert json.loads((tmp_path / "a.json").read_text())["system"] == "randomized-response"


@pytest.mark.parametrize(
    "factory, call, error",
    [
        ("raises", "mine/claims.py:raises → raises", "RuntimeError: cannot build"),
        ("divides", "mine/claims.py:divides → Divides.release", "ZeroDivisionError: division by zero"),
    ],
)
def test_the_users_exception_is_theirs(user_folder, tmp_path, capsys, factory, call, error):
    assert audit(f"mine/claims.py:{factory}", tmp_path / "b.json") == ExitCode.USAGE
    err = capsys.readouterr().err
    assert "Traceback" not in err and "bug in pgc-audit" not in err
    assert err.startswith("in your code (most recent call last):") and "claims.py" in err
    assert str(REPO) not in err  # none of pgc-audit's frames
    assert err.rstrip().splitlines()[-1] == f"pgc audit: error in your code: {call} raised {error}"
    assert not (tmp_path / "b.json").exists()


def test_a_secret_the_system_refuses_is_the_users_error(user_folder, tmp_path, capsys):
    assert audit("mine/claims.py:make", tmp_path / "c.json", "--secrets", "5", "7") == ExitCode.USAGE
    last = capsys.readouterr().err.rstrip().splitlines()[-1]
    assert last == (
        "pgc audit: error in your code: mine/claims.py:make → RandomizedResponse.release (mine/base.py) "
        "raised ValueError: unknown secret 5"
    )


@pytest.mark.parametrize(
    "factory, says",
    [
        ("typo", "'anser' (did you mean 'answer'?) is not one of 'answer'"),
        ("the_class", "RandomizedResponse is a class, not a System: the factory must return an instance"),
        ("needs", "cannot be called with no settings: missing a required argument: 'epsilon'"),
    ],
)
def test_what_check_system_refuses_the_cli_refuses_in_one_line(user_folder, tmp_path, capsys, factory, says):
    assert audit(f"mine/claims.py:{factory}", tmp_path / "d.json") == ExitCode.USAGE
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("pgc audit: error: ") and says in err, err
    assert not (tmp_path / "d.json").exists()


def test_a_bug_of_ours_keeps_its_traceback_and_exit_3(user_folder, tmp_path, capsys, monkeypatch):
    import pgc.cli.commands.audit.system as system_command

    monkeypatch.setattr(system_command, "_claim_text", None)  # calling it raises TypeError in our own frame
    assert audit("mine/claims.py:make", tmp_path / "e.json") == ExitCode.INTERNAL
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and "TypeError" in err
    assert err.rstrip().splitlines()[-1].startswith("pgc audit: this is a bug in pgc-audit")


def test_an_out_ending_in_a_separator_is_a_folder(user_folder, tmp_path):
    assert audit("mine/claims.py:make", "new/") == ExitCode.OK
    written = list((tmp_path / "new").iterdir())
    assert len(written) == 1 and written[0].suffix == ".json"
    assert json.loads(written[0].read_text())["system"] == "randomized-response"


def test_classification_follows_the_raising_frame_through_libraries():
    def users_code():  # this test file is outside pgc-audit's packages: the user's
        return np.asarray([[1, 2], [3]], dtype=float)  # raises inside numpy, called from here

    with pytest.raises(ValueError) as caught:
        users_code()
    failure = user_code_failure(caught.value)
    assert failure is not None and failure.frames[-1].name == "users_code"  # numpy's frames are left out
    assert "→ test_classification_follows_the_raising_frame_through_libraries" in failure.call
    with pytest.raises(Exception) as ours:
        PrivacyClaim.of("not a claim")  # raised in pgc-audit's own frame
    assert user_code_failure(ours.value) is None


def test_a_project_scripts_frames_are_ours_and_only_the_factorys_are_the_users(tmp_path, capsys):
    """scripts/ is the repository's own: a factory given to a script raises, and the report shows the factory's frame,
    none of the script's, and exits 2; a script's own bug is not the user's."""
    import importlib.util

    root = Path(__file__).resolve().parents[3]
    spec = importlib.util.spec_from_file_location("one_run_ideal_canaries", root / "scripts/one_run_ideal_canaries.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    (tmp_path / "theirs.py").write_text("def make(records=10):\n    raise ValueError('no data at ' + str(records))\n")
    assert script.main([f"{tmp_path / 'theirs.py'}:make", "--canaries", "1", "--setting", "records=3"]) == 2
    err = capsys.readouterr().err
    assert "theirs.py" in err and "no data at 3" in err and 'one_run_ideal_canaries.py"' not in err
    namespace: dict = {}  # a function whose frame lies in scripts/: raised there, the failure is ours
    exec(compile("def broken():\n    return 1 / 0\n", str(root / "scripts" / "a_script.py"), "exec"), namespace)
    with pytest.raises(ZeroDivisionError) as caught:
        namespace["broken"]()
    assert user_code_failure(caught.value) is None


def test_determinism_check_reads_nan_as_an_absent_entry():
    class WithAbsentEntries:
        name, channels, claim = "nan", ("x",), PrivacyClaim(1.0, 0.0, ("x",))

        def release(self, secret, n, rng, *, broadcast=None):
            x = rng.laplace(size=(n, 2))
            x[:, 1] = np.nan
            return {"x": x}

        def canaries(self):
            return {"0 vs 1": (0, 1)}

    check_randomness(WithAbsentEntries())  # same rng, same release: NaN compares equal to NaN


def _walk_cases(*names):
    return user_code_cases, [c for c in user_code_cases.CASES if c.name in names]


def test_ctrl_c_is_one_line_and_exit_130(tmp_path):
    # during start-up (the command's imports), during the audit itself, and swallowed by a bare except
    cases, chosen = _walk_cases(
        "Ctrl-C during start-up", "Ctrl-C during the audit", "Ctrl-C that the user's code swallows"
    )
    for i, case in enumerate(chosen):
        result = cases.run_case(case, tmp_path / f"walk{i}")
        assert result.problems == [] and result.err.strip().splitlines() == ["pgc audit: interrupted"], result.err


def test_a_flower_client_fn_raising_is_the_users(tmp_path):
    cases, (case,) = _walk_cases("a Flower client_fn raises KeyError")
    result = cases.run_case(case, tmp_path / "walk")
    assert result.problems == [] and result.rc == ExitCode.USAGE, result.err
