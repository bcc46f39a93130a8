"""`pgc audit SUBCOMMAND TARGET`: each subcommand's own options and defaults, and the mode flags
(`pgc audit --system SPEC ...`) read as the subcommand they name."""

from __future__ import annotations

import argparse
import json
import re

import pytest

from pgc.cli.commands.audit import AuditCommand
from pgc.cli.commands.audit.legacy import rewrite
from pgc.cli.commands.audit.subcommands import SUBCOMMANDS
from pgc.cli.main import main
from pgc.errors import UserError


def _parser(name: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=f"pgc audit {name}")
    SUBCOMMANDS[name].add_arguments(parser)
    return parser


def _options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {a.option_strings[-1]: a for a in parser._actions if a.option_strings and a.dest != "help"}


def test_every_subcommand_of_the_issue_exists():
    assert set(SUBCOMMANDS) == {
        "system",
        "mechanism",
        "run",
        "one-run",
        "flower",
        "flower-one-run",
        "ldp",
        "nvflare",
        "opacus",
        "opacus-one-run",
        "self-test",
        "adversarial-model",
        "adversarial-curve",
        "recertify",
    }


@pytest.mark.parametrize("name", sorted(SUBCOMMANDS))
def test_a_subcommand_takes_at_most_25_options(name):
    assert len(_options(_parser(name))) <= 25


@pytest.mark.parametrize("name", sorted(SUBCOMMANDS))
def test_samples_default_is_stated_once_and_is_the_default(name):
    options = _options(_parser(name))
    if name in ("flower-one-run", "opacus-one-run", "recertify"):  # the canaries are the sample; the result's own
        assert "--samples" not in options
        return
    samples = options["--samples"]
    if samples.default is None:  # the one-run audit's default follows the run's canaries
        assert "default max(40,000, 4 × the canary submissions)" in samples.help
    else:
        assert samples.help.count("default") == 1 + ("auto[:BUDGET]" in samples.help)  # the budget's own default
        assert f"default {samples.default:,}" in samples.help
    others = [a.help or "" for a in options.values() if a is not samples]
    assert not any("samples" in h and "default" in h for h in others), others


def test_shared_options_are_defined_once_for_every_subcommand():
    shared = {"--out", "--seed", "--confidence", "--fail-on", "--force", "--no-progress"}
    for name, subcommand in SUBCOMMANDS.items():
        seeded = shared if subcommand.seeded else shared - {"--seed", "--confidence"}
        assert seeded <= set(_options(_parser(name))), name
        assert subcommand.seeded or not {"--seed", "--confidence"} & set(_options(_parser(name))), name
    assert [name for name, s in SUBCOMMANDS.items() if not s.seeded] == ["recertify"]
    engines = {name for name in SUBCOMMANDS if "--engine" in _options(_parser(name))}
    assert engines == {"run", "self-test", "adversarial-model", "adversarial-curve"}


@pytest.mark.parametrize(
    "old, new",
    [
        (["--system", "toy-laplace-count", "--samples", "2000"], ["system", "toy-laplace-count", "--samples", "2000"]),
        (["--samples", "2000", "--system=my.py:make"], ["system", "my.py:make", "--samples", "2000"]),
        (["--mechanism", "laplace", "--epsilon", "1"], ["mechanism", "laplace", "--epsilon", "1"]),
        (["--run", "r", "--initial"], ["run", "r", "--initial"]),
        (["--mechanism", "prs", "--epsilon", "2", "--run", "r"], ["run", "r", "--mechanism", "prs", "--epsilon", "2"]),
        (["--self-test", "--only", "laplace"], ["self-test", "--only", "laplace"]),
        (["--one-run", "r", "--channels", "gradient"], ["one-run", "r", "--channels", "gradient"]),
        (
            ["--flower", "app.py:app", "--pair", "one record removed"],
            ["flower", "app.py:app", "--pair", "one record removed"],
        ),
        (["--flower-one-run", "central-dp", "--canaries", "50"], ["flower-one-run", "central-dp", "--canaries", "50"]),
        (["--ldp", "pure-ldp:DE", "--setting", "k=4"], ["ldp", "pure-ldp:DE", "--setting", "k=4"]),
        (["--nvflare", "m.py:F"], ["nvflare", "m.py:F"]),
        (
            ["--mechanism", "laplace", "--epsilon", "1", "--adversarial-model", "--pairs", "5:15"],
            ["adversarial-model", "laplace", "--epsilon", "1", "--pairs", "5:15"],
        ),
        (["--run", "r", "--adversarial-model"], ["adversarial-model", "--run", "r"]),
        (
            ["--adversarial-model", "--run", "r", "--mechanism", "laplace", "--epsilon", "1"],
            ["adversarial-model", "laplace", "--run", "r", "--epsilon", "1"],
        ),
        (
            ["--mechanism", "laplace", "--adversarial-curve", "--epsilons", "1"],
            ["adversarial-curve", "laplace", "--epsilons", "1"],
        ),
        (["--self", "--samples", "200"], ["self-test", "--samples", "200"]),  # an abbreviation argparse took
        (["--mechanism", "-1", "--epsilon", "1"], ["mechanism", "-1", "--epsilon", "1"]),  # a value, as argparse
        # the flag form took every audit option and ignored those its mode did not use: so does the rewrite
        (
            [
                "--mechanism",
                "laplace",
                "--epsilon",
                "1",
                "--compositions",
                "--mechanism-samples",
                "200",
                "--search-trials",
                "1",
                "--pairs",
                "5:15",
                "9.7:9.9",
                "--no-progress",
                "--engine=ray",
            ],
            ["mechanism", "laplace", "--epsilon", "1", "--no-progress"],
        ),
        (
            ["--self-test", "--samples", "200", "--epsilon", "2", "--white-box", "--only", "laplace"],
            ["self-test", "--samples", "200", "--only", "laplace"],
        ),
        (["system", "--system"], ["system", "--system"]),  # the subcommand form is argparse's to read
        (["-h"], ["-h"]),
    ],
)
def test_the_mode_flags_become_the_subcommand_they_name(old, new):
    assert rewrite(old) == new


@pytest.mark.parametrize(
    "old, says",
    [
        (["--mechanism", "laplace", "--epsilon", "1", "--self-test"], "give exactly one of"),
        (["--samples", "200"], "name what to audit"),
        (["--sytem", "x"], "unrecognized arguments: --sytem (did you mean pgc audit system?)"),
        (["--system", "x", "--adversarial-model"], "--system takes --adversarial"),
        (["--mechanism", "laplace", "--adversarial-model", "--adversarial-curve"], "give one of"),
        (["--run", "r", "--adversarial-curve"], "--adversarial-curve works with --mechanism"),
        (["--one-run", "r", "--adversarial-model"], "audit a mechanism or a run"),
        (["--mechanism", "laplace", "--samples", "auto"], "works with --system"),
        (["--system"], "argument --system: expected one argument"),
        (["--system", "--samples", "200"], "argument --system: expected one argument"),
        # an option the named audit does not take is still checked, as the flag form checked it
        (["--mechanism", "laplace", "--pair", "x"], "--pair goes with --system, --flower or --nvflare"),
        (["--ldp", "a:b", "--adversarial"], "--secrets and --adversarial go with --system"),
        (["--system", "x", "--datasets", "a", "b"], "--datasets goes with --flower"),
        (["--mechanism", "laplace", "--address", "127.0.0.1:6379"], "--address is only for --engine ray"),
        (["--mechanism", "laplace", "--engine", "dask"], "argument --engine: invalid choice: 'dask'"),
        (["--mechanism", "laplace", "--pairs", "9.5..10.1"], "a range LO..HI in --pairs needs --adversarial-model"),
        (["--mechanism", "laplace", "--compositions", "1"], "--compositions must be integers >= 2"),
        (["--self-test", "--trial", "abc"], "argument --trial: invalid int value: 'abc'"),
        (["--self-test", "--delta", "2"], "--delta must lie in [0, 1)"),
        (["--self-test", "--mechanism-samples", "50"], "at least 100 samples per side"),
        (["--system", "x", "--secrets", "1"], "argument --secrets: expected 2 arguments"),
    ],
)
def test_the_mode_flags_keep_their_refusals(old, says):
    with pytest.raises(UserError, match=re.escape(says)):
        rewrite(old)


def test_the_mode_flags_are_hidden_from_help_but_known_to_the_parser():
    parser = argparse.ArgumentParser(prog="pgc audit")
    AuditCommand().add_arguments(parser)
    text = parser.format_help()
    assert "--system" not in text.replace("--system SPEC", "") and "adversarial-model" in text
    assert {"--system", "--mechanism", "--run", "--self-test", "--adversarial-model"} <= set(
        parser._option_string_actions
    )


def test_a_subcommands_own_option_is_not_read_as_an_abbreviated_mode_flag(tmp_path):
    args = _parse(["system", "toy-laplace-count", "--adversarial", "--out", str(tmp_path / "a.json")])
    assert args.adversarial is True and args.system == "toy-laplace-count"


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="pgc audit")
    AuditCommand().add_arguments(parser)
    return parser.parse_args(argv)


@pytest.mark.parametrize(
    "argv, mode",
    [
        (["system", "x"], "system"),
        (["flower", "m:a"], "flower"),
        (["ldp", "a:b"], "ldp"),
        (["nvflare", "m:f"], "nvflare"),
        (["mechanism", "laplace"], "mechanism"),
        (["run", "r"], "run"),
        (["one-run", "r"], "one_run"),
        (["flower-one-run", "local-dp"], "flower_one_run"),
        (["self-test"], "self_test"),
        (["adversarial-model", "laplace"], "adversarial"),
        (["adversarial-model", "--run", "r"], "run"),
        (["adversarial-curve", "laplace"], "adversarial_curve"),
    ],
)
def test_each_subcommand_runs_the_audit_mode_the_result_names(argv, mode):
    args = _parse(argv)
    assert args._audit.mode_of(args) == mode


@pytest.mark.parametrize(
    "argv, says",
    [
        (["adversarial-model"], "give a MECHANISM"),
        (["run", "r", "--pairs", "9.5..10.1"], "needs a crafted model"),
        (["run", "r", "--compositions", "1"], "--compositions must be integers >= 2"),
        (["mechanism", "laplace", "--address", "x"], "unrecognized"),
        (["run", "r", "--address", "127.0.0.1:6379"], "--address is only for --engine ray"),
        (["mechanism", "laplace", "--delta", "1"], "--delta must lie in [0, 1)"),
    ],
)
def test_a_subcommand_refuses_what_makes_no_sense(argv, says, capsys):
    try:
        args = _parse(argv)
    except SystemExit:
        assert says in capsys.readouterr().err
        return
    with pytest.raises(UserError, match=re.escape(says)):
        args._audit.mode_of(args)


def _result(path) -> dict:
    """The result file without its timings and its command line (as text and as arguments: the one way the two forms
    differ)."""

    def kept(x):
        if isinstance(x, dict):
            return {
                k: kept(v) for k, v in x.items() if not k.endswith("time_s") and k not in ("timings", "command", "argv")
            }
        return [kept(v) for v in x] if isinstance(x, list) else x

    return kept(json.loads(path.read_text()))


def test_the_flag_form_and_the_subcommand_write_the_same_result(tmp_path, capsys):
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    assert (
        main(
            [
                "audit",
                "--mechanism",
                "laplace",
                "--epsilon",
                "2",
                "--samples",
                "3000",
                "--no-progress",
                "--out",
                str(old),
            ]
        )
        == 0
    )
    assert (
        main(
            ["audit", "mechanism", "laplace", "--epsilon", "2", "--samples", "3000", "--no-progress", "--out", str(new)]
        )
        == 0
    )
    assert _result(old) == _result(new) and _result(new)["kind"] == "mechanism-audit"
    old, new = tmp_path / "s-old.json", tmp_path / "s-new.json"
    assert (
        main(["audit", "--system", "toy-laplace-count", "--samples", "2000", "--no-progress", "--out", str(old)]) == 0
    )
    assert main(["audit", "system", "toy-laplace-count", "--samples", "2000", "--no-progress", "--out", str(new)]) == 0
    assert _result(old) == _result(new) and _result(new)["kind"] == "system-audit"


def test_a_refusal_is_one_line_on_stderr_with_exit_code_2(tmp_path, capsys):
    out = tmp_path / "a.json"
    for argv in (
        ["audit"],
        ["audit", "nosuch"],
        ["audit", "system"],
        ["audit", "system", "x", "--bogus"],
        ["audit", "mechanism", "laplace", "--mechanism-samples", "200"],
        ["audit", "--sytem", "x"],
        ["audit", "--mechanism", "laplace", "--self-test"],
    ):
        try:
            code = main([*argv, "--out", str(out)])
        except SystemExit as exc:  # argparse exits itself
            code = exc.code
        err = capsys.readouterr().err.strip()
        assert code == 2 and len(err.splitlines()) == 1 and "error:" in err and "usage:" not in err, (argv, err)
        assert not out.exists()


def test_without_out_the_result_is_named_by_the_audit(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["audit", "system", "toy-laplace-count", "--samples", "2000", "--no-progress"]) == 0
    (written,) = (tmp_path / "runs" / "audit").glob("*.json")
    assert re.fullmatch(r"system-\d{8}-\d{6}(-\d+)?\.json", written.name)
