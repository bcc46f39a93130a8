"""How a certified test is chosen from the training split: the projection that ranks the statistics
(:func:`projector`) and the selection that may read the training rates as they are where nothing projects above 0
(:func:`select_test`). Used by :func:`audit.certification.tester.fit_candidate`; sees only training data."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

from audit.certification.bounds import FloatArray
from audit.certification.curves import curve_projection
from audit.statistics.selection import Aim, choose_threshold, in_sample_projection, select_statistic
from pgc.contracts import Statistic

TIE_MARGIN = 0.01  # a later (more complex) candidate must beat the current one by 1% to replace it

# a row judged on its privacy profile ranks its statistics lexicographically: by the projected ε excess over the
# profile where one projects a violation, then by the threshold test's projected ε, weighted this little (far below
# any excess a certificate resolves) so that it decides only among statistics that project no excess
PROFILE_TIE_WEIGHT = 1e-6


def projector(
    n_cert: int,
    alpha: float,
    delta: float,
    two_sided_rates: bool,
    curve_alpha: float | None,
    profile: tuple[tuple[float, float], ...] | None,
    plug_in: bool = False,
) -> Callable[[FloatArray, FloatArray, bool], tuple[float, ...]]:
    """The selection's projection of one statistic's scores on the selection half: the threshold test's
    (threshold, α share, projected ε) (:func:`choose_threshold`), and with a ``curve_alpha`` (a row with a curve)
    the curve test's threshold and its ranking value — the projected μ bound of a μ-GDP claim, or for a claimed
    privacy ``profile`` the projected ε excess over it where positive, ties broken by the threshold test's ε
    (:data:`PROFILE_TIE_WEIGHT`). The last entry ranks the statistics (:func:`select_statistic`). A profile claim
    ranked by the threshold test alone let a Gaussian scale statistic or the learned classifier win with a tail
    event and miss shuffled batches accounted as Poisson that the system's own likelihood ratios catch
    (results/power/privacy-profiles.json: 16 of 20 flagged so, 18 of 20 ranked by the excess). ``plug_in``: the
    threshold test's training rates read at :data:`audit.statistics.selection.PLUG_IN_LEVEL` (a row without a curve
    only)."""
    assert not (plug_in and curve_alpha is not None), "a curve test is chosen at the selection's own levels"

    def project(s_pos: FloatArray, s_neg: FloatArray, held_out_ranking: bool) -> tuple[float, ...]:
        threshold_test = choose_threshold(
            s_pos, s_neg, n_cert, alpha, delta, two_sided_rates, held_out_ranking, plug_in
        )
        if curve_alpha is None:
            return threshold_test
        curve_threshold, projected = curve_projection(s_pos, s_neg, n_cert, curve_alpha, profile)
        if profile is not None:
            projected = max(projected, 0.0) + PROFILE_TIE_WEIGHT * threshold_test[2]
        return (*threshold_test, curve_threshold, projected)

    return project


def select_test(
    statistics: Sequence[Statistic],
    halves: tuple[FloatArray, FloatArray, FloatArray, FloatArray],
    aim: Aim,
    curve_alpha: float | None,
    profile: tuple[tuple[float, float], ...] | None,
    applied: list[Statistic],
) -> tuple[Any, Callable[[FloatArray, FloatArray, bool], tuple[float, ...]], Aim]:
    """(the chosen statistic as :func:`select_statistic` returns it, the projection it was chosen by, the aim it was
    chosen at: ``aim`` itself, or with ``plug_in`` where the training rates were read as they are) for the fit and
    selection ``halves`` (fit_p, fit_n, sel_p, sel_n) and the certification's ``aim``. Where no
    statistic of a row without a curve projects above 0 at the selection's levels and the chosen statistic's test is
    the trivial event (not even its best in-sample projection is above 0), the selection is made again with
    every training rate at :data:`audit.statistics.selection.PLUG_IN_LEVEL`: the test the training releases favour is
    certified instead of the trivial event (results/catalogue/plug-in-fallback/); the candidate's projected ε stays 0,
    so a search ranks it as before."""
    remembered = [_FittedOnce(statistic) for statistic in statistics]  # the second pass refits nothing
    for plug_in in (False, True):
        at = replace(aim, plug_in=plug_in)
        project = projector(at.n_cert, at.alpha, at.delta, at.two_sided, curve_alpha, profile, plug_in)
        screen = None if curve_alpha is not None else partial(_screen, aim=at)
        chosen = select_statistic(remembered, *halves, project, TIE_MARGIN, None if plug_in else applied, screen)
        if chosen is None or screen is None or chosen[4][-1] > 0.0 or screen(chosen[2], chosen[3]) > 0.0:
            break  # a test was chosen: one projecting above 0, or a real event whose held-out projection is 0
    return chosen, project, at


class _FittedOnce:
    """A statistic whose fit runs once: a second selection on the same fit halves gets the first fit's scorer (a
    statistic's fit depends only on the halves it is given). Every other attribute is the statistic's own."""

    def __init__(self, statistic: Statistic):
        self._statistic, self._fitted = statistic, False
        self._scorer: Any = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._statistic, name)

    def fit(self, pos: FloatArray, neg: FloatArray) -> Any:
        if not self._fitted:
            self._scorer, self._fitted = self._statistic.fit(pos, neg), True
        return self._scorer


def _screen(s_pos: FloatArray, s_neg: FloatArray, aim: Aim) -> float:
    """:func:`in_sample_projection` at ``aim``."""
    return in_sample_projection(s_pos, s_neg, aim.n_cert, aim.alpha, aim.delta, aim.two_sided, aim.plug_in)
