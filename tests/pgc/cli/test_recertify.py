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


def test_a_row_saves_its_fitted_statistic_and_recertify_checks_the_fit_against_it(tmp_path, capsys):
    import numpy as np

    from audit import scorer_from_witness

    code, first = _audit(tmp_path, "--pair", "leaking")
    data = json.loads(first.read_text())
    row = data["rows"][0]
    score = scorer_from_witness(row["witness"])  # the certified statistic, rebuilt from the result alone
    rng = np.random.default_rng(3)
    same, scaled = rng.standard_normal((4_000, 50)), 1.3 * rng.standard_normal((4_000, 50))
    hits = [(score(y) >= row["threshold"]).mean() for y in (same, scaled)]  # the event favours the first secret
    assert hits[0] > 0.99 and hits[1] < 0.7, hits
    assert main(["audit", "recertify", str(first), "--out", str(tmp_path / "ok.json"), "--no-progress"]) == 0
    assert "the saved fit reproduced" in capsys.readouterr().out
    row["witness"]["parameters"]["sign"] = {"number": -row["witness"]["parameters"]["sign"]["number"]}
    first.write_text(json.dumps(data))
    assert main(["audit", "recertify", str(first), "--out", str(tmp_path / "x.json"), "--no-progress"]) == 2
    assert "parameters other than the saved ones" in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists()
    del row["witness"]  # a result written without one: checked by its statistic and threshold, and said so
    first.write_text(json.dumps(data))
    assert main(["audit", "recertify", str(first), "--out", str(tmp_path / "y.json"), "--no-progress"]) == 0
    assert "no saved fit: checked by its statistic and threshold" in capsys.readouterr().out


def test_pair_any_and_train_fraction_from_the_command_line(tmp_path, capsys):
    code, first = _audit(tmp_path, "--pair", "any", "--train-fraction", "0.5")
    assert code == 0
    data = json.loads(first.read_text())
    assert data["pair"].startswith("leaking (chosen among 2 named pairs")
    with pytest.raises(SystemExit) as exit_code:
        main(["audit", "system", "x.py:make", "--train-fraction", "1.5"])
    assert exit_code.value.code == 2 and "not in (0, 1]" in capsys.readouterr().err


def test_recertify_finds_the_audited_file_from_any_folder_and_refuses_a_changed_one(tmp_path, capsys, monkeypatch):
    project = tmp_path / "project"
    project.mkdir()
    (project / "leak.py").write_text(LEAK)
    monkeypatch.chdir(project)
    first = project / "first.json"
    argv = ["audit", "system", "leak.py:make", "--pair", "leaking", "--samples", "2000", "--no-progress"]
    assert main([*argv, "--out", str(first)]) == 0
    data = json.loads(first.read_text())
    assert data["train_per_side"] == 1000 and data["train_fraction"] == 0.25
    as_module = project / "module.json"  # the same file named as a module of the current folder
    assert main([*argv[:2], "leak:make", *argv[3:], "--out", str(as_module)]) == 0
    monkeypatch.chdir(tmp_path)  # elsewhere: the spec's relative path points at no file
    for result in (first, as_module):
        again = tmp_path / f"again-{result.stem}.json"
        assert main(["audit", "recertify", str(result), "--out", str(again), "--no-progress"]) == 0
        assert json.loads(again.read_text())["recertification"]["rows"][0]["fresh_verdict"] == "violated"
    (project / "leak.py").write_text(LEAK.replace("1.3 if secret", "1.4 if secret"))
    assert main(["audit", "recertify", str(first), "--out", str(tmp_path / "x.json"), "--no-progress"]) == 2
    assert "has changed since the audit" in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists()


def test_recertify_counts_a_sequential_audits_deciding_stage_on_fresh_releases(tmp_path, capsys):
    code, first = _audit(tmp_path, "--pair", "leaking", "--samples", "auto:30000")
    assert code == 0
    recorded = json.loads(first.read_text())
    assert recorded["sequential"]["decision"] == "violated"
    again = tmp_path / "again.json"
    assert main(["audit", "recertify", str(first), "--out", str(again), "--no-progress"]) == 0
    fresh = json.loads(again.read_text())
    row_old, row_new = recorded["rows"][0], fresh["rows"][0]
    assert (row_old["statistic"], row_old["threshold"]) == (row_new["statistic"], row_new["threshold"])
    assert fresh["confidence"] == recorded["confidence"]  # the deciding stage's level
    counts = ("false_positives", "false_negatives")
    assert [row_old[k] for k in counts] != [row_new[k] for k in counts]  # fresh certification releases
    assert fresh["recertification"]["rows"][0]["fresh_verdict"] == "violated"


def test_named_pairs_are_searched_at_every_stage_of_an_audit_sampled_until_decisive(tmp_path):
    code, first = _audit(tmp_path, "--pair", "any", "--samples", "auto:30000")
    recorded = json.loads(first.read_text())
    assert code == 0 and recorded["sequential"]["decision"] == "violated"
    assert recorded["pair"].startswith("leaking (chosen among 2 named pairs")


def test_recertify_takes_neither_seed_nor_confidence_and_options_name_their_command(tmp_path, capsys):
    for option in ("--seed", "--confidence"):
        with pytest.raises(SystemExit) as exit_code:
            main(["audit", "recertify", "r.json", option, "5"])
        assert exit_code.value.code == 2
        assert f"pgc audit recertify: error: unrecognized arguments: {option} 5" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["audit", "system", "x.py:make", "--train-fractoin", "0.3"])
    assert "did you mean --train-fraction?" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_code:
        main(["audit", "system", "x.py:make", "--pair", "any", "--secrets", "0", "1"])
    assert exit_code.value.code == 2 and "not allowed with argument --pair" in capsys.readouterr().err


def test_a_mistyped_subcommand_or_system_names_the_closest(capsys):
    with pytest.raises(SystemExit) as exit_code:
        main(["audit", "sytem", "x.py:make"])
    assert exit_code.value.code == 2 and "did you mean system?" in capsys.readouterr().err
    assert main(["audit", "system", "toy-laplace-cont", "--no-progress"]) == 2
    assert "did you mean toy-laplace-count?" in capsys.readouterr().err
    assert main(["audit", "system", "leak.py", "--no-progress"]) == 2
    assert "name the factory in the file too, as leak.py:FACTORY" in capsys.readouterr().err


def test_a_sequential_audit_with_its_own_certification_seed_recertifies_its_later_deciding_stage(tmp_path):
    """Its earlier stages' certification releases join the later stages' selection: they are drawn as recorded."""
    (tmp_path / "leak.py").write_text(LEAK.replace("1.3 if secret", "1.1 if secret").replace("(n, 50)", "(n, 5)"))
    first, again = tmp_path / "first.json", tmp_path / "again.json"
    spec = f"{tmp_path / 'leak.py'}:make"
    argv = ["audit", "system", spec, "--pair", "leaking", "--samples", "auto:70000", "--certification-seed", "7"]
    assert main([*argv, "--out", str(first), "--no-progress"]) == 0
    stages = json.loads(first.read_text())["sequential"]["stages"]
    assert len(stages) == 3 and stages[-1]["decision"] == "violated"
    assert main(["audit", "recertify", str(first), "--out", str(again), "--no-progress"]) == 0
    fresh = json.loads(again.read_text())
    assert fresh["sequential"]["stages"][-1]["samples_per_side"] == stages[-1]["samples_per_side"]


def test_recertify_names_files_as_the_loader_does_and_checks_the_stage_and_the_loaded_code(tmp_path):
    from pgc.cli.commands.audit import recertify
    from pgc.cli.provenance import file_sha256
    from pgc.errors import UserError

    (tmp_path / "leak.py").write_text(LEAK)
    record = {"spec": "leak.py:make", "path": str(tmp_path / "leak.py"), "sha256": file_sha256(tmp_path / "leak.py")}
    result = {"provenance": {"user_files": [record]}, "argv": ["audit", "system", "./leak.py:make", "--x=1"]}
    argv = recertify.located_argv(["audit", "system", "./leak.py:make"], result, tmp_path / "r.json")
    assert argv[2] == f"{(tmp_path / 'leak.py').resolve()}:make"
    assert recertify.recorded_certification_seed({"argv": ["--certification-seed", "7"]}) == 7
    assert recertify.recorded_certification_seed({"argv": ["--certification-seed=3"]}) == 3
    assert recertify.recorded_certification_seed(result) is None

    class Fresh:
        sequential = type("S", (), {"stages": [type("Stage", (), {"samples_per_side": 20_000, "alpha": 0.01})()]})

    recorded = {"sequential": {"stages": [{"samples_per_side": 10_000, "alpha": 0.01}]}}
    with pytest.raises(UserError, match="is not the recorded one"):
        recertify.check_stage(recorded, Fresh(), tmp_path / "r.json")

    import types

    from pgc.usercode import note_user_module

    (tmp_path / "changed.py").write_text(LEAK.replace("1.3", "1.4"))  # imported under the recorded module's name
    note_user_module(types.SimpleNamespace(__file__=str(tmp_path / "changed.py")), "leak_module:make")
    recertify.check_loaded_files(result, tmp_path / "r.json", ["audit", "system", "other:make"])  # not re-run
    with pytest.raises(UserError, match="not the code the audit read"):
        recertify.check_loaded_files(result, tmp_path / "r.json", ["audit", "system", "leak_module:make"])
