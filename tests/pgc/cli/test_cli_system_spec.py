"""``pgc audit --system SPEC`` end to end for the three SPEC forms, and a user's error (one line, exit 2) beside
a user's own code raising (their frames, one line naming the call, exit 2); tests/pgc/cli/test_user_code.py has
the rest of that line."""

from __future__ import annotations

import json
import textwrap

import pytest

from pgc.cli.main import main

COIN = textwrap.dedent("""
    import numpy as np
    from pgc.contracts import PrivacyClaim

    class Coin:
        name, channels, claim = "coin", ("bit",), PrivacyClaim(1.0, 0.0, ("bit",))

        def release(self, secret, n, rng, *, broadcast=None):
            p = 0.6 if secret else 0.4  # ln(0.6/0.4) = 0.405 < 1: consistent
            return {"bit": (rng.random((n, 1)) < p).astype(float)}

        def canaries(self):
            return {"0 vs 1": (0, 1)}

    def make():
        return Coin()

    def broken():
        return len(3)  # a bug in the user's factory: TypeError
""")


def audit(spec, out, *extra):
    return main(["audit", "--system", spec, "--samples", "2000", "--out", str(out), "--no-progress", *extra])


def test_a_module_in_the_current_folder(tmp_path, monkeypatch):
    (tmp_path / "coin_cli_sys.py").write_text(COIN)
    monkeypatch.chdir(tmp_path)
    assert audit("coin_cli_sys:make", tmp_path / "a.json") == 0
    result = json.loads((tmp_path / "a.json").read_text())
    assert result["system"] == "coin" and result["rows"][0]["channel"] == "bit"


def test_a_file_path_and_its_hash_in_the_provenance(tmp_path):
    import hashlib

    import pgc.schemas as schemas

    path = tmp_path / "coin_file_sys.py"
    path.write_text(COIN)
    assert audit(f"{path}:make", tmp_path / "b.json") == 0
    result = schemas.load(json.loads((tmp_path / "b.json").read_text()))
    provenance = result.provenance
    assert provenance is not None and provenance.pgc_audit and provenance.python
    names = {lib.name for lib in provenance.libraries}
    assert {"numpy", "scipy", "statsmodels"} <= names
    (user_file,) = [f for f in provenance.user_files if f.path == str(path.resolve())]
    assert user_file.spec == f"{path}:make"
    assert user_file.sha256 == hashlib.sha256(COIN.encode()).hexdigest()


def test_a_registered_name(tmp_path):
    assert audit("toy-laplace-count", tmp_path / "c.json") == 0
    assert json.loads((tmp_path / "c.json").read_text())["system"] == "laplace-count"


@pytest.mark.parametrize(
    "spec, says",
    [
        ("nope_no_module_here:make", "no module 'nope_no_module_here'"),
        ("not-a-registered-system", "not a registered name"),
        ("./missing_file.py:make", "no file"),
    ],
)
def test_a_bad_spec_is_one_line_and_exit_2(tmp_path, capsys, spec, says):
    assert audit(spec, tmp_path / "d.json") == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and says in err and not (tmp_path / "d.json").exists()


def test_a_type_error_in_the_users_factory_is_theirs(tmp_path, capsys):
    (tmp_path / "coin_bug_sys.py").write_text(COIN)
    assert audit(f"{tmp_path / 'coin_bug_sys.py'}:broken", tmp_path / "e.json") == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "bug in pgc-audit" not in err
    line = COIN.splitlines().index("    return len(3)  # a bug in the user's factory: TypeError") + 1
    assert f'coin_bug_sys.py", line {line}, in broken' in err and "len(3)" in err  # the user's frame, shown
    assert err.rstrip().splitlines()[-1] == (
        f"pgc audit: error in your code: {tmp_path / 'coin_bug_sys.py'}:broken "
        "→ broken raised TypeError: object of type 'int' has no len()"
    )
    assert not (tmp_path / "e.json").exists()


@pytest.mark.parametrize("samples", ["2000", "auto:20000"])
def test_a_system_audit_is_written_from_its_typed_result_never_parsed_back(tmp_path, monkeypatch, samples):
    """The one write path: the command writes the audit's typed result; no record is parsed from a dict on the way
    (the schemas' parsing raises while the command runs)."""
    import pgc.schemas as schemas
    from pgc.schemas import base

    def refuse(cls, data, where=""):
        raise AssertionError(f"{cls.__name__} parsed from a dict while the command ran")

    (tmp_path / "coin_typed_sys.py").write_text(COIN)
    monkeypatch.setattr(base.Record, "from_dict", classmethod(refuse))
    spec = f"{tmp_path / 'coin_typed_sys.py'}:make"
    out = tmp_path / "typed.json"
    assert main(["audit", "system", spec, "--samples", samples, "--out", str(out), "--no-progress"]) == 0
    monkeypatch.undo()
    result = schemas.load(json.loads(out.read_text()))
    assert isinstance(result, schemas.SystemAuditResult) and result.rows[0].channel == "bit"
    assert result.argv is not None and result.argv[:2] == ["audit", "system"] and result.provenance is not None
    assert (result.sequential is not None) == samples.startswith("auto")
