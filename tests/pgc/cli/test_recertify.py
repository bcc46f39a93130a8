"""``pgc audit recertify RESULT``: a System audit's chosen tests re-fitted from its seed and counted on fresh releases;
``--pair any`` and ``--train-fraction`` on the command line."""

import json
import textwrap

import pytest

from pgc.cli.main import main

LEAK = textwrap.dedent("""
    import numpy as np
    from pgc.contracts import PrivacyClaim

    class ScaleLeak:
        name, channels, claim = "scale-leak", ("update",), PrivacyClaim(1.0, 1e-5, ("update",))

        def canaries(self):
            return {"same": (0, 0), "leaking": (0, 1)}

        def release(self, secret, n, rng, *, broadcast=None):
            return {"update": (1.3 if secret else 1.0) * rng.standard_normal((n, 50))}

    def make():
        return ScaleLeak()
""")


def _audit(tmp_path, *extra):
    (tmp_path / "leak.py").write_text(LEAK)
    out = tmp_path / "first.json"
    code = main(
        [
            "audit",
            "system",
            f"{tmp_path / 'leak.py'}:make",
            "--samples",
            "2000",
            "--out",
            str(out),
            "--no-progress",
            *extra,
        ]
    )
    return code, out


def test_recertify_reproduces_the_selection_and_counts_fresh_releases(tmp_path, capsys):
    code, first = _audit(tmp_path, "--pair", "leaking")
    assert code == 0
    again = tmp_path / "again.json"
    assert main(["audit", "recertify", str(first), "--out", str(again), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "on fresh releases" in printed
    old, new = json.loads(first.read_text()), json.loads(again.read_text())
    row_old, row_new = old["rows"][0], new["rows"][0]
    assert (row_old["statistic"], row_old["threshold"]) == (row_new["statistic"], row_new["threshold"])
    assert row_old["false_negatives"] != row_new["false_negatives"]  # fresh certification releases
    assert new["recertification"]["rows"][0]["fresh_verdict"] == "violated"


def test_recertify_refuses_a_result_whose_selection_does_not_reproduce(tmp_path, capsys):
    code, first = _audit(tmp_path, "--pair", "leaking")
    data = json.loads(first.read_text())
    data["rows"][0]["threshold"] += 1.0
    first.write_text(json.dumps(data))
    assert main(["audit", "recertify", str(first), "--out", str(tmp_path / "x.json"), "--no-progress"]) == 2
    assert "did not reproduce its selection" in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists()
    (tmp_path / "other.json").write_text(json.dumps({"kind": "audit", "command": "pgc audit self-test"}))
    assert main(["audit", "recertify", str(tmp_path / "other.json"), "--no-progress"]) == 2
    assert "recertify reads System audits" in capsys.readouterr().err


def test_pair_any_and_train_fraction_from_the_command_line(tmp_path, capsys):
    code, first = _audit(tmp_path, "--pair", "any", "--train-fraction", "0.5")
    assert code == 0
    data = json.loads(first.read_text())
    assert data["pair"].startswith("leaking (chosen among 2 named pairs")
    with pytest.raises(SystemExit) as exit_code:
        main(["audit", "system", "x.py:make", "--train-fraction", "1.5"])
    assert exit_code.value.code == 2 and "not in (0, 1]" in capsys.readouterr().err
