"""The active attacker's layout family: exact Laplace Bayes accuracy, the crafted θ, the search, the CLI."""

import json
import math

import numpy as np
import pytest

from attacks.a3c.active import laplace_layout_accuracy
from attacks.a3c.layout import (
    QUICK_LAYOUT,
    laplace_bayes_accuracy,
    layout_coordinates,
    layout_theta,
    search_layout,
    theta_from_layout_vector,
    vector_size,
)
from pgc.a3c.model import SLICE_VALUE
from pgc.cli.main import main


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 3.0])
def test_opposite_points_reach_the_known_laplace_optimum(epsilon):
    # two classes at ±C/2 on one coordinate: the Bayes accuracy is 1 − ½·e^{−ε/2}
    acc = laplace_bayes_accuracy([np.array([[1.0]]), np.array([[-1.0]])], epsilon)
    assert acc == pytest.approx(1 - 0.5 * math.exp(-epsilon / 2), abs=1e-3)


def test_identical_classes_give_chance_and_splitting_costs_accuracy():
    same = np.array([[0.3, -0.2], [0.1, 0.6]])
    assert laplace_bayes_accuracy([same, same, same], 1.0) == pytest.approx(1 / 3, abs=1e-9)
    # the same L1 distance split over two coordinates is worth less than on one
    split = laplace_bayes_accuracy([np.array([[0.5, 0.5]]), np.array([[-0.5, -0.5]])], 1.0)
    assert split < 1 - 0.5 * math.exp(-0.5) - 0.05


def test_diamond_agrees_with_the_monte_carlo_layout_accuracy():
    exact = laplace_bayes_accuracy([np.array([[1.0, 0.0]]), np.array([[-1.0, 0.0]]), np.array([[0.0, 1.0]])], 1.0)
    mc = laplace_layout_accuracy("diamond", 1.0, samples=100_000, seed=3)  # standard error ≈ 0.0016
    assert exact == pytest.approx(mc, abs=0.008)  # 5 standard errors: false failure < 1e-6


def test_mixture_classes_lie_between_their_components():
    # a class spread over two points is harder to tell from the others than one sitting at either point
    a, b = np.array([[1.0, 0.0]]), np.array([[-1.0, 0.0]])
    mixed = np.array([[0.0, 1.0], [1.0, 0.0]])
    assert laplace_bayes_accuracy([a, b, mixed], 1.0) < laplace_bayes_accuracy([a, b, np.array([[0.0, 1.0]])], 1.0)


def test_layout_theta_gain_scales_the_detector_gradient_not_the_value():
    rng = np.random.default_rng(0)
    k = rng.normal(size=4)
    w = rng.normal(size=(2, 4))
    plain = layout_theta(k, -k, w, [2.0, 1.0], [0.0, 0.0])
    gained = layout_theta(k, -k, w, [2.0, 1.0], [0.0, -1.0])
    states = rng.normal(size=(50, 4))

    def value(theta):
        common = theta[:64].reshape(16, 4)
        return np.maximum(states @ common.T, 0.0) @ theta[SLICE_VALUE]

    np.testing.assert_allclose(value(plain), value(gained), rtol=1e-12)
    assert layout_coordinates(2) == [SLICE_VALUE.start + 2, SLICE_VALUE.start + 3]
    assert theta_from_layout_vector(np.ones(vector_size(2)), 2).shape == (112,)


def test_bad_input_is_refused():
    with pytest.raises(ValueError):
        laplace_bayes_accuracy([np.zeros((1, 1)), np.zeros((1, 1))], 0.0)
    with pytest.raises(ValueError):
        laplace_bayes_accuracy([np.zeros((1, 1)), np.zeros((1, 2))], 1.0)
    with pytest.raises(ValueError):
        laplace_bayes_accuracy([np.zeros((1, 3)), np.zeros((1, 3))], 1.0)
    with pytest.raises(ValueError):
        layout_theta(np.ones(4), -np.ones(4), [np.zeros(4)], [1.0])
    with pytest.raises(ValueError):
        search_layout([5.0, 5.0], 1.0)
    with pytest.raises(ValueError):
        search_layout([5.0, 15.0], math.inf)


def test_quick_layout_search_puts_two_candidates_on_opposite_points():
    res = search_layout([5.0, 15.0], 1.0, settings=QUICK_LAYOUT, seed=0)
    assert res.axes == 1 and res.theta.shape == (112,)
    (m5,), (m15,) = res.means
    assert m5 * m15 < 0 and min(abs(m5), abs(m15)) > 0.8  # each near ±C/2 on the detector coordinate
    assert res.value > 0.67  # Laplace's optimum at ε = 1 is 0.697; the audit family's split layout gives ≈ 0.62


def test_cli_active_quick_search_beats_the_split_layout(tmp_path, no_result_parsing):
    out = tmp_path / "active.json"
    rc = main(
        [
            "attack",
            "--active",
            "--quick-search",
            "--candidates",
            "5",
            "15",
            "--mechanism",
            "laplace",
            "--epsilon",
            "1",
            "--targets",
            "400",
            "--budget",
            "40",
            "--attackers",
            "likelihood",
            "--seed",
            "2",
            "--out",
            str(out),
            "--no-progress",
        ]
    )
    assert rc == 0
    data = json.loads(out.read_text())
    assert data["mode"] == "active" and data["active"]["search"]["objective"] == "laplace-layout"
    assert data["active"]["laplace_best_layout"]["accuracy"] == pytest.approx(0.697, abs=0.005)
    assert (tmp_path / "active-crafted-theta.pt").is_file()
    row = data["rows"][0]
    # exact 95 % CI: a correct mechanism stays below its ceiling, and the crafted layout lifts the
    # attack clearly above chance (expected ≈ 0.69 at 400 targets; the lower end fails with p < 1e-4)
    assert row["ci"][0] > 0.6 and row["verdict"] == "ok"


def test_quick_search_without_active_exits_2(tmp_path):
    out = tmp_path / "x.json"
    with pytest.raises(SystemExit) as exc:  # CLI errors return 2, argparse errors exit 2 themselves
        raise SystemExit(main(["attack", "--model", "init:0", "--quick-search", "--out", str(out), "--no-progress"]))
    assert exc.value.code == 2 and not out.exists()


def test_layout_gap_measures_a_saved_theta_and_refuses_bad_input(tmp_path, capsys):
    from attacks.a3c.layout import _main, layout_gap
    from pgc.a3c.model import save_checkpoint

    theta = search_layout([5.0, 15.0], 1.0, settings=QUICK_LAYOUT, seed=0).theta
    path = tmp_path / "theta.pt"
    save_checkpoint(theta, path)
    out = tmp_path / "gap.json"
    assert _main([str(path), "--candidates", "5", "15", "--episodes", "200", "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    acc = data["bayes_accuracy"]
    assert acc["best_layout"] == pytest.approx(1 - 0.5 * math.exp(-0.5), abs=1e-3)
    assert acc["measured"] <= acc["best_layout"] + 1e-3 and acc["measured"] > 0.65
    assert data["command"].startswith("python -m attacks.a3c.layout")
    direct = layout_gap(theta, [5.0, 15.0], 1.0, episodes=200, seed=0)
    assert direct.bayes_accuracy.to_dict() == acc  # same seed, same numbers
    bad = tmp_path / "bad.json"
    assert _main([str(tmp_path / "missing.pt"), "--candidates", "5", "15", "--out", str(bad)]) == 2
    assert _main([str(path), "--candidates", "5", "5", "--out", str(bad)]) == 2
    assert _main([str(path), "--candidates", "5", "15", "--epsilon", "0", "--out", str(bad)]) == 2
    assert not bad.exists() and "error:" in capsys.readouterr().err


def test_length_map_bound_reaches_the_layout_for_distinct_fates_and_chance_for_equal_ones():
    from attacks.a3c.layout import length_layout_bound

    rng = np.random.default_rng(0)
    apart = [np.full(300, 200), rng.integers(40, 60, size=300)]
    assert length_layout_bound(apart, 1.0) == pytest.approx(1 - 0.5 * math.exp(-0.5), abs=2e-3)
    same = rng.integers(50, 200, size=600)
    assert length_layout_bound([same[:300], same[300:]], 1.0) < 0.56  # two halves of one distribution
    three = [np.full(300, 200), rng.integers(110, 130, size=300), rng.integers(40, 60, size=300)]
    assert length_layout_bound(three, 1.0) == pytest.approx(0.4945, abs=3e-3)  # the diamond
