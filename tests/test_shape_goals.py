"""scripts/shape_goals.py: the shape goals' typed result, the test time read from a CI log, bad input refused."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pgc.schemas as schemas

ROOT = Path(__file__).resolve().parents[1]


def _script():
    spec = importlib.util.spec_from_file_location("pgc_scripts_shape_goals", ROOT / "scripts" / "shape_goals.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_result_is_typed_and_reads_the_test_time_from_the_logs_last_summary(tmp_path):
    log = tmp_path / "ci.log"
    log.write_text("setup: ok\n3 passed in 1.00s\n....\n1412 passed, 71 warnings in 437.80s (0:07:17)\nexit 0\n")
    out = tmp_path / "goals.json"
    assert _script().main(["--runs", "1", "--ci-log", str(log), "--out", str(out)]) == 0
    result = schemas.load(json.loads(out.read_text()))
    assert isinstance(result, schemas.ShapeGoals) and result.extra == {}
    assert (result.tests_passed, result.test_seconds) == (1412, 437.8) and len(result.help_seconds) == 1
    assert result.widest_subcommand_options <= 25 and result.goals_met


def test_a_failed_or_slow_run_misses_the_goals(tmp_path):
    for summary in ("2 failed, 1410 passed in 400.00s", "1412 passed in 481.50s"):
        log = tmp_path / "ci.log"
        log.write_text(summary + "\n")
        assert _script().main(["--runs", "1", "--ci-log", str(log), "--out", str(tmp_path / "g.json")]) == 1
        assert not json.loads((tmp_path / "g.json").read_text())["goals_met"]


def test_a_log_without_a_summary_or_a_missing_log_is_refused_in_one_line(tmp_path, capsys):
    (tmp_path / "empty.log").write_text("no tests here\n")
    for log in ("empty.log", "missing.log"):
        code = _script().main(["--ci-log", str(tmp_path / log), "--out", str(tmp_path / "g.json")])
        err = capsys.readouterr().err.strip()
        assert code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert not (tmp_path / "g.json").exists()
