"""``pgc bench catalogue-oracle``'s choice of the event and the pair, its standard errors and its pair filter."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from pgc.benchmarks.catalogue_oracle import algorithm_oracle, bound_table, oracle_bound, split_oracle_bound
from pgc.catalogue import BY_NAME
from pgc.cli.main import main

N = 100_000


def _events(wide: tuple[float, float], rare: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    """Two events' probabilities (P_a, P_a′): a wide one and a rare one."""
    return np.array([wide[0], rare[0]]), np.array([wide[1], rare[1]])


@pytest.mark.parametrize("complement", [False, True], ids=["event", "complement"])
def test_a_rare_event_that_looks_separated_by_chance_is_not_chosen(complement):
    """The choosing half's counts put a rare event at 330 against 200 of 10⁵ (its plug-in bound beats the wide
    event's; among thousands of events one such fluctuation is expected), the bounding half at 265 against 265 (no
    leak at all). Read at the choosing half's pessimistic bounds the wide event (P_a = 0.5, P_a′ = 0.5·e^−0.2 on
    both halves) is chosen and bounded; read as plug-in, the rare one, which bounds 0. The same where the rare
    event is the complement of a frequent one (P_a = 1 − 200/10⁵, P_a′ = 1 − 330/10⁵: the test says a′ on it)."""
    wide = (0.5, 0.5 * math.exp(-0.2))

    def rare(a: int, b: int) -> tuple[float, float]:
        return (1 - b / N, 1 - a / N) if complement else (a / N, b / N)

    chosen, fresh = _events(wide, rare(330, 200)), _events(wide, rare(265, 265))
    wide_bound = float(bound_table(*_events(wide, wide), N, 0.05).max())
    assert float(bound_table(*chosen, N, 0.05)[:, 1].max()) > wide_bound  # the plug-in choice prefers the rare one
    assert split_oracle_bound(chosen, fresh, N, 0.05) == 0.0
    pessimistic = split_oracle_bound(chosen, fresh, N, 0.05, draws=N)
    assert 0.9 * wide_bound <= pessimistic <= wide_bound and pessimistic > 0.15


def test_the_standard_error_is_the_bounding_half_sampling_spread():
    """The bound of one event (P_a = 0.05, P_a′ = 0.04) at 10⁵ per side, its probabilities re-drawn 400 times
    from 2·10⁵ outputs per side: the spread of the bounds matches the stated standard error within 20 % (the
    spread's own relative error at 400 draws is about 3.5 %: a false failure far below 1e-6)."""
    p_a, p_b, draws = 0.05, 0.04, 200_000
    known = (np.array([p_a]), np.array([p_b]))
    stated = oracle_bound(known, known, N, 0.05, fresh_draws=draws).standard_error
    rng = np.random.default_rng(11)
    bounds = [
        split_oracle_bound(known, (rng.binomial(draws, [p_a]) / draws, rng.binomial(draws, [p_b]) / draws), N, 0.05)
        for _ in range(400)
    ]
    assert 0.8 * stated < float(np.std(bounds)) < 1.2 * stated


def test_one_pair_alone_gives_the_numbers_it_gets_among_all():
    """Each pair draws from its own child of the algorithm's seed, so ``--pairs`` changes nothing of a pair's
    bounds; the best pair's bound is the largest of the pairs'."""
    algorithm = BY_NAME["NoisyHist2"]
    every = algorithm_oracle(algorithm, [1_000, 5_000], 20_000, 0.05, np.random.SeedSequence(3))
    alone = algorithm_oracle(algorithm, [1_000, 5_000], 20_000, 0.05, np.random.SeedSequence(3), ["one below"])
    assert list(alone.pairs) == ["one below"]
    assert alone.pairs["one below"] == every.pairs["one below"]
    for n, pair in every.best_pair.items():
        assert every.bound[n] == every.pairs[pair].bound[n] == max(p.bound[n] for p in every.pairs.values())
    assert every.bound_standard_error == {
        m: every.pairs[every.best_pair[m]].bound_standard_error[m] for m in every.bound
    }


def test_an_unknown_pair_is_a_clear_error(tmp_path, capsys):
    out = tmp_path / "oracle.json"
    argv = ["bench", "catalogue-oracle", "--algorithms", "SVT3", "--pairs", "all abvoe", "--out", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "SVT3 has no pair 'all abvoe'" in err and "all above" in err
    assert not out.exists()


def test_the_command_line_writes_bounds_with_their_errors(tmp_path, capsys):
    out = tmp_path / "oracle.json"
    argv = ["bench", "catalogue-oracle", "--algorithms", "SVT5", "--pairs", "one above rest below"]
    argv += ["--totals", "1000", "--draws", "4000", "--out", str(out)]
    assert main(argv) == 0
    written = json.loads(out.read_text())
    assert "--pairs 'one above rest below'" in written["command"]
    (row,) = written["algorithms"]
    assert list(row["pairs"]) == ["one above rest below"]
    assert row["bound"]["1000"] > 1.0 and 0.0 < row["bound_standard_error"]["1000"] < row["bound"]["1000"]
    assert " ± " in capsys.readouterr().out
