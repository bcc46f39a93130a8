"""The attacks on the thesis' systems: the grid world's constraints, the agent, Pan et al.'s map recovery,
the membership attackers' pieces, the CLI and the report's "Published claims" section."""

from __future__ import annotations

import json

import numpy as np
import pytest

from attacks.map_recovery import agreement, distances_to_goal, evidence, recovery_rates
from attacks.membership import attack_accuracy, inverted_features, top_features
from pgc.dprl import gridworld
from pgc.dprl.oneparam import system as oneparam_system


def rng(seed=0):
    return np.random.default_rng(np.random.SeedSequence(seed))


def open_map(h=5, w=5):
    free = np.zeros((h, w), dtype=bool)
    free[1:-1, 1:-1] = True
    return free


def test_structural_constraints():
    free = open_map()
    assert gridworld.valid_map(free)
    assert not gridworld.thick_walls(free)
    block = open_map(6, 6)
    block[2:4, 2:4] = False  # a 2×2 block of obstacles
    assert gridworld.thick_walls(block) and not gridworld.valid_map(block)
    cut = free.copy()
    cut[1:-1, 2] = False  # a wall across the map disconnects start from goal
    assert not gridworld.valid_map(cut)
    for seed in range(5):
        assert gridworld.valid_map(gridworld.random_map((7, 7), rng(seed)))


def test_observation_and_step():
    free = open_map()
    index = gridworld.observation_index(free, (1, 1))  # up, left and the three upper/left diagonals are walls
    bits = [(index >> i) & 1 for i in range(8)]
    assert bits == [0, 1, 0, 1, 0, 0, 0, 1]  # up, down, left, right, up-left, up-right, down-left, down-right
    assert gridworld.step(free, (1, 1), 0) == ((1, 1), -0.1, False)  # bump
    assert gridworld.step(free, (1, 1), 4) == ((1, 1), -0.1, False)  # stay
    assert gridworld.step(free, (3, 2), 3) == ((3, 3), 1.0, True)  # the goal


def test_an_undefended_agent_learns_the_shortest_path_and_its_run_agrees_with_the_true_map():
    free = open_map()
    settings = gridworld.TrainingSettings(episodes=400, max_steps=50)
    q, utility = gridworld.train_agent(free, settings, None, rng(1))
    assert utility["final_success"] == 1.0
    run = gridworld.greedy_trajectory(free, q, None, settings, rng(2))
    assert run[-1][2] == (3, 3) and len(run) == 4  # shortest: 4 moves
    assert agreement(free, run) == 1.0
    seen_free, walls = evidence(free.shape, run)
    assert all(free[c] for c in seen_free) and not walls


def test_bumps_reveal_walls_and_rates_count_the_right_cells():
    free = open_map()
    seen_free, walls = evidence(free.shape, [((1, 1), 0, (1, 1))])
    assert walls == {(0, 1)}
    assert distances_to_goal(free)[1, 1] == 4
    assert recovery_rates(free, free) == (1.0, 1.0)
    wrong = free.copy()
    wrong[2, 2] = False
    grr, nrr = recovery_rates(wrong, free)
    assert grr == pytest.approx(24 / 25) and nrr == pytest.approx(6 / 7)  # 9 interior cells less start and goal


def test_inverting_eq_6_2_recovers_the_phase_one_gaps():
    y = np.array([0.05, 0.1, 0.15, 0.7])
    z = oneparam_system(epsilon=0.7, k=4).release(y, 50, rng(3))["scores"]
    feats = inverted_features(z, 0.7, count=4)
    assert np.all(np.diff(feats, axis=1) <= 1e-9)  # the top scores, largest first
    assert top_features(z, 2).shape == (50, 2)


def test_attack_accuracy_interval():
    out = attack_accuracy(np.array([1, 1, 0, 0.0]), np.array([1, 0, 0, 0.0]), 0.95)
    assert out["accuracy"] == 0.75 and out["ci"][0] < 0.75 < out["ci"][1] and out["chance"] == 0.5


def test_map_recovery_cli_and_the_report(tmp_path, capsys, no_result_parsing):
    """The command writes its typed result (nothing parsed back from a dict); the report then reads it."""
    from pgc.cli.main import main

    out = tmp_path / "mr.json"
    assert (
        main(
            [
                "thesis",
                "map-recovery",
                "--size",
                "5x6",
                "--maps",
                "1",
                "--episodes",
                "150",
                "--max-steps",
                "30",
                "--generations",
                "2",
                "--defences",
                "dynamic",
                "--sees-cell",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    data = json.loads(out.read_text())
    assert data["kind"] == "thesis-map-recovery" and [r["defence"] for r in data["rows"]][:2] == ["none", "dynamic"]
    assert data["training"]["sees_cell"] is True and data["training"]["learner"] == "table"
    no_result_parsing.undo()  # the report reads its input results
    audit = tmp_path / "a.json"
    assert main(["audit", "--system", "dprl-advising", "--samples", "1000", "--no-progress", "--out", str(audit)]) == 0
    assert main(["report", str(audit), str(out), "--out", str(tmp_path / "r")]) == 0
    capsys.readouterr()
    md = (tmp_path / "r" / "report.md").read_text()
    assert "## Published claims" in md and "## Attacks on published systems" in md
    assert "advising-teacher" in md.split("## Published claims")[1].split("##")[0]
    assert "tabular Q-learning (state: cell and observation)" in md


@pytest.mark.parametrize("argv", [["--size", "3x3"], ["--size", "seven"], ["--defences", "-1"], ["--maps", "0"]])
def test_map_recovery_refuses_bad_input(argv, tmp_path):
    from pgc.cli.main import main

    with pytest.raises(SystemExit) as refused:  # argparse refuses a bad value with exit status 2
        main(["thesis", "map-recovery", *argv, "--out", str(tmp_path / "x.json")])
    assert refused.value.code == 2 and not (tmp_path / "x.json").exists()


def test_membership_cli_writes_its_typed_result(tmp_path, capsys, no_result_parsing):
    """The membership study's result is built typed and written as it is (nothing parsed back from a dict)."""
    from pgc.cli.main import main

    out = tmp_path / "m.json"
    assert main(["thesis", "membership", "--epsilons", "1", "--hidden", "16", "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["kind"] == "thesis-membership" and set(data["models"]) == {
        "train_accuracy",
        "test_accuracy",
        "members",
        "non_members",
    }
    assert [r["attacker"] for r in data["rows"]][:2] == ["ml-leaks", "label-only"]
    assert data["table_6_2_ml_leaks"]["none"] == 70.4
