"""A tiny ``pgc bench catalogue`` run: two algorithms, a small total, one seed; a valid JSON result and table."""

import argparse
import json

import pytest

from audit.engine.pair_search import NAMED_PAIR_RACE_SHARE
from pgc.benchmarks import catalogue as bench
from pgc.catalogue import catalogue_system
from pgc.errors import UserError


def _args(tmp_path, *extra):
    p = argparse.ArgumentParser()
    bench.add_arguments(p)
    return p.parse_args(["--total", "6000", "--seeds", "0", "--out", str(tmp_path / "c.json"), *extra])


@pytest.mark.slow
def test_tiny_bench_writes_a_valid_result(tmp_path, capsys):
    args = _args(tmp_path, "--algorithms", "NoisyHist2", "TruncatedGeometric")
    assert bench.run(args) == 0
    result = json.loads((tmp_path / "c.json").read_text())
    assert result["complete"] and [c["algorithm"] for c in result["cells"]] == ["NoisyHist2", "TruncatedGeometric"]
    for cell in result["cells"]:
        ours, first, sniper = cell["ours"], cell["ours_first_pair"], cell["dpsniper"]
        # 4 pairs raced on max(search_samples, n // floor) each, then the training split, the certification
        pairs, split = catalogue_system(cell["algorithm"]).canaries(), ours["split"]
        assert ours["pairs"] == 4 and ours["pair"] in pairs and ours["samples_per_side"] == split["samples"]
        assert split["search"] == 4 * max(split["search_samples"], split["samples"] // NAMED_PAIR_RACE_SHARE)
        assert split["search"] + split["train"] + split["samples"] == ours["releases_per_side"] <= 6000
        assert first["samples_per_side"] + first["train_per_side"] <= 6000
        assert sniper["releases_per_side"] <= 6000 and sniper["pair"] in pairs
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
    with pytest.raises(UserError, match="fewer than 100"):
        bench.pair_choice_split(1100, 16, 0.1)
    assert not (tmp_path / "c.json").exists()


def test_pair_choice_split_counts_every_release():
    """The search, the training split and the certification fit the total, and a larger total certifies more."""
    for pairs, rule in ((4, "quarter"), (16, "quarter"), (16, "auto"), (4, "half")):
        s = bench.pair_choice_split(100_000, pairs, 0.1, rule)
        assert s.search == pairs * max(s.search_samples, s.samples // NAMED_PAIR_RACE_SHARE)
        assert s.search + s.train + s.samples <= 100_000
        bigger = bench.pair_choice_split(100_000 + 1_000, pairs, 0.1, rule)
        assert bigger.samples > s.samples
    s = bench.pair_choice_split(100_000, 16, 0.1, "auto")
    assert s.train >= 20_000  # the audit's rule for a claimed ε below 0.5
