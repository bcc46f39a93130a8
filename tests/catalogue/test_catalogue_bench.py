"""A tiny ``pgc bench catalogue`` run: two algorithms, a small total, one seed; a valid JSON result and table."""

import argparse
import json

import pytest

from pgc.benchmarks import catalogue as bench
from pgc.errors import UserError


def _args(tmp_path, *extra):
    p = argparse.ArgumentParser()
    bench.add_arguments(p)
    return p.parse_args(["--total", "6000", "--seeds", "0", "--out", str(tmp_path / "c.json"), *extra])


def test_tiny_bench_writes_a_valid_result(tmp_path, capsys):
    args = _args(tmp_path, "--algorithms", "NoisyHist2", "TruncatedGeometric")
    assert bench.run(args) == 0
    result = json.loads((tmp_path / "c.json").read_text())
    assert result["complete"] and [c["algorithm"] for c in result["cells"]] == ["NoisyHist2", "TruncatedGeometric"]
    for cell in result["cells"]:
        ours, first, sniper = cell["ours"], cell["ours_first_pair"], cell["dpsniper"]
        assert ours["pairs"] == 4 and ours["per_pair_total"] == 1500 and len(ours["per_pair"]) == 4
        assert first["samples_per_side"] + first["train_per_side"] <= 6000
        assert sniper["releases_per_side"] <= 6000 and sniper["pair"] in ours["per_pair"]
    s = result["summary"]
    assert s["broken"] == 1 and s["correct"] == 1
    noisy = s["algorithms"][0]  # NoisyHist2 is 10-DP where it claims 0.1: both tools flag it even here
    assert noisy["ours_flags"] is True and noisy["dpsniper_flags"] is True and noisy["ours_holm_rejected"] == [True]
    assert "broken flagged: ours 1/1" in capsys.readouterr().out
    assert "| NoisyHist2 | yes |" in (tmp_path / "c.md").read_text()
    again = bench.run(_args(tmp_path, "--algorithms", "NoisyHist2", "TruncatedGeometric", "--resume"))
    assert again == 0 and json.loads((tmp_path / "c.json").read_text())["cells"] == result["cells"]


def test_unknown_algorithm_and_small_total_are_user_errors(tmp_path):
    with pytest.raises(UserError, match="unknown algorithm"):
        bench.run(_args(tmp_path, "--algorithms", "SVT9"))
    with pytest.raises(UserError, match="fewer than 100"):
        bench.certification_size(1050, 0.25, 1000)
    assert not (tmp_path / "c.json").exists()
