"""SVTPrivacy's claim read per NVIDIA FLARE release, from fake filters carrying each release's attribute names."""

import math
from types import SimpleNamespace

import pytest

from pgc.errors import UserError
from pgc.nvflare.claims import svt_budget


def test_svt_27_reads_epsilon_eps2_and_noise_var():
    # 2.7.x: SVTPrivacy(fraction, epsilon, noise_var, gamma, tau, data_kinds, replace); eps_2 derived per call
    svt = SimpleNamespace(fraction=0.1, epsilon=0.1, noise_var=0.1, gamma=1e-5, tau=1e-6, eps_2=None, replace=True)
    budget = svt_budget(svt, 100)
    c = 10
    assert budget["n_upload"] == c
    assert budget["epsilon_threshold"] == pytest.approx(0.1)
    assert budget["epsilon_query"] == pytest.approx(0.1 * (2 * c) ** (2 / 3))
    assert budget["epsilon_release"] == pytest.approx(c * 0.1)
    assert budget["epsilon_total"] == pytest.approx(0.1 + 0.1 * (2 * c) ** (2 / 3) + 1.0)


def test_svt_29_reads_split_budget():
    svt = SimpleNamespace(
        fraction=0.1, epsilon=1.0, noise_var=0.1, epsilon_threshold=None, epsilon_query=None, epsilon_release=2.0
    )
    budget = svt_budget(svt, 100)
    assert budget["epsilon_threshold"] + budget["epsilon_query"] == pytest.approx(1.0)
    assert math.isclose(budget["epsilon_total"], 3.0)


def test_unknown_release_refused_in_one_line():
    svt = SimpleNamespace(fraction=0.1, privacy_budget=1.0)
    with pytest.raises(UserError) as err:
        svt_budget(svt, 100)
    message = str(err.value)
    assert "\n" not in message and "NVIDIA FLARE" in message and "--claim EPSILON[,DELTA]" in message


def test_svt_27_readings_say_the_selection_spends_more_than_epsilon():
    from pgc.nvflare.claims import svt_claim

    svt = SimpleNamespace(fraction=0.1, epsilon=0.1, noise_var=0.1, gamma=1e-5, tau=1e-6, eps_2=None, replace=True)
    claim, readings = svt_claim(svt, 100, None)
    assert claim.epsilon == pytest.approx(0.1 + 0.1 * 20 ** (2 / 3) + 1.0)
    assert "not epsilon" in readings[1]["why"] and "records none" in readings[3]["parameter"]
