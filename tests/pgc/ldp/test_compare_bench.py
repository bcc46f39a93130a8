"""scripts/compare_ldp_bench.py: two bench runs cell by cell."""

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def _script():
    spec = importlib.util.spec_from_file_location("compare_ldp_bench", ROOT / "scripts/compare_ldp_bench.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    return script


def test_a_cell_that_lost_more_than_the_tolerance_is_named(tmp_path, capsys):
    data = json.loads((ROOT / "results/ldp/bench.json").read_text())
    cell = data["cells"][0]
    cell["epsilon_lower_bound"] *= 0.97
    data["cells"] = data["cells"][:-1]  # one cell missing from the second run
    (tmp_path / "second.json").write_text(json.dumps(data))
    script = _script()
    assert script.main([str(ROOT / "results/ldp/bench.json"), str(tmp_path / "second.json")]) == 0
    out = capsys.readouterr().out
    name = f"{cell['library']}:{cell['protocol']} k={cell['k']} ε={cell['epsilon']:g} (lost)"
    assert f"identical ε_LB: {len(data['cells']) - 1}; higher: 0; lower by more than 2%: 1" in out and name in out
    assert "only in the second: none" in out and "only in the first: pure-ldp:PCS k=100 ε=8" in out
    assert (
        script.main([str(ROOT / "results/ldp/bench.json"), str(tmp_path / "second.json"), "--tolerance", "0.05"]) == 0
    )
    assert "lower by more than 5%: 0" in capsys.readouterr().out
    assert script.main([str(tmp_path / "missing.json"), str(tmp_path / "second.json")]) == 2
    assert "no bench result" in capsys.readouterr().err
    with pytest.raises(SystemExit) as refused:
        script.main([str(tmp_path / "second.json"), str(tmp_path / "second.json"), "--tolerance", "-0.1"])
    assert refused.value.code == 2 and "--tolerance must lie in [0, 1)" in capsys.readouterr().err
